// The located refusal of scalable vectors (TVM's SVE form) by targets that cannot lower them.
#include "tessera/ir/functor.h"
#include "tessera/ir/stmt.h"
#include "tessera/support/error.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace transform {

namespace {

// What makes `node` scalable, or "" when it is not ("a value of type float32xvscalex4").
std::string ScalableWhat(const ObjectRef& node) {
  if (IsExprKind(node->kind)) {
    const auto* e = static_cast<const ExprNode*>(node.get());
    if (e->dtype.is_scalable_vector()) return "a value of type " + e->dtype.ToString();
    if (auto* call = AsPtr<CallNode>(node); call && call->is_op("tir.vscale")) return "T.vscale()";
  } else if (auto* alloc = AsPtr<AllocateNode>(node)) {
    if (alloc->dtype.is_scalable_vector()) return "an allocation of " + alloc->dtype.ToString();
  }
  return "";
}

}  // namespace

void RefuseScalableVectors(const PrimFunc& func, const std::string& target) {
  std::string what;
  Span span;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    if (!what.empty()) return;
    what = ScalableWhat(node);
    if (what.empty()) return;
    if (IsExprKind(node->kind)) {
      span = static_cast<const ExprNode*>(node.get())->span;
    } else {
      span = static_cast<const StmtNode*>(node.get())->span;
    }
  });
  if (what.empty()) return;
  TESSERA_THROW_KIND(span.defined() ? span : func->span, ErrorKind::kBuild)
      << "scalable vectors are not supported on the " << target << " target: found " << what
      << " (scalable vectors need a target with Arm SVE, which tessera does not generate code for)";
}

void RefuseScalableVectors(const IRModule& mod, const std::string& target) {
  for (const auto& [gv, func] : mod->functions) RefuseScalableVectors(func, target);
}

}  // namespace transform
}  // namespace tessera
