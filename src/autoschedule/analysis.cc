// The block analysis the rules share, and the test for "carries no schedule".
#include <unordered_set>

#include "rules.h"
#include "tessera/autoschedule/auto_schedule.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"

namespace tessera {
namespace autoschedule {

int64_t LoopExtent(Schedule& sch, const LoopRV& loop) {
  const ForNode* f = AsPtr<ForNode>(sch.Get(loop));
  if (f == nullptr) return -1;
  const IntImmNode* e = AsPtr<IntImmNode>(f->extent);
  return e ? e->value : -1;
}

int64_t LargestDivisor(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

namespace {
struct DeferredDecomposition {
  BlockRV block;
  LoopRV loop;
  std::function<void(Schedule&, const BlockRV&)> then;
};
thread_local std::vector<DeferredDecomposition> deferred_decompositions;
thread_local std::vector<std::pair<LoopRV, std::string>> deferred_tensorizations;
}  // namespace

namespace {

/*! \brief Whether a block annotation is a schedule's (annotate, storage_align, tensorize,
 *  meta-schedule hints, pragmas) rather than an attribute of the computation that te.compute
 *  copies from its `attrs` (topi's softmax writes {"axis": 1}). */
bool IsScheduleAnnotation(const std::string& key) {
  for (const char* prefix : {"meta_schedule.", "pragma_", "software_pipeline", "tir.", "tessera.",
                             "buffer_dim_align", "warp_execution"}) {
    if (key.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

void DeferDecomposeReduction(const BlockRV& block, const LoopRV& loop,
                             std::function<void(Schedule&, const BlockRV&)> then) {
  deferred_decompositions.push_back({block, loop, std::move(then)});
}

void RunDeferredDecompositions(Schedule& sch) {
  std::vector<DeferredDecomposition> todo;
  todo.swap(deferred_decompositions);
  for (const auto& [block, loop, then] : todo) {
    if (!sch.IsValid(block) || !sch.IsValid(loop)) continue;
    std::optional<BlockRV> init;
    Try(sch, [&] { init = sch.DecomposeReduction(block, loop); });
    if (init && then) Try(sch, [&] { then(sch, *init); });
  }
  std::vector<std::pair<LoopRV, std::string>> tensorize;
  tensorize.swap(deferred_tensorizations);
  for (const auto& [loop, intrin] : tensorize) {
    if (!sch.IsValid(loop)) continue;
    Try(sch, [&] { sch.Tensorize(loop, intrin, true); });
  }
}

void DeferTensorize(const LoopRV& loop, const std::string& intrin) {
  deferred_tensorizations.emplace_back(loop, intrin);
}

bool ReadsDivided(const BlockInfo& info) {
  bool divided = false;
  for (const BufferLoadNode* load : info.loads) {
    for (const Expr& index : load->indices) {
      PostOrderVisit(index, [&](const ObjectRef& n) {
        divided = divided || AsPtr<FloorDivNode>(n) || AsPtr<FloorModNode>(n);
      });
    }
  }
  return divided;
}

bool Try(Schedule& sch, const std::function<void()>& body) {
  // On an Error, or an InternalError (a primitive's invariant failed on this step), the rule
  // gives up and the schedule is rolled back: the program stays valid.
  return sch.Attempt(body);
}

namespace {
// The buffers of a function's signature, as a set computed once per function: rules analyse
// every block, and a function may have thousands of parameters.
const std::unordered_set<const BufferNode*>& ParamBuffers(const PrimFunc& func) {
  thread_local PrimFunc cached;
  thread_local std::unordered_set<const BufferNode*> buffers;
  if (cached != func) {
    buffers.clear();
    for (const auto& [var, buf] : func->buffer_map) buffers.insert(buf.get());
    cached = func;
  }
  return buffers;
}
}  // namespace

namespace {

/*! \brief Whether `call` is a bitwise operation or a shift of integers: C's operators on the
 *  host's vector types (an instruction a vector, a few for 8-bit shifts), not a math call.
 *  Counted as calls, bitwise_and/or/xor of uint8 and int8 took the full 512-bit width meant
 *  for exp and the like instead of a stream's 256 bits (Streams: 0.154 -> 0.147 ms for
 *  bitwise_or uint8 2048^2, bench/RESULTS.md session 18). */
bool IsIntegerBits(const CallNode* call) {
  if (!(call->dtype.is_int() || call->dtype.is_uint())) return false;
  return call->is_op("tir.bitwise_and") || call->is_op("tir.bitwise_or") ||
         call->is_op("tir.bitwise_xor") || call->is_op("tir.bitwise_not") ||
         call->is_op("tir.shift_left") || call->is_op("tir.shift_right");
}

}  // namespace

BlockInfo AnalyzeBlock(Schedule& sch, const BlockRV& rv, const PrimFunc& func) {
  BlockInfo info;
  info.rv = rv;
  info.block = AsPtr<BlockNode>(sch.Get(rv));
  if (info.block == nullptr) return info;
  const BlockNode* b = info.block;
  info.name = b->name_hint;
  bool has_reduce = false;
  for (const IterVar& iv : b->iter_vars) {
    has_reduce = has_reduce || iv->iter_type == IterVarType::kCommReduce;
    const IntImmNode* e = iv->dom ? AsPtr<IntImmNode>(iv->dom->extent) : nullptr;
    info.extents.push_back(e ? e->value : -1);
  }
  info.is_reduction = has_reduce && b->init != nullptr;
  info.store = AsPtr<BufferStoreNode>(b->body);
  if (info.store != nullptr) {
    // A bool is stored in a byte: vectors of it have as many lanes as int8's (the 1-bit width
    // gave 512 lanes on AVX-512, a loop the vectorizer left scalar: isnan, any, logical_and).
    const DataType& out = info.store->buffer->dtype;
    info.output_bits = out.is_bool() ? 8 : out.bits();
    const BufferStoreNode* st = info.store;
    PostOrderVisit(st->value, [&](const ObjectRef& n) {
      if (auto* load = AsPtr<BufferLoadNode>(n)) {
        bool self = load->buffer.get() == st->buffer.get();
        if (!(self && info.is_reduction)) info.loads.push_back(load);
      } else if (auto* call = AsPtr<CallNode>(n)) {
        const OpNode* op = AsPtr<OpNode>(call->op);
        std::string name = op ? op->name : "";
        if (name == "tir.if_then_else") {
          info.has_select = true;
        } else if (name != "tir.max_value" && name != "tir.min_value" && !IsIntegerBits(call)) {
          info.has_call = true;
        }
      } else if (AsPtr<SelectNode>(n)) {
        info.has_select = true;
      }
    });
    info.writes_param = ParamBuffers(func).count(st->buffer.get()) != 0;
  }
  return info;
}

namespace {

/*! \brief Walks a function body looking for any trace of a schedule. */
class ScheduleDetector : public StmtVisitor {
 public:
  std::string why;

  void VisitStmt_(const ForNode* op) override {
    if (!why.empty()) return;
    if (op->for_kind != ForKind::kSerial) {
      why = std::string("loop ") + op->loop_var->name + " is " + ForKindName(op->for_kind);
    } else if (!op->annotations.empty()) {
      why = "loop " + op->loop_var->name + " has annotations";
    } else if (!IsConstInt(op->min, 0)) {
      why = "loop " + op->loop_var->name + " does not start at 0";
    } else if (AsPtr<SeqStmtNode>(op->body) != nullptr) {
      why = "loop " + op->loop_var->name + " holds several statements";
    }
    loops_.push_back(op);
    StmtVisitor::VisitStmt_(op);
    loops_.pop_back();
  }

  void VisitStmt_(const BlockRealizeNode* op) override {
    if (!why.empty()) return;
    const BlockNode* b = op->block.get();
    for (const Buffer& buf : b->alloc_buffers) {
      if (buf->scope() != "global") why = "buffer " + buf->name + " is in scope " + buf->scope();
    }
    for (const auto& [key, value] : b->annotations) {
      if (IsScheduleAnnotation(key)) {
        why = "block " + b->name_hint + " has the schedule annotation " + key;
      }
    }
    if (!why.empty()) return;
    if (b->iter_vars.empty() && loops_.empty() && depth_ <= 1 && !HasBlock(b->body)) {
      // An opaque computation (a te.extern body written with tir.ir_builder: the root block or
      // a block of the root) holds no block to schedule: its loops, parallel ones included,
      // are the computation as written, not a schedule. On GPU targets the automatic schedule
      // binds its parallel loops to threads (BindParallelLoops).
      return;
    }
    if (depth_ == 0) {
      // The root block: everything below it is checked.
      if (!b->iter_vars.empty()) why = "the root block has iterators";
      ++depth_;
      StmtVisitor::VisitStmt_(op);
      --depth_;
      return;
    }
    if (depth_ > 1) {
      why = "block " + b->name_hint + " is nested in another block";
      return;
    }
    if (!b->match_buffers.empty()) why = "block " + b->name_hint + " has match_buffers";
    if (loops_.empty() && IsScalarBlock(op)) {
      // A 0-d result (te.create_prim_func binds its one unit iterator to 0, without a loop).
      ++depth_;
      StmtVisitor::VisitStmt_(op);
      --depth_;
      return;
    }
    if (loops_.size() != b->iter_vars.size()) {
      why = "the loops above block " + b->name_hint + " are not one per iterator";
      return;
    }
    for (size_t i = 0; i < loops_.size(); ++i) {
      const Expr& value = op->iter_values[i];
      const IterVar& iv = b->iter_vars[i];
      bool same_extent = iv->dom && (iv->dom->extent.get() == loops_[i]->extent.get() ||
                                     ConstEq(iv->dom->extent, loops_[i]->extent));
      if (value.get() != loops_[i]->loop_var.get() || !same_extent) {
        why = "block " + b->name_hint + " does not bind its iterators to the loops in order";
        return;
      }
    }
    // A window nest (te.create_prim_func's reduce domains depending on the output point): the
    // rules schedule its outer spatial loops and leave the nest inside as it is.
    if (HasBlock(b->body)) return;
    ++depth_;
    StmtVisitor::VisitStmt_(op);
    --depth_;
  }

 private:
  static bool IsScalarBlock(const BlockRealizeNode* op) {
    const BlockNode* b = op->block.get();
    if (b->iter_vars.empty() || op->iter_values.size() != b->iter_vars.size()) return false;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      const IterVar& iv = b->iter_vars[i];
      if (!iv->dom || !IsConstInt(iv->dom->extent, 1) || !IsConstInt(op->iter_values[i], 0)) {
        return false;
      }
    }
    return true;
  }
  static bool HasBlock(const Stmt& body) {
    bool found = false;
    PostOrderVisit(body, [&](const ObjectRef& n) { found = found || AsPtr<BlockRealizeNode>(n); });
    return found;
  }
  static bool ConstEq(const Expr& a, const Expr& b) {
    auto* x = AsPtr<IntImmNode>(a);
    auto* y = AsPtr<IntImmNode>(b);
    return x && y && x->value == y->value;
  }
  std::vector<const ForNode*> loops_;
  int depth_ = 0;
};

}  // namespace

bool CarriesNoSchedule(const PrimFunc& func, std::string* why) {
  auto say = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  auto it = func->attrs.find("tessera.auto_schedule");
  if (it != func->attrs.end()) {
    auto* v = AsPtr<IntImmNode>(it->second);
    if (v && v->value) return true;
    return say("the function sets tessera.auto_schedule to false");
  }
  const BlockRealizeNode* root = AsPtr<BlockRealizeNode>(func->body);
  if (root == nullptr) return say("the function has no root block");
  ScheduleDetector detector;
  detector.VisitStmt(func->body);
  if (!detector.why.empty()) return say(detector.why);
  return true;
}

}  // namespace autoschedule
}  // namespace tessera
