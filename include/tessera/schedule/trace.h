// The trace of a schedule: every primitive call as an instruction that can be printed as
// Python, written as JSON and replayed on another schedule.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/ir/expr.h"
#include "tessera/schedule/index_map.h"

namespace tessera {
namespace schedule {

class Schedule;

/*! \brief A handle ("random variable") to a block, a loop or an expression of a schedule. */
struct RVNode {
  enum Kind { kBlock, kLoop, kExpr };
  const Kind kind;
  explicit RVNode(Kind k) : kind(k) {}
  virtual ~RVNode() = default;
};
struct BlockRVNode : RVNode {
  BlockRVNode() : RVNode(kBlock) {}
};
struct LoopRVNode : RVNode {
  LoopRVNode() : RVNode(kLoop) {}
};
struct ExprRVNode : RVNode {
  ExprRVNode() : RVNode(kExpr) {}
};
using RV = std::shared_ptr<RVNode>;
using BlockRV = std::shared_ptr<BlockRVNode>;
using LoopRV = std::shared_ptr<LoopRVNode>;
using ExprRV = std::shared_ptr<ExprRVNode>;

/*! \brief An argument of an instruction: a Python-like value. */
struct TraceValue {
  enum Kind { kNone, kBool, kInt, kFloat, kString, kExpr, kRV, kList, kIndexMap, kDict };
  Kind kind = kNone;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;
  Expr expr;
  RV rv;
  std::vector<TraceValue> list;
  std::shared_ptr<IndexMap> index_map;
  /*! \brief kDict: string keys in order, each with its value. */
  std::vector<std::pair<std::string, TraceValue>> dict;

  static TraceValue None() { return {}; }
  static TraceValue Bool(bool v);
  static TraceValue Int(int64_t v);
  static TraceValue Float(double v);
  static TraceValue Str(std::string v);
  static TraceValue Of(Expr e);
  static TraceValue Of(RV rv);
  static TraceValue List(std::vector<TraceValue> items);
  static TraceValue Map(IndexMap map);
  static TraceValue Dict(std::vector<std::pair<std::string, TraceValue>> items);
  /*! \brief An annotation value: ints, floats, strings and lists become plain values. */
  static TraceValue FromObject(const ObjectRef& obj);
  /*! \brief The IR object of an annotation value (inverse of FromObject). */
  ObjectRef ToObject() const;
};

/*! \brief One primitive call: its name, keyword arguments in signature order, its outputs. */
struct Instruction {
  std::string kind;
  std::vector<std::pair<std::string, TraceValue>> args;
  std::vector<RV> outputs;
  /*! \brief The primitive returns a list (get_loops, split), printed as a tuple unpacking. */
  bool returns_list = false;
  /*! \brief The decision of a sampling instruction (kNone for the others): replayed as is. */
  TraceValue decision{};
  const TraceValue& Arg(const std::string& name) const;
};

/*! \brief The instructions of a schedule, in order. */
class Trace {
 public:
  std::vector<Instruction> insts;

  /*!
   * \brief The calls as Python lines, one per instruction, with handles named b0, l1, ...
   *  (b: block, l: loop, v: expression) and every argument spelled out:
   *  `l1, l2 = sch.split(loop=l0, factors=[None, 8], preserve_unit_iters=True, ...)`.
   */
  std::string AsPython() const;
  /*! \brief The instructions as JSON: {"insts": [[kind, [[key, value], ...], [outputs]]]}. */
  std::string AsJSON() const;
  /*! \brief Replay on `sch` (a schedule of the same module). */
  void ApplyToSchedule(Schedule* sch, bool remove_postproc = false) const;
  /*! \brief Replay the JSON of AsJSON on `sch`. */
  static void ApplyJSONToSchedule(const std::string& json, Schedule* sch);
};

}  // namespace schedule
}  // namespace tessera
