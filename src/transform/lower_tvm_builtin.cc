// tir.LowerTVMBuiltin, with the behaviour of Apache TVM's pass of that name: on host functions
// (a "target" whose kind is "c" or "llvm", or marked "tir.is_host_func") the packed-call builtins
// become explicit stack traffic.
//  - tvm_call_packed / tvm_call_cpacked / tvm_call_trace_packed(name, args...) become
//    tvm_call_*_lowered(name, stack_ffi_any, begin, end): before the statement, each argument is
//    written into one FFI Any slot of the "tvm_ffi_any" stack (type index, zero padding, value)
//    and the slot after the last one is set to None for the return value;
//  - tvm_stack_make_shape(dims...) stores the dims into the int64 "shape" stack and becomes the
//    address of the first (read through a view of the stack that ends at it);
//  - tvm_stack_make_array(data, shape, strides, ndim, dtype, elem_offset) fills one DLTensor of
//    the "array" stack field by field and becomes its address;
//  - tvm_context_id() is 0; T.attr(..., "device_id"/"device_type", ...) give the device that
//    arrays are on and are consumed (without "device_type", the function's target's device; a
//    function with no target has none);
//  - an allocation that the stack cannot take (not global, not of constant size, or of 1 KiB or
//    more) is served by TVMBackendAllocWorkspace / TVMBackendFreeWorkspace, with null checks.
// The stacks are tvm_stack_alloca LetStmts over the function body and over each parallel loop's
// body, sized by the most any statement of that scope needs at once: the slots of a call's
// arguments are free again after its statement, so sibling statements share them, and calls
// nested in arguments take slots after their caller's.
// Other functions are returned unchanged, as TVM does.
#include <algorithm>
#include <string>
#include <vector>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/pass.h"

namespace tessera {
namespace transform {
namespace {

// tvm_struct_set / tvm_struct_get fields (TVM's builtin::TVMStructFieldKind).
enum StructField : int64_t {
  kArrAddr = 0,
  kArrData = 1,
  kArrShape = 2,
  kArrStrides = 3,
  kArrNDim = 4,
  kArrTypeCode = 5,
  kArrTypeBits = 6,
  kArrTypeLanes = 7,
  kArrByteOffset = 8,
  kArrDeviceId = 9,
  kArrDeviceType = 10,
  kAnyTypeIndex = 13,
  kAnyZeroPadding = 14,
  kAnyUnionValue = 15,
};

// Type indices of TVM FFI's Any (tvm/ffi/c_api.h).
enum FfiTypeIndex : int64_t {
  kFfiNone = 0,
  kFfiInt = 1,
  kFfiBool = 2,
  kFfiFloat = 3,
  kFfiOpaquePtr = 4,
  kFfiDLTensorPtr = 7,
  kFfiRawStr = 8,
};

constexpr int64_t kDLCPU = 1;
constexpr int64_t kMaxStackAllocaBytes = 1024;  // TVM's runtime::kMaxStackAlloca
constexpr int64_t kTempAllocaAlignment = 64;

Expr CallOp(DataType t, const std::string& name, std::vector<Expr> args) {
  return CallNode::Make(t, OpNode::Get(name), std::move(args));
}

Stmt StructSet(const Var& handle, int64_t index, int64_t field, Expr value) {
  return EvaluateNode::Make(CallOp(DataType::Int(32), "tir.tvm_struct_set",
                                   {handle, Int32(index), Int32(field), std::move(value)}));
}

Expr StackAlloca(const std::string& kind, int64_t n) {
  return CallOp(DataType::Handle(), "tir.tvm_stack_alloca", {StringImmNode::Make(kind), Int32(n)});
}

// `e` as `t`; an integer constant becomes a constant of `t` (as TVM's cast folds it).
Expr CastTo(DataType t, const Expr& e) {
  if (e->dtype == t) return e;
  if (auto c = AsConstInt(e); c && (t.is_int() || t.is_uint())) return MakeConst(t, *c);
  return CastNode::Make(t, e);
}

// DLPack's type code of `t` (kDLInt 0, kDLUInt 1, kDLFloat 2, kDLOpaqueHandle 3, kDLBfloat 4).
int64_t DLTypeCode(DataType t) {
  if (t.is_int()) return 0;
  if (t.is_uint() || t.is_bool()) return 1;
  if (t.is_bfloat16()) return 4;
  if (t.is_float()) return 2;
  return 3;
}

int64_t TypeBits(DataType t) { return t.is_bool() ? 1 : t.bits(); }

// Bytes of one element (a bool or a sub-byte element takes one byte).
int64_t ElementBytes(DataType t) {
  int64_t bits = TypeBits(t) * t.lanes();
  return bits < 8 ? 1 : (bits + 7) / 8;
}

bool IsHostTarget(const PrimFunc& f) {
  auto it = f->attrs.find("target");
  if (it == f->attrs.end()) return false;
  std::string kind = TargetKindOf(it->second);
  return kind == "c" || kind == "llvm";
}

struct StackSizes {
  int64_t shape = -1;  // -1: no shape at all (0 is a scalar shape, which still needs the stack)
  int64_t array = 0;
  int64_t args = 0;
};

class BuiltinLowerer : public StmtExprMutator {
 public:
  explicit BuiltinLowerer(Expr device_type) : device_type_(std::move(device_type)) {}

