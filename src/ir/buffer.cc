// Buffer construction.
#include "tessera/ir/buffer_strides.h"
#include "tessera/ir/buffer.h"

#include "tessera/support/error.h"

namespace tessera {

Buffer BufferNode::Make(Var data, DataType dtype, std::vector<Expr> shape,
                        std::vector<Expr> strides, Expr elem_offset, std::string name,
                        int data_alignment, int offset_factor, Span span) {
  if (!data || !data->pointer) {
    TESSERA_THROW_KIND(span, ErrorKind::kType) << "buffer " << name << " needs a pointer data variable";
  }
  for (const Expr& e : shape) {
    if (!e || !e->dtype.is_integer() || !e->dtype.is_scalar()) {
      TESSERA_THROW_KIND(span, ErrorKind::kType) << "buffer " << name << " shape must be scalar integers";
    }
  }
  // Fewer strides than dimensions are accepted, as TVM does (its cache_index declares
  // `strides=[1]` whatever the rank); LoweringStrides says what lowering makes of them.
  if (strides.size() > shape.size()) {
    TESSERA_THROW_KIND(span, ErrorKind::kType)
        << "buffer " << name << " has " << shape.size() << " dimensions but " << strides.size()
        << " strides";
  }
  if (!elem_offset) elem_offset = Int32(0);
  if (name.empty()) name = data->name;
  return std::make_shared<BufferNode>(std::move(data), dtype, std::move(shape), std::move(strides),
                                      std::move(elem_offset), std::move(name), data_alignment,
                                      offset_factor, std::move(span));
}

Buffer BufferNode::Decl(std::string name, DataType dtype, std::vector<Expr> shape,
                        std::string scope, Span span) {
  Var data = VarNode::MakePointer(name, dtype, std::move(scope), span);
  return Make(std::move(data), dtype, std::move(shape), {}, nullptr, std::move(name), 64, 1,
              std::move(span));
}

std::vector<Expr> LoweringStrides(const Buffer& b) {
  if (b->strides.size() == b->shape.size()) return b->strides;
  bool compact = b->strides.size() < b->shape.size();
  int64_t expect = 1;
  for (size_t k = 0; compact && k < b->strides.size(); ++k) {
    auto given = AsConstInt(b->strides[b->strides.size() - 1 - k]);
    compact = given && *given == expect;
    auto extent = AsConstInt(b->shape[b->shape.size() - 1 - k]);
    if (extent) {
      expect *= *extent;
    } else if (k + 1 < b->strides.size()) {
      compact = false;
    }
  }
  if (!compact) {
    TESSERA_THROW_KIND(b->span, ErrorKind::kValue)
        << "buffer " << b->name << " has " << b->shape.size() << " dimensions but "
        << b->strides.size()
        << " strides; fewer strides than dimensions are accepted only when they are the "
           "compact strides of the innermost dimensions";
  }
  return {};
}

const std::string& BufferNode::scope() const { return data->pointer->scope; }

}  // namespace tessera
