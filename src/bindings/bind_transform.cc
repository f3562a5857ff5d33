// Bindings of passes, PassContext and the staged lowerer.
#include <unordered_set>

#include "common.h"
#include "tessera/driver/stage.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/target/codegen_host.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/specialize.h"

namespace tessera {
namespace bindings {
namespace {

using transform::ConfigDict;
using transform::ConfigValue;
using transform::PassContext;

ConfigValue ToConfig(nb::handle h) {
  ConfigValue v;
  if (nb::isinstance<nb::bool_>(h)) {
    v.value = nb::cast<bool>(h);
  } else if (nb::isinstance<nb::int_>(h)) {
    v.value = nb::cast<int64_t>(h);
  } else if (nb::isinstance<nb::float_>(h)) {
    v.value = nb::cast<double>(h);
  } else if (nb::isinstance<nb::str>(h)) {
    v.value = nb::cast<std::string>(h);
  } else if (nb::isinstance<nb::dict>(h)) {
    auto d = std::make_shared<ConfigDict>();
    for (auto [k, item] : nb::borrow<nb::dict>(h)) (*d)[nb::cast<std::string>(k)] = ToConfig(item);
    v.value = d;
  } else {
    throw nb::type_error("config values must be bool, int, float, str or dict");
  }
  return v;
}

nb::object FromConfig(const ConfigValue& v) {
  switch (v.value.index()) {
    case 0:
      return nb::cast(std::get<bool>(v.value));
    case 1:
      return nb::cast(std::get<int64_t>(v.value));
    case 2:
      return nb::cast(std::get<double>(v.value));
    case 3:
      return nb::cast(std::get<std::string>(v.value));
    default: {
      nb::dict d;
      for (const auto& [k, item] : *std::get<std::shared_ptr<ConfigDict>>(v.value)) d[k.c_str()] = FromConfig(item);
      return d;
    }
  }
}

// A pass as a Python object: a registered pass or one written in Python.
struct PassHandle {
  transform::Pass pass;
};

// A Python callable kept alive by a C++ pass; released with the GIL held (or leaked when the
// interpreter is already gone, e.g. a PassContext destroyed at exit).
struct PyCallable {
  nb::object fn;
};
std::shared_ptr<PyCallable> HoldCallable(nb::object fn) {
  return std::shared_ptr<PyCallable>(new PyCallable{std::move(fn)}, [](PyCallable* p) {
    if (Py_IsInitialized()) {
      nb::gil_scoped_acquire gil;
      delete p;
    } else {
      p->fn.release();
      delete p;
    }
  });
}

std::string PyTypeName(nb::handle h) { return nb::cast<std::string>(nb::type_name(h.type())); }

PassHandle MakePythonPass(nb::object fn, int opt_level, const std::string& name, bool prim_func) {
  if (!PyCallable_Check(fn.ptr())) throw nb::type_error("the pass function must be callable");
  auto holder = HoldCallable(std::move(fn));
  if (prim_func) {
    return {transform::CreatePrimFuncPass(
        [holder, name](PrimFunc f, IRModule mod, const PassContext& ctx) -> PrimFunc {
          nb::gil_scoped_acquire gil;
          nb::object r = holder->fn(f, mod, ctx);
          if (!nb::isinstance<PrimFuncNode>(r)) {
            throw nb::type_error(("the prim_func_pass '" + name + "' returned " + PyTypeName(r) +
                                  "; it must return a PrimFunc")
                                     .c_str());
          }
          return nb::cast<PrimFunc>(r);
        },
        opt_level, name)};
  }
  return {transform::CreateModulePass(
      [holder, name](IRModule mod, const PassContext& ctx) -> IRModule {
        nb::gil_scoped_acquire gil;
        nb::object r = holder->fn(mod, ctx);
        if (!nb::isinstance<IRModuleNode>(r)) {
          throw nb::type_error(("the module_pass '" + name + "' returned " + PyTypeName(r) +
                                "; it must return an IRModule")
                                   .c_str());
        }
        return nb::cast<IRModule>(r);
      },
      opt_level, name)};
}

// A Python callable as an IRTransform callback: None keeps the node.
transform::NodeRewrite Rewriter(nb::handle fn, const char* which) {
  if (fn.is_none()) return nullptr;
  if (!PyCallable_Check(fn.ptr())) {
    throw nb::type_error((std::string("ir_transform: ") + which + " must be callable or None").c_str());
  }
  nb::object f = nb::borrow(fn);
  return [f, which](const ObjectRef& node) -> ObjectRef {
    nb::object r = f(node);
    if (r.is_none()) return nullptr;
    ObjectRef out;
    if (!nb::try_cast<ObjectRef>(r, out) || !out) {
      throw nb::type_error((std::string("ir_transform: the ") + which +
                            " function must return None or an IR node, not " + PyTypeName(r))
                               .c_str());
    }
    return out;
  };
}

// A StageLowerer for `target` (parsed once by the caller: a Target, or a string the binding
// parses); `dsl_target` names the vector DSL target ("X2_1204") where the kind is "dsl".
void InitStageLowerer(lower::StageLowerer* self, IRModule mod, const Target& target,
                      const std::string& dsl_target, const std::string& entry,
                      const std::string& include_dir, const std::string& cache_dir,
                      bool auto_schedule) {
  lower::LowerContext ctx;
  ctx.auto_schedule = auto_schedule;
  ctx.target = target;
  ctx.pass_ctx = PassContext::Current();
  if (!dsl_target.empty()) ctx.dsl_target = &GetDSLTarget(dsl_target);
  ctx.entry = entry;
  ctx.include_dir = include_dir;
  ctx.cache_dir = cache_dir;
  RunWithLargeStack([&] { new (self) lower::StageLowerer(mod, std::move(ctx)); });
}


// The node kind named `name` ("Add", "For"), for the cases of a Python visitor or mutator.
NodeKind KindNamed(const std::string& name) {
  for (int k = 0; k < static_cast<int>(NodeKind::kStmtEnd); ++k) {
    auto kind = static_cast<NodeKind>(k);
    if (kind != NodeKind::kExprEnd && name == NodeKindName(kind)) return kind;
  }
  throw nb::value_error(("no expression or statement node is named '" + name + "'").c_str());
}

// The C++ walk under tessera.tir.PyStmtExprVisitor / PyStmtExprMutator: a node of a kind the
// Python class overrides goes to `handler(kind name, node)` (the Python method), any other
// node to the C++ default, which visits the children through the same dispatch. The handler
// is held only while a visit started from Python runs (no reference cycle with the object).
template <class Base>
class PyFunctor : public Base {
 public:
  std::unordered_set<int> cases;
  nb::handle handler;