  Stmt LowerScope(const Stmt& body) {
    // Measure first (a dry run over the scope, not entering inner scopes), then rewrite with the
    // stacks sized.
    Scope measured;
    measured.shape = BufferNode::Decl("stack_shape", DataType::Int(64), {Int64(0)});
    {
      BuiltinLowerer probe(device_type_);
      probe.measuring_ = true;
      probe.device_id_ = device_id_;
      probe.scopes_.push_back(measured);
      probe.VisitStmt(body);
      measured.max = probe.scopes_.back().max;
    }
    Scope scope;
    scope.max = measured.max;
    int64_t shape_slots = std::max<int64_t>(scope.max.shape, 0);
    scope.shape = BufferNode::Decl("stack_shape", DataType::Int(64), {Int64(shape_slots)});
    scopes_.push_back(scope);
    Stmt out = VisitStmt(body);
    scope = scopes_.back();
    scopes_.pop_back();
    if (scope.max.shape != -1) {
      out = DeclBufferNode::Make(scope.shape, out);
      out = LetStmtNode::Make(scope.shape->data, StackAlloca("shape", shape_slots), out);
    }
    if (scope.max.array != 0) {
      out = LetStmtNode::Make(scope.array, StackAlloca("array", scope.max.array), out);
    }
    if (scope.max.args != 0) {
      out = LetStmtNode::Make(scope.ffi_any, StackAlloca("tvm_ffi_any", scope.max.args), out);
    }
    return out;
  }

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt(const Stmt& s) override {
    prep_.emplace_back();
    Stmt out = StmtExprMutator::VisitStmt(s);
    std::vector<Stmt> prep = std::move(prep_.back());
    prep_.pop_back();
    const Scope& scope = scopes_.back();
    if (scope.run.shape != -1 || scope.run.array != 0) {
      TESSERA_THROW_KIND(s->span, ErrorKind::kValue)
          << "tir.LowerTVMBuiltin: tvm_stack_make_shape and tvm_stack_make_array are only "
             "lowered as arguments of a packed call";
    }
    if (prep.empty()) return out;
    prep.push_back(out);
    return SeqStmtNode::Flatten(prep, s->span);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "device_id" || op->attr_key == "device_type") {
      Expr& slot = op->attr_key == "device_id" ? device_id_ : device_type_;
      Expr saved = slot;
      slot = op->value;
      Stmt body = VisitStmt(op->body);
      slot = saved;
      return body;
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->for_kind != ForKind::kParallel) return StmtExprMutator::VisitStmt_(op);
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    // A parallel loop's body gets stacks of its own (each thread needs its own).
    Stmt body = measuring_ ? op->body : LowerScope(op->body);
    if (min == op->min && extent == op->extent && body == op->body) return GetRef(op);
    return ForNode::Make(op->loop_var, min, extent, op->for_kind, body, op->thread_binding,
                         op->annotations, op->span);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt stmt = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateNode>(stmt);
    if (measuring_ || !alloc) return stmt;
    if (auto it = alloc->annotations.find("disable_lower_builtin");
        it != alloc->annotations.end()) {
      if (auto* flag = AsPtr<IntImmNode>(it->second); flag && flag->value != 0) return stmt;
    }
    int64_t bytes = ElementBytes(alloc->dtype);
    std::optional<int64_t> device = device_type_ ? AsConstInt(device_type_) : std::nullopt;
    std::string scope = alloc->buffer_var->pointer ? alloc->buffer_var->pointer->scope : "global";
    if (device && *device == kDLCPU && (scope == "global" || scope.empty())) {
      int64_t count = 1;
      bool constant = true;
      for (const Expr& e : alloc->extents) {
        auto c = AsConstInt(e);
        constant = constant && c.has_value();
        if (c) count *= *c;
      }
      if (constant && count > 0 && count * bytes < kMaxStackAllocaBytes) return stmt;
    }
    if (!device_type_ || !device_id_) {
      TESSERA_THROW_KIND(alloc->span, ErrorKind::kValue)
          << "tir.LowerTVMBuiltin: the allocation of " << alloc->buffer_var->name
          << " goes to the runtime workspace, which needs the device: give the function a host "
             "target and wrap the body in T.attr(0, \"device_id\", ...)";
    }
    Expr total = MakeConst(DataType::UInt(64), bytes);
    for (const Expr& e : alloc->extents) {
      Expr n = CastTo(DataType::UInt(64), e);
      auto a = AsConstInt(total), b = AsConstInt(n);
      total = a && b ? MakeConst(DataType::UInt(64), *a * *b) : Expr(MulNode::Make(total, n));
    }
    Expr dev_type = CastTo(DataType::Int(32), device_type_);
    Expr dev_id = CastTo(DataType::Int(32), device_id_);
    Stmt throw_error =
        EvaluateNode::Make(CallOp(DataType::Int(32), "tir.tvm_throw_last_error", {}));
    Stmt null_check = IfThenElseNode::Make(
        CallOp(DataType::Bool(), "tir.isnullptr", {alloc->buffer_var}), throw_error);
    Expr free_call = CallOp(DataType::Int(32), "tir.TVMBackendFreeWorkspace",
                            {dev_type, dev_id, alloc->buffer_var});
    Stmt free_check = IfThenElseNode::Make(NENode::Make(free_call, Int32(0)), throw_error);
    // Buffers declared over the allocation stay declared around the body.
    std::vector<Ref<DeclBufferNode>> decls;
    Stmt body = alloc->body;
    while (auto* decl = AsPtr<DeclBufferNode>(body)) {
      decls.push_back(GetRef(decl));
      body = decl->body;
    }
    body = SeqStmtNode::Flatten({body, free_check});
    for (size_t i = decls.size(); i-- > 0;)
      body = DeclBufferNode::Make(decls[i]->buffer, body, decls[i]->span);
    body = SeqStmtNode::Flatten({null_check, body});
    body = AttrStmtNode::Make(alloc->buffer_var, "storage_alignment", Int32(kTempAllocaAlignment),
                              body);
    Expr workspace = CallOp(
        alloc->buffer_var->dtype, "tir.TVMBackendAllocWorkspace",
        {dev_type, dev_id, total, Int32(DLTypeCode(alloc->dtype)), Int32(TypeBits(alloc->dtype))});
    return LetStmtNode::Make(alloc->buffer_var, workspace, body, alloc->span);
  }

