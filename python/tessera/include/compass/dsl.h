/* The header the DSL's C includes, under the name Compass's DSL C uses (#include
 * <compass/dsl.h>), so that the generated kernels read the same whichever toolchain compiles
 * them. On the host it is tessera's implementation of the DSL's types and built-ins. */
#ifndef TESSERA_COMPASS_DSL_H_
#define TESSERA_COMPASS_DSL_H_
#include <tessera/dsl.h>
#endif
