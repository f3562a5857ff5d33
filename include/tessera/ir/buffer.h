// Buffer: a typed, shaped view of memory reached through a pointer variable.
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {

/*! \brief A multi-dimensional view of memory: data pointer, element type, shape, strides
 *  (empty means compact row-major), element offset and memory scope. */
struct BufferNode : Object {
  TESSERA_NODE_KIND(Buffer)
  Var data;
  DataType dtype;
  std::vector<Expr> shape;
  std::vector<Expr> strides;
  Expr elem_offset;
  std::string name;
  int data_alignment;
  int offset_factor;
  /*! \brief TVM's axis_separators: the axes where a new physical axis starts when the buffer
   *  is flattened (empty: one flat axis). Kept by the schedule; lowering requires it empty. */
  std::vector<int64_t> axis_separators;
  Span span;
  BufferNode(Var d, DataType t, std::vector<Expr> sh, std::vector<Expr> st, Expr off,
             std::string n, int align, int factor, Span s)
      : Object(kKind), data(std::move(d)), dtype(t), shape(std::move(sh)), strides(std::move(st)),
        elem_offset(std::move(off)), name(std::move(n)), data_alignment(align),
        offset_factor(factor), span(std::move(s)) {}
  /*! \brief `data` must be a pointer Var; elem_offset defaults to 0. */
  static Buffer Make(Var data, DataType dtype, std::vector<Expr> shape,
                     std::vector<Expr> strides = {}, Expr elem_offset = nullptr,
                     std::string name = "", int data_alignment = 64, int offset_factor = 1,
                     Span span = {});
  /*! \brief A buffer with a fresh data pointer named `name` in `scope`. */
  static Buffer Decl(std::string name, DataType dtype, std::vector<Expr> shape,
                     std::string scope = "global", Span span = {});
  /*! \brief The memory scope, from the data pointer's type. */
  const std::string& scope() const;
};

}  // namespace tessera