  Expr VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.tvm_call_packed"))
      return LowerPackedCall(op, "tir.tvm_call_packed_lowered", false);
    if (op->is_op("tir.tvm_call_cpacked"))
      return LowerPackedCall(op, "tir.tvm_call_cpacked_lowered", false);
    if (op->is_op("tir.tvm_call_trace_packed")) {
      return LowerPackedCall(op, "tir.tvm_call_trace_packed_lowered", true);
    }
    if (op->is_op("tir.tvm_stack_make_shape")) return MakeShape(op);
    if (op->is_op("tir.tvm_stack_make_array")) return MakeArray(op);
    if (op->is_op("tir.tvm_context_id")) return MakeConst(op->dtype, int64_t{0});
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  struct Scope {
    Buffer shape;
    Var array = VarNode::Make("stack_array", DataType::Handle());
    Var ffi_any = VarNode::Make("stack_ffi_any", DataType::Handle());
    StackSizes max, run;
  };

  std::vector<Stmt>& Prep(const Span& span) {
    if (prep_.empty()) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "tir.LowerTVMBuiltin: a packed-call builtin outside any statement";
    }
    return prep_.back();
  }

  void NoteMax(Scope& s) {
    s.max.shape = std::max(s.max.shape, s.run.shape);
    s.max.array = std::max(s.max.array, s.run.array);
    s.max.args = std::max(s.max.args, s.run.args);
  }

