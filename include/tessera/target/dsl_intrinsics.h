// The DSL intrinsics declared once, as data: each entry gives what the op registry, the Python
// argument checks of S.<name> and PySim's dispatch are derived from (tessera/dsl.h holds the
// C implementation CodeGenDSL calls).
#pragma once

#include <string>
#include <vector>

namespace tessera {

/*! \brief One DSL intrinsic. */
struct DslIntrinsic {
  std::string name;    ///< S.<name>
  std::string op;      ///< the IR op, "dsl.<name>"
  std::string c_name;  ///< the tessera/dsl.h function CodeGenDSL prints ("dsl.name")
  /*! \brief The argument form, which fixes the operand and result types:
   *  "pairwise": (x, y), two vectors of one type (a scalar operand is broadcast), of a native or
   *  multiple width; the result has that type, the pairs of x then the pairs of y. */
  std::string form;
  /*! \brief Operand element types, at every width the form allows, in the order errors list. */
  std::vector<std::string> elements;
  /*! \brief Which lanes are computed: "all" (the intrinsic takes no mask). */
  std::string mask;
  /*! \brief The lane function, as PySim computes it: "add", "sub", "max", "min". */
  std::string lane_fn;
  /*! \brief Whether integer results saturate (else they wrap). */
  bool saturate = false;
  std::string doc;       ///< S.<name>.__doc__
  std::string describe;  ///< the op's description (its IR arguments)
};

/*! \brief Every intrinsic declared in the table, in declaration order. */
const std::vector<DslIntrinsic>& DslIntrinsics();

}  // namespace tessera
