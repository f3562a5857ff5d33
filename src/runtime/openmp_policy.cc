// The bounded-spin OpenMP wait policy (see openmp_policy.h).
#include "tessera/runtime/openmp_policy.h"

#include <cstdlib>
#include <mutex>
#include <string>

namespace tessera {
namespace runtime {

void ConfigureOpenMPWaitPolicy() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* user : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME"}) {
      if (std::getenv(user) != nullptr) return;  // the user's choice stands
    }
    setenv("GOMP_SPINCOUNT", std::to_string(kOpenMPSpinCount).c_str(), 0);
    setenv("KMP_BLOCKTIME", "1", 0);
  });
}

}  // namespace runtime
}  // namespace tessera