  Expr MakeShape(const CallNode* op) {
    Scope& scope = scopes_.back();
    if (scope.run.shape == -1) scope.run.shape = 0;
    int64_t begin = scope.run.shape;
    scope.run.shape += static_cast<int64_t>(op->args.size());
    NoteMax(scope);
    std::vector<Expr> dims;
    for (const Expr& a : op->args) dims.push_back(VisitExpr(a));
    std::vector<Stmt>& prep = Prep(op->span);
    const Scope& now = scopes_.back();
    for (size_t i = 0; i < dims.size(); ++i) {
      prep.push_back(BufferStoreNode::Make(now.shape, CastTo(DataType::Int(64), dims[i]),
                                           {Int32(begin + static_cast<int64_t>(i))}));
    }
    // The address of the first dim: a handle into the shape stack, read through a view of the
    // stack that ends at that dim (the form TVM's pass gives).
    Buffer view = BufferNode::Make(now.shape->data, DataType::Int(64), {Int32(begin + 1)}, {},
                                   nullptr, now.shape->data->name);
    return CallOp(DataType::Handle(), "tir.address_of",
                  {BufferLoadNode::Make(view, {Int32(begin)})});
  }

  Expr MakeArray(const CallNode* op) {
    Scope& scope = scopes_.back();
    int64_t index = scope.run.array++;
    NoteMax(scope);
    std::vector<Expr> args;
    for (const Expr& a : op->args) args.push_back(VisitExpr(a));
    if (!device_type_ || !device_id_) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.LowerTVMBuiltin: tvm_stack_make_array needs the device the array is on: wrap "
             "the call in T.attr(0, \"device_type\", ...) and T.attr(0, \"device_id\", ...)";
    }
    std::vector<Stmt>& prep = Prep(op->span);
    const Var& arr = scopes_.back().array;
    prep.push_back(StructSet(arr, index, kArrData, args[0]));
    prep.push_back(StructSet(arr, index, kArrShape, args[1]));
    Expr strides = args[2];
    if (IsConstInt(strides, 0)) {
      strides = CallOp(DataType::Handle(), "tir.reinterpret",
                       {MakeConst(DataType::UInt(64), int64_t{0})});
    }
    prep.push_back(StructSet(arr, index, kArrStrides, strides));
    prep.push_back(StructSet(arr, index, kArrNDim, args[3]));
    DataType t = args[4]->dtype;
    prep.push_back(
        StructSet(arr, index, kArrTypeCode, MakeConst(DataType::UInt(8), DLTypeCode(t))));
    prep.push_back(StructSet(arr, index, kArrTypeBits, MakeConst(DataType::UInt(8), TypeBits(t))));
    prep.push_back(
        StructSet(arr, index, kArrTypeLanes, MakeConst(DataType::UInt(16), int64_t{t.lanes()})));
    Expr offset = args[5];
    Expr byte_offset = IsConstInt(offset, 0)
                           ? offset
                           : Expr(MulNode::Make(offset, MakeConst(offset->dtype, ElementBytes(t))));
    prep.push_back(StructSet(arr, index, kArrByteOffset, CastTo(DataType::UInt(64), byte_offset)));
    prep.push_back(StructSet(arr, index, kArrDeviceId, CastTo(DataType::Int(32), device_id_)));
    prep.push_back(StructSet(arr, index, kArrDeviceType, CastTo(DataType::Int(32), device_type_)));
    return CallOp(DataType::Handle(), "tir.tvm_struct_get", {arr, Int32(index), Int32(kArrAddr)});
  }

  // The FFI type index a packed argument of this value travels as.
  static int64_t ArgTypeIndex(const Expr& arg) {
    DataType t = arg->dtype;
    if (t.is_bool()) return kFfiBool;
    if (t.is_int() || t.is_uint()) return kFfiInt;
    if (t.is_float()) return kFfiFloat;
    if (AsPtr<StringImmNode>(arg)) return kFfiRawStr;
    auto* call = AsPtr<CallNode>(arg);
    if (call && call->is_op("tir.tvm_struct_get") && call->args.size() == 3 &&
        IsConstInt(call->args[2], kArrAddr)) {
      return kFfiDLTensorPtr;
    }
    return kFfiOpaquePtr;
  }