  nb::object Call(const ObjectRef& node) {
    if (!handler.is_valid()) {
      throw nb::value_error("a Python visitor's method was called outside visit_expr/visit_stmt");
    }
    return handler(NodeKindName(node->kind), node);
  }
  bool Overridden(const ObjectRef& node) const { return cases.count(static_cast<int>(node->kind)); }
};

class PyVisitorImpl : public PyFunctor<StmtExprVisitor> {
 public:
  void VisitExpr(const Expr& e) override {
    if (Overridden(e)) {
      Call(e);
    } else {
      ExprFunctor<void>::VisitExpr(e);
    }
  }
  void VisitStmt(const Stmt& s) override {
    if (Overridden(s)) {
      Call(s);
    } else {
      StmtFunctor<void>::VisitStmt(s);
    }
  }
  void Default(const ObjectRef& node) {
    if (IsExprKind(node->kind)) {
      ExprFunctor<void>::VisitExpr(std::static_pointer_cast<ExprNode>(node));
    } else {
      StmtFunctor<void>::VisitStmt(std::static_pointer_cast<StmtNode>(node));
    }
  }
};

class PyMutatorImpl : public PyFunctor<StmtExprMutator> {
 public:
  Expr VisitExpr(const Expr& e) override {
    if (!Overridden(e)) return ExprFunctor<Expr>::VisitExpr(e);
    nb::object r = Call(e);
    if (!nb::isinstance<ExprNode>(r)) {
      throw nb::type_error((std::string("visit_") + NodeKindName(e->kind) +
                            ": a mutator's expression case must return an expression, got " +
                            PyTypeName(r))
                               .c_str());
    }
    return nb::cast<Expr>(r);
  }
  Stmt VisitStmt(const Stmt& s) override {
    if (!Overridden(s)) return StmtFunctor<Stmt>::VisitStmt(s);
    nb::object r = Call(s);
    if (!nb::isinstance<StmtNode>(r)) {
      throw nb::type_error((std::string("visit_") + NodeKindName(s->kind) +
                            ": a mutator's statement case must return a statement, got " +
                            PyTypeName(r))
                               .c_str());
    }
    return nb::cast<Stmt>(r);
  }
  ObjectRef Default(const ObjectRef& node) {
    if (IsExprKind(node->kind)) {
      return ExprFunctor<Expr>::VisitExpr(std::static_pointer_cast<ExprNode>(node));
    }
    return StmtFunctor<Stmt>::VisitStmt(std::static_pointer_cast<StmtNode>(node));
  }
};

// Runs `f` with `handler` as the impl's Python dispatcher (restored afterwards: visits nest).
template <class Impl, class F>
auto WithHandler(Impl& impl, nb::handle handler, F f) {
  nb::handle outer = impl.handler;
  impl.handler = handler;
  struct Restore {
    Impl& impl;
    nb::handle outer;
    ~Restore() { impl.handler = outer; }
  } restore{impl, outer};
  return f();
}

template <class Impl>
void BindPyFunctor(nb::module_& m, const char* name) {
  nb::class_<Impl>(m, name)
      .def(nb::init<>())
      .def("set_cases",
           [](Impl& impl, const std::vector<std::string>& kinds) {
             impl.cases.clear();
             for (const std::string& k : kinds) impl.cases.insert(static_cast<int>(KindNamed(k)));
           }, "kinds"_a)
      .def("visit_expr",
           [](Impl& impl, Expr e, nb::handle handler) {
             return WithHandler(impl, handler, [&] { return impl.VisitExpr(e); });
           }, "expr"_a, "handler"_a)
      .def("visit_stmt",
           [](Impl& impl, Stmt s, nb::handle handler) {
             return WithHandler(impl, handler, [&] { return impl.VisitStmt(s); });
           }, "stmt"_a, "handler"_a)
      .def("default", [](Impl& impl, ObjectRef node) { return impl.Default(node); }, "node"_a);
}

}  // namespace

void BindTransform(nb::module_& m) {
  BindPyFunctor<PyVisitorImpl>(m, "PyStmtExprVisitorImpl");
  BindPyFunctor<PyMutatorImpl>(m, "PyStmtExprMutatorImpl");
  m.def("functor_node_kinds", [] {
    std::vector<std::string> names;
    for (int k = 0; k < static_cast<int>(NodeKind::kStmtEnd); ++k) {
      if (k != static_cast<int>(NodeKind::kExprEnd)) names.push_back(NodeKindName(static_cast<NodeKind>(k)));
    }
    return names;
  }, "The names of the expression and statement node kinds a Python visitor can override.");
  m.def("ir_transform", [](ObjectRef node, nb::handle pre, nb::handle post,
                           std::vector<std::string> only_enable) -> ObjectRef {
    auto f_pre = Rewriter(pre, "preorder");
    auto f_post = Rewriter(post, "postorder");
    if (IsStmtKind(node->kind)) {
      return transform::IRTransform(std::static_pointer_cast<StmtNode>(node), f_pre, f_post, only_enable);
    }
    if (IsExprKind(node->kind)) {
      return transform::IRTransform(std::static_pointer_cast<ExprNode>(node), f_pre, f_post, only_enable);
    }
    throw nb::type_error("ir_transform takes a statement or an expression");
  }, "node"_a, "preorder"_a.none(), "postorder"_a.none(), "only_enable"_a = std::vector<std::string>{});
  m.def("post_order_visit", [](ObjectRef node, nb::object fn) {
    auto f = [&fn](const ObjectRef& n) { fn(n); };
    if (IsStmtKind(node->kind)) {
      PostOrderVisit(std::static_pointer_cast<StmtNode>(node), f);
    } else if (IsExprKind(node->kind)) {
      PostOrderVisit(std::static_pointer_cast<ExprNode>(node), f);
    } else {
      throw nb::type_error("post_order_visit takes a statement or an expression");
    }
  }, "node"_a, "fvisit"_a);
  m.def("substitute", [](ObjectRef node, const std::vector<std::pair<Var, Expr>>& vmap) -> ObjectRef {
    transform::VarMap map;
    for (const auto& [v, e] : vmap) {
      if (v->dtype != e->dtype) {
        throw nb::type_error(("substitute: " + v->name + " is " + v->dtype.ToString() +
                              " but its value is " + e->dtype.ToString()).c_str());
      }
      map[v.get()] = e;
    }
    // Statements: buffers defined over the substituted variables are rebuilt too, as TVM's.
    if (IsStmtKind(node->kind)) {
      return transform::SubstituteWithBuffers(std::static_pointer_cast<StmtNode>(node), map);
    }
    if (IsExprKind(node->kind)) return transform::Substitute(std::static_pointer_cast<ExprNode>(node), map);
    throw nb::type_error("substitute takes a statement or an expression");
  }, "node"_a, "vmap"_a);
  // PrimFunc.specialize (tessera.tir wraps it): parameter -> Buffer or expression, in order.
  m.def("specialize",
        [](PrimFunc func, const std::vector<std::pair<Var, ObjectRef>>& param_map) {
          return transform::Specialize(func, param_map);
        },
        "func"_a, "param_map"_a);
  m.def("renew_defs", &transform::RenewDefs, "func"_a,
        "A copy of func in which every variable and buffer it defines is new.");
  nb::class_<PassHandle>(m, "Pass")
      .def_prop_ro("name", [](const PassHandle& p) { return p.pass->name; })
      .def_prop_ro("opt_level", [](const PassHandle& p) { return p.pass->opt_level; })
      .def("__call__", [](const PassHandle& p, IRModule mod) {
        return p.pass->fn(mod, PassContext::Current());
      }, "mod"_a, "Run the pass on `mod` under the current PassContext.");
  m.def("get_pass", [](const std::string& name) { return PassHandle{transform::PassRegistry::Get(name)}; },
        "name"_a, "A registered pass by name.");
  m.def(
      "thread_sync_pass",
      [](const std::string& scope) { return PassHandle{transform::ThreadSync(scope)}; },
      "storage_scope"_a, "tir.ThreadSync for the memory scope given (\"shared\", \"global\", ...).");
  m.def(
      "common_subexpr_elim_tir_pass",
      [](bool enable, bool identify) {
        return PassHandle{transform::CommonSubexprElimTIR(enable, identify)};
      },
      "enable_cse_tir"_a, "identify_equiv_terms"_a,
      "tir.CommonSubexprElimTIR with TVM's options.");
  m.def(
      "vectorize_loop_pass",
      [](bool enable) { return PassHandle{transform::VectorizeLoop(enable)}; },
      "enable_vectorize"_a,
      "tir.VectorizeLoop; with enable_vectorize false, vectorized loops become serial.");
  m.def(
      "narrow_datatype_pass",
      [](int target_bits) { return PassHandle{transform::NarrowDataType(target_bits)}; },
      "target_bits"_a, "tir.NarrowDataType narrowing index arithmetic to target_bits bits.");
  m.def(
      "bind_target_pass",
      [](ObjectRef target) { return PassHandle{transform::BindTarget(std::move(target))}; },
      "target"_a, "tir.BindTarget for a target in its attribute form (a Map).");
  m.def(
      "lower_device_storage_access_info_pass",
      [](nb::object fn) {
        auto holder = HoldCallable(std::move(fn));
        return PassHandle{transform::LowerDeviceStorageAccessInfo(
            [holder](const std::string& scope) -> std::optional<transform::MemoryInfo> {
              nb::gil_scoped_acquire gil;
              nb::object r = holder->fn(scope);
              if (r.is_none()) return std::nullopt;
              auto [unit_bits, head] = nb::cast<std::pair<int64_t, std::optional<Expr>>>(r);
              return transform::MemoryInfo{unit_bits, head ? *head : Expr()};
            })};
      },
      "memory_info"_a,
      "tir.LowerDeviceStorageAccessInfo; memory_info(scope) gives (unit_bits, head_address or "
      "None), or None for a scope without memory info.");
  m.def(
      "storage_rewrite_pass",
      [](nb::object fn) {
        auto holder = HoldCallable(std::move(fn));
        return PassHandle{transform::StorageRewrite(
            [holder](const std::string& scope) -> std::optional<transform::MemoryInfo> {
              nb::gil_scoped_acquire gil;
              nb::object r = holder->fn(scope);
              if (r.is_none()) return std::nullopt;
              auto [simd, capacity] = nb::cast<std::pair<int64_t, int64_t>>(r);
              transform::MemoryInfo info;
              info.max_simd_bits = simd;
              info.max_num_bits = capacity;
              return info;
            })};
      },
      "memory_info"_a,
      "tir.StorageRewrite; memory_info(scope) gives (max_simd_bits, max_num_bits) of a special "
      "memory, or None for a scope without memory info.");
  m.def(
      "default_gpu_schedule_pass",
      [](std::optional<ObjectRef> target) {
        return PassHandle{transform::DefaultGPUSchedule(target ? *target : ObjectRef())};
      },
      "current_target"_a.none(),
      "tir.DefaultGPUSchedule with current_target (a target Map) for functions without one.");
  m.def(
      "filter_pass",
      [](nb::object fn) {
        if (!PyCallable_Check(fn.ptr())) throw nb::type_error("tir.Filter takes a function of a PrimFunc");
        auto holder = HoldCallable(std::move(fn));
        return PassHandle{transform::Filter([holder](const PrimFunc& f) {
          nb::gil_scoped_acquire gil;
          return nb::cast<bool>(nb::bool_(holder->fn(f)));
        })};
      },
      "fcond"_a, "tir.Filter keeping the functions for which fcond(func) is true.");
  m.def("create_python_pass", &MakePythonPass, "fn"_a, "opt_level"_a, "name"_a, "prim_func"_a,
        "A pass that calls fn(func, mod, ctx) -> PrimFunc per function (prim_func=True) or "
        "fn(mod, ctx) -> IRModule.");
  m.def("sequential", [](const std::vector<PassHandle>& passes, int opt_level, const std::string& name) {
    std::vector<transform::Pass> ps;
    for (const PassHandle& p : passes) ps.push_back(p.pass);
    transform::Pass seq = transform::Sequential(std::move(ps), name);
    if (opt_level == seq->opt_level) return PassHandle{seq};
    auto node = std::make_shared<transform::PassNode>(*seq);
    node->opt_level = opt_level;
    return PassHandle{node};
  }, "passes"_a, "opt_level"_a, "name"_a);
  nb::class_<PassContext>(m, "PassContext")
      .def(nb::init<>())
      .def_rw("opt_level", &PassContext::opt_level)
      .def_rw("required_pass", &PassContext::required_pass)
      .def_rw("disabled_pass", &PassContext::disabled_pass)
      .def("set_config", [](PassContext& c, const std::string& k, nb::handle v) { c.SetConfig(k, ToConfig(v)); })
      .def_prop_rw(
          "lower_passes",
          [](const PassContext& c) {
            std::vector<std::pair<int, PassHandle>> out;
            for (const auto& [phase, pass] : c.lower_passes) out.emplace_back(phase, PassHandle{pass});
            return out;
          },
          [](PassContext& c, const std::vector<std::pair<int, PassHandle>>& v) {
            c.lower_passes.clear();
            for (const auto& [phase, p] : v) c.lower_passes.emplace_back(phase, p.pass);
          })
      .def_prop_ro("config",
                   [](const PassContext& c) {
                     nb::dict d;
                     for (const auto& [k, v] : c.config) d[k.c_str()] = FromConfig(v);
                     return d;
                   })
      .def("pass_enabled", &PassContext::PassEnabled)
      .def_static("current", &PassContext::Current)
      .def_static("enter_with_scope", &PassContext::EnterWithScope)
      .def_static("exit_with_scope", &PassContext::ExitWithScope)
      .def_static("list_configs", &transform::ListConfigOptions);
  m.def("list_passes", &transform::PassRegistry::List);
  m.def("pass_exists", &transform::PassRegistry::Exists);
  m.def("host_vector_bits", &transform::HostVectorBits);
  m.def("host_has_libmvec", &HaveLibmvec);
  m.def("apply_pass", [](const std::string& name, IRModule mod) {
    auto pass = transform::PassRegistry::Get(name);
    return pass->fn(mod, PassContext::Current());
  }, "name"_a, "mod"_a, "Run one registered pass on a module under the current PassContext.");
  m.def("simplify_expr", [](const Expr& e) {
    return CallWithLargeStack([&] { return transform::SimplifyExpr(e); });
  });
  m.def(
      "verify_well_formed",
      [](PrimFunc f) {
        std::vector<std::pair<std::string, Span>> out;
        for (const auto& e : transform::VerifyWellFormed(f)) out.emplace_back(e.message, e.span);
        return out;
      },
      "func"_a, "Well-formedness violations of a PrimFunc as (message, span) pairs.");
  m.def(
      "find_impurity",
      [](PrimFunc f) -> std::optional<std::pair<std::string, Span>> {
        auto e = transform::FindImpurity(f);
        if (!e) return std::nullopt;
        return std::make_pair(e->message, e->span);
      },
      "func"_a, "(message, span) of the first reason a PrimFunc is not pure, or None.");
  m.def(
      "identify_memcpy",
      [](const Stmt& stmt) {
        std::vector<
            std::tuple<std::optional<BufferRegion>, std::optional<BufferRegion>, std::string>>
            out;
        for (auto& r : transform::IdentifyMemCpyLoops(stmt)) {
          if (r.source) {
            out.emplace_back(r.source, r.dest, "");
          } else {
            out.emplace_back(std::nullopt, std::nullopt, r.reason);
          }
        }
        return out;
      },
      "stmt"_a, "(source region, dest region, reason) for every loop of a statement.");
  m.def("estimate_tir_flops", nb::overload_cast<const IRModule&>(&transform::EstimateTIRFlops),
        "mod"_a, "Arithmetic operations executed by a module's PrimFuncs.");
  m.def("estimate_tir_flops", nb::overload_cast<const Stmt&>(&transform::EstimateTIRFlops),
        "stmt"_a, "Arithmetic operations executed by a statement.");
  m.def("verify_ssa", &transform::VerifySSA, "func"_a,
        "Whether every variable of a PrimFunc is bound once (a let may repeat with an equal "
        "value).");
  m.def("detect_buffer_access_lca", &transform::DetectBufferAccessLCA, "func"_a,
        "(buffer, innermost For/Block enclosing its accesses, or None for the root) pairs.");
  m.def("calculate_allocated_bytes", &transform::CalculateAllocatedBytes, "func"_a,
        "(scope, peak bytes of live Allocate statements) pairs of a PrimFunc.");
  m.def(
      "verify_well_formed_detailed",
      [](IRModule mod) {
        std::vector<std::tuple<std::string, Span, std::string>> out;
        auto add = [&](const std::vector<transform::WellFormedError>& errors) {
          for (const auto& e : errors) out.emplace_back(e.message, e.span, e.detail);
        };
        for (const auto& [gvar, func] : mod->functions) add(transform::VerifyWellFormed(func));
        add(transform::VerifyDefinitionsPerFunction(mod));
        return out;
      },
      "mod"_a,
      "Well-formedness violations of every PrimFunc of a module, then variables that several "
      "functions define, as (message, span, detail) triples.");

  nb::class_<DSLTargetDesc>(m, "DSLTarget")
      .def_ro("name", &DSLTargetDesc::name)
      .def_ro("cores", &DSLTargetDesc::cores)
      .def_ro("tecs_per_core", &DSLTargetDesc::tecs_per_core)
      .def_ro("lsram_bytes_per_tec", &DSLTargetDesc::lsram_bytes_per_tec)
      .def_ro("shared_bytes_per_core", &DSLTargetDesc::shared_bytes_per_core)
      .def_ro("is_x3", &DSLTargetDesc::is_x3);
  m.def("get_dsl_target", &GetDSLTarget, nb::rv_policy::copy);
  m.def("dsl_targets", &DSLTargets, nb::rv_policy::copy);

  nb::class_<runtime::ModuleNode>(m, "RuntimeModule")
      .def_ro("target", &runtime::ModuleNode::target)
      .def_ro("entry", &runtime::ModuleNode::entry)
      .def_ro("source", &runtime::ModuleNode::source)
      .def_prop_ro("compiled_source",
                   [](const runtime::ModuleNode& m) {
                     return m.compiled_source.empty() ? m.source : m.compiled_source;
                   })
      .def_ro("lib_path", &runtime::ModuleNode::lib_path)
      .def_ro("compile_command", &runtime::ModuleNode::compile_command)
      .def_ro("ir", &runtime::ModuleNode::ir)
      .def_ro("device_source", &runtime::ModuleNode::device_source)
      .def_prop_ro("device_binary",
                   [](const runtime::ModuleNode& m) {
                     return nb::bytes(m.device_binary.data(), m.device_binary.size());
                   })
      .def_ro("device_format", &runtime::ModuleNode::device_format);

  nb::class_<lower::StageLowerer>(m, "StageLowerer")
      .def("__init__", &InitStageLowerer, "mod"_a, "target"_a, "dsl_target"_a = "",
           "entry"_a = "", "include_dir"_a = "", "cache_dir"_a = "", "auto_schedule"_a = false)
      .def(
          "__init__",
          [](lower::StageLowerer* self, IRModule mod, const std::string& target,
             const std::string& dsl_target, const std::string& entry,
             const std::string& include_dir, const std::string& cache_dir, bool auto_schedule) {
            InitStageLowerer(self, std::move(mod), Target::Parse(target), dsl_target, entry,
                             include_dir, cache_dir, auto_schedule);
          },
          "mod"_a, "target"_a, "dsl_target"_a = "", "entry"_a = "", "include_dir"_a = "",
          "cache_dir"_a = "", "auto_schedule"_a = false)
      .def("run_to",
           [](lower::StageLowerer& l, const std::string& s) {
             lower::Stage stage = lower::ParseStage(s);
             RunWithLargeStack([&] { l.RunTo(stage); });
           })
      .def_prop_rw("mod", &lower::StageLowerer::Module, &lower::StageLowerer::SetModule)
      .def_prop_ro("current_stage",
                   [](const lower::StageLowerer& l) { return lower::StageName(l.current_stage()); })
      .def_prop_ro("result", &lower::StageLowerer::Result)
      .def_prop_ro("timings",
                   [](const lower::StageLowerer& l) {
                     nb::list out;
                     for (const auto& t : l.context().timings) {
                       out.append(nb::make_tuple(t.stage, t.pass, t.seconds, t.changed, t.skipped));
                     }
                     return out;
                   })
      .def("timing_report", &lower::StageLowerer::TimingReport);
}

}  // namespace bindings
}  // namespace tessera
