// The Op registry: intrinsics known by name, with arity, purity and per-target lowering.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {

/*! \brief What a call may do besides computing its value. */
enum class CallEffect : uint8_t {
  kPure = 0,         ///< no side effect; may be moved, duplicated or removed
  kReadState = 1,    ///< reads memory or state
  kUpdateState = 2,  ///< writes memory or state
  kOpaque = 3,       ///< anything
};

struct OpNode;
using Op = Ref<OpNode>;
/*! \brief Rewrites a call of the op into target-level IR (e.g. "tir.exp" -> call_pure_extern "expf"). */
using FLowerIntrinsic = std::function<Expr(const CallNode& call)>;

/*! \brief A registered intrinsic. Ops are unique per name: compare them by identity. */
struct OpNode : Object {
  TESSERA_NODE_KIND(Op)
  std::string name;
  int num_inputs = -1;  ///< -1: variadic
  CallEffect effect = CallEffect::kOpaque;
  std::string description;
  /*! \brief Per-target lowering, keyed by target name ("c", "cuda", "dsl"). */
  std::map<std::string, FLowerIntrinsic> lowering;
  /*! \brief Free-form string attributes ("c.name" = "expf", "dsl.name" = "__vadd"). */
  std::map<std::string, std::string> str_attrs;
  explicit OpNode(std::string n) : Object(kKind), name(std::move(n)) {}

  /*! \brief The registered op; throws tessera::Error listing near names if there is none. */
  static Op Get(const std::string& name);
  static bool Exists(const std::string& name);
  /*! \brief Names of every registered op, sorted. */
  static std::vector<std::string> ListNames();
  std::string GetStrAttr(const std::string& key, const std::string& fallback = "") const;
};

/*! \brief Fluent registration: TESSERA_REGISTER_OP("tir.exp").set_num_inputs(1).set_effect(kPure); */
class OpRegEntry {
 public:
  explicit OpRegEntry(const std::string& name);
  OpRegEntry& set_num_inputs(int n);
  OpRegEntry& set_effect(CallEffect e);
  OpRegEntry& describe(const std::string& text);
  OpRegEntry& set_lowering(const std::string& target, FLowerIntrinsic f);
  OpRegEntry& set_attr(const std::string& key, const std::string& value);
  Op op() const { return op_; }

 private:
  Op op_;
};

#define TESSERA_OP_CONCAT_(a, b) a##b
#define TESSERA_OP_CONCAT(a, b) TESSERA_OP_CONCAT_(a, b)
/*! \brief Register an op at static initialisation (tessera_core is linked as objects). */
#define TESSERA_REGISTER_OP(name) \
  static ::tessera::OpRegEntry& TESSERA_OP_CONCAT(__tessera_op_, __COUNTER__) = \
      (*new ::tessera::OpRegEntry(name))

}  // namespace tessera