  void SetArg(Expr arg, const Var& stack, int64_t slot, std::vector<Stmt>* prep, const Span& span) {
    DataType t = arg->dtype;
    if (t.lanes() != 1 || t.is_void()) {
      TESSERA_THROW_KIND(span, ErrorKind::kType)
          << "tir.LowerTVMBuiltin: a packed call cannot pass a value of type " << t.ToString();
    }
    // Integers travel as int64, floats as float64 (TVM's APIType).
    if (!t.is_bool() && (t.is_int() || t.is_uint())) arg = CastTo(DataType::Int(64), arg);
    if (t.is_float()) arg = CastTo(DataType::Float(64), arg);
    int64_t type_index = ArgTypeIndex(arg);
    if (type_index == kFfiOpaquePtr) {
      prep->push_back(
          IfThenElseNode::Make(CallOp(DataType::Bool(), "tir.isnullptr", {arg}),
                               StructSet(stack, slot, kAnyTypeIndex, Int32(kFfiNone)),
                               StructSet(stack, slot, kAnyTypeIndex, Int32(kFfiOpaquePtr))));
    } else {
      prep->push_back(StructSet(stack, slot, kAnyTypeIndex, Int32(type_index)));
    }
    prep->push_back(StructSet(stack, slot, kAnyZeroPadding, Int32(0)));
    prep->push_back(StructSet(stack, slot, kAnyUnionValue, arg));
  }

  Expr LowerPackedCall(const CallNode* op, const std::string& lowered, bool traced) {
    if (op->args.empty()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.LowerTVMBuiltin: a packed call needs the function's name";
    }
    Scope& scope = scopes_.back();
    StackSizes saved = scope.run;
    int64_t begin = scope.run.args;
    int64_t count = static_cast<int64_t>(op->args.size()) - 1;
    scope.run.args += count + 1;  // and a slot for the return value
    NoteMax(scope);
    std::vector<Expr> args;
    for (const Expr& a : op->args) args.push_back(VisitExpr(a));
    std::vector<Stmt>& prep = Prep(op->span);
    const Var& stack = scopes_.back().ffi_any;
    for (int64_t i = 0; i < count; ++i) SetArg(args[i + 1], stack, begin + i, &prep, op->span);
    // The return slot starts as None.
    prep.push_back(StructSet(stack, begin + count, kAnyTypeIndex, Int32(kFfiNone)));
    prep.push_back(StructSet(stack, begin + count, kAnyZeroPadding, Int32(0)));
    prep.push_back(
        StructSet(stack, begin + count, kAnyUnionValue, MakeConst(DataType::Int(64), int64_t{0})));
    Scope& now = scopes_.back();
    NoteMax(now);
    now.run = saved;
    std::vector<Expr> lowered_args = {args[0], stack, Int32(begin), Int32(begin + count)};
    if (traced) lowered_args.push_back(args.back());
    return CallOp(op->dtype, lowered, std::move(lowered_args));
  }

  static Expr Int64(int64_t v) { return MakeConst(DataType::Int(64), v); }

  Expr device_type_;
  Expr device_id_;
  bool measuring_ = false;
  std::vector<Scope> scopes_;
  std::vector<std::vector<Stmt>> prep_;
};

PrimFunc LowerTVMBuiltinFunc(PrimFunc f, IRModule, const PassContext&) {
  bool host_func = f->GetIntAttr("tir.is_host_func", 0) != 0;
  if (!host_func && !IsHostTarget(f)) return f;
  // The device of allocations outside any "device_type" attribute: the target's (none without a
  // target, so that such an allocation needing the runtime workspace is refused).
  Expr device;
  if (f->attrs.count("target")) {
    std::string kind = TargetKindOf(f->attrs.at("target"));
    device = MakeConst(DataType::Int(32), kind == "cuda" ? 2 : kDLCPU);
  }
  BuiltinLowerer lowerer(device);
  Stmt body = lowerer.LowerScope(f->body);
  return body == f->body ? f : f->WithBody(body);
}

Pass LowerTVMBuiltin() { return CreatePrimFuncPass(LowerTVMBuiltinFunc, 0, "tir.LowerTVMBuiltin"); }
TESSERA_REGISTER_PASS("tir.LowerTVMBuiltin", LowerTVMBuiltin);

}  // namespace
}  // namespace transform
}  // namespace tessera
