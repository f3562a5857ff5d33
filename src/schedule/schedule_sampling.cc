// The sampling instructions of a schedule: a seeded random state, perfect and partitioned tiles,
// categorical choices and compute locations, each recorded with its decision for replay.
#include <algorithm>
#include <random>

#include "schedule_impl.h"
#include "tessera/schedule/primitive.h"
#include "tessera/schedule/schedule.h"
#include "tessera/support/error.h"
#include "utils.h"

namespace tessera {
namespace schedule {
namespace {

constexpr int64_t kMultiplier = 48271;
constexpr int64_t kModulus = 2147483647;  // 2^31 - 1

/*!
 * \brief The "minimal standard" linear congruential generator over a state owned elsewhere, so
 *  that a schedule's state advances with every draw. Its parameters (and the std distributions
 *  drawn with it) are those of TVM's engine: the same seed gives the same decisions.
 */
class Engine {
 public:
  using result_type = uint64_t;
  explicit Engine(int64_t* state) : state_(state) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return kModulus - 1; }
  result_type operator()() {
    *state_ = (*state_ * kMultiplier) % kModulus;
    return static_cast<result_type>(*state_);
  }

 private:
  int64_t* state_;
};

[[noreturn]] void ValueError(const std::string& message) {
  throw Error(message, Span(), ErrorKind::kValue);
}

/*! \brief A uniform integer of [lo, hi); a single candidate draws nothing. */
int32_t UniformInt(int64_t* state, int32_t lo, int32_t hi) {
  if (lo >= hi) ValueError("cannot sample an integer from an empty range");
  if (lo + 1 == hi) return lo;
  Engine engine(state);
  return std::uniform_int_distribution<int32_t>(lo, hi - 1)(engine);
}

/*! \brief `k` distinct integers of [0, n), in the order drawn. */
std::vector<int32_t> DistinctInts(int64_t* state, int32_t n, int32_t k) {
  if (k == 1) return {UniformInt(state, 0, n)};
  if (k == 2) {
    int32_t first = UniformInt(state, 0, n);
    int32_t second = UniformInt(state, 0, n - 1);
    return {first, second >= first ? second + 1 : second};
  }
  // A partial Fisher-Yates shuffle of 0..n-1.
  std::vector<int32_t> pool(n);
  for (int32_t i = 0; i < n; ++i) pool[i] = i;
  for (int32_t i = 0; i < k; ++i) std::swap(pool[i], pool[UniformInt(state, i, n)]);
  pool.resize(k);
  return pool;
}

/*! \brief The prime factors of `n` with their exponents, smallest prime first. */
std::vector<std::pair<int64_t, int>> PrimeFactors(int64_t n) {
  std::vector<std::pair<int64_t, int>> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    int e = 0;
    while (n % p == 0) n /= p, ++e;
    if (e) out.emplace_back(p, e);
  }
  if (n > 1) out.emplace_back(n, 1);
  return out;
}

int64_t Power(int64_t base, int exponent) {
  int64_t r = 1;
  while (exponent-- > 0) r *= base;
  return r;
}

/*!
 * \brief `n` factors of `extent`, uniform over the ways to share out each prime's exponent:
 *  with two factors the first gets a uniform share of each prime power; with more, a prime of
 *  exponent 1 goes to a uniform factor and a higher power is cut by n - 1 distinct bars drawn
 *  among exponent + n - 1 places.
 */
std::vector<int64_t> PerfectTile(int64_t* state, int64_t extent, int n) {
  if (extent < 1) ValueError("perfect tiling needs a loop extent of at least 1");
  if (n < 1) ValueError("perfect tiling needs at least one factor");
  if (n == 1) return {extent};
  std::vector<int64_t> out(n, 1);
  if (extent == 1) return out;
  for (auto [prime, exponent] : PrimeFactors(extent)) {
    if (n == 2) {
      int first = UniformInt(state, 0, exponent + 1);
      out[0] *= Power(prime, first);
      out[1] *= Power(prime, exponent - first);
    } else if (exponent == 1) {
      out[UniformInt(state, 0, n)] *= prime;
    } else {
      int32_t places = exponent + n - 1;
      std::vector<int32_t> bars = DistinctInts(state, places, n - 1);
      std::sort(bars.begin(), bars.end());
      bars.push_back(places);
      for (int i = 0, last = -1; i < n; ++i) {
        out[i] *= Power(prime, bars[i] - last - 1);
        last = bars[i];
      }
    }
  }
  return out;
}

/*! \brief A recorded tiling made perfect again for `extent`: innermost factors that no longer
 *  divide what is left become what is left. */
std::vector<int64_t> RepairTile(std::vector<int64_t> tile, int64_t extent) {
  for (size_t i = tile.size(); i-- > 1;) {
    if (tile[i] <= 0 || extent % tile[i] != 0) tile[i] = extent;
    extent /= tile[i];
  }
  tile[0] = extent;
  return tile;
}

std::optional<int64_t> ConstExtent(const ForNode* loop) {
  if (!IsConstInt(loop->min, 0)) {
    if (!AsConstInt(loop->min)) return std::nullopt;
  }
  return AsConstInt(loop->extent);
}

TraceValue IntList(const std::vector<int64_t>& values) {
  std::vector<TraceValue> items;
  for (int64_t v : values) items.push_back(TraceValue::Int(v));
  return TraceValue::List(std::move(items));
}

TraceValue FloatList(const std::vector<double>& values) {
  std::vector<TraceValue> items;
  for (double v : values) items.push_back(TraceValue::Float(v));
  return TraceValue::List(std::move(items));
}

/*! \brief How the blocks directly under a loop use its variable (TVM's rule): data parallel
 *  when only spatial iterators do, a reduction when only reduction iterators do. */
class LoopUseCounter : public StmtVisitor {
 public:
  explicit LoopUseCounter(const VarNode* var) : var_(var) {}
  using StmtVisitor::VisitStmt_;
  void VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    for (size_t i = 0; i < op->iter_values.size() && i < block->iter_vars.size(); ++i) {
      if (!UsesVar(op->iter_values[i], [&](const VarNode* v) { return v == var_; })) continue;
      IterVarType t = block->iter_vars[i]->iter_type;
      ++(t == IterVarType::kDataPar ? spatial : t == IterVarType::kCommReduce ? reduce : other);
    }
  }
  int spatial = 0, reduce = 0, other = 0;

 private:
  const VarNode* var_;
};

IterVarType LoopIterType(const ForNode* loop) {
  LoopUseCounter counter(loop->loop_var.get());
  counter.VisitStmt(loop->body);
  if (counter.other || (counter.spatial && counter.reduce)) return IterVarType::kOpaque;
  if (counter.reduce) return IterVarType::kCommReduce;
  return IterVarType::kDataPar;
}

}  // namespace

void Schedule::Seed(int64_t seed) {
  if (seed == -1) {
    seed = static_cast<int64_t>(std::random_device()() % kModulus);
  } else if (seed < 0) {
    ValueError("Random seed must be non-negative");
  } else {
    seed %= kModulus;
  }
  rand_state_ = seed == 0 ? 1 : seed;
}

int64_t Schedule::ForkSeed() const {
  Engine engine(&rand_state_);
  return static_cast<int64_t>((engine() * 32767) % 1999999973);
}

ExprRV Schedule::NewExprRV(Expr value) {
  auto rv = std::make_shared<ExprRVNode>();
  expr_symbols_[rv.get()] = {rv, std::move(value)};
  LogNewSymbol(rv.get());
  return rv;
}

bool Schedule::Attempt(const std::function<void()>& body) {
  ScheduleState::Snapshot snapshot = state_.Save();
  size_t undo_mark = symbol_undo_.size();
  size_t num_insts = trace_.insts.size();
  int64_t rand_state = rand_state_;
  ++run_depth_;
  bool ok = true;
  try {
    body();
  } catch (const Error&) {
    ok = false;
  } catch (const InternalError&) {
    ok = false;
  }
  if (!ok) {
    state_.Restore(std::move(snapshot));
    UndoSymbols(undo_mark);
    trace_.insts.resize(num_insts);
    rand_state_ = rand_state;
  }
  if (--run_depth_ == 0) symbol_undo_.clear();
  return ok;
}

bool Schedule::Try(const std::function<void()>& body) {
  ScheduleState::Snapshot snapshot = state_.Save();
  bool ok = true;
  try {
    body();
  } catch (const ScheduleError&) {
    ok = false;
  }
  state_.Restore(std::move(snapshot));
  return ok;
}

bool Schedule::IsComputeLocationMark(const RV& rv, int64_t* mark) const {
  auto it = rv ? symbols_.find(rv.get()) : symbols_.end();
  if (it == symbols_.end()) return false;
  if (it->second.second == root_mark_) return *mark = -1, true;
  if (it->second.second == inline_mark_) return *mark = -2, true;
  return false;
}

ExprRV Schedule::SampleCategorical(const std::vector<int64_t>& candidates,
                                   const std::vector<double>& probs,
                                   std::optional<int64_t> decision) {
  return Run("sample_categorical", [&] {
    if (candidates.size() != probs.size()) {
      ValueError("sample_categorical needs one probability per candidate");
    }
    int64_t n = static_cast<int64_t>(candidates.size());
    if (n == 0) ValueError("sample_categorical needs at least one candidate");
    int64_t index;
    if (decision) {
      index = *decision;
      if (index < 0 || index >= n) {
        ValueError("Wrong decision value, where n = " + std::to_string(n) +
                   ", but decision is: " + std::to_string(index));
      }
    } else {
      for (double p : probs) {
        if (!(p >= 0)) ValueError("sample_categorical: probabilities must be non-negative");
      }
      Engine engine(&rand_state_);
      index = std::discrete_distribution<int32_t>(probs.begin(), probs.end())(engine);
    }
    ExprRV rv = NewExprRV(IntConst(DataType::Int(32), candidates[index]));
    Instruction inst{"sample_categorical",
                     {{"candidates", IntList(candidates)}, {"probs", FloatList(probs)}},
                     {rv}};
    inst.decision = TraceValue::Int(index);
    Record(std::move(inst));
    return rv;
  });
}

std::vector<ExprRV> Schedule::SamplePerfectTile(const LoopRV& loop, int n, int max_innermost_factor,
                                                std::optional<std::vector<int64_t>> decision) {
  return Run("sample_perfect_tile", [&] {
    const ForNode* l = LoopOf(LoopSRef(loop));
    if (n < 1) ValueError("perfect tiling needs at least one factor");
    std::optional<int64_t> extent = ConstExtent(l);
    std::vector<int64_t> tile;
    if (!extent) {
      tile.assign(n, 1);
      tile[0] = -1;
    } else if (decision) {
      if (static_cast<int>(decision->size()) != n) {
        ValueError("sample_perfect_tile: the decision has " + std::to_string(decision->size()) +
                   " factors where n = " + std::to_string(n));
      }
      tile = n == 1 ? std::vector<int64_t>{*extent} : RepairTile(*decision, *extent);
    } else if (max_innermost_factor == -1) {
      tile = PerfectTile(&rand_state_, *extent, n);
    } else {
      if (n < 2) ValueError("Cannot tile a loop into " + std::to_string(n) + " splits");
      if (max_innermost_factor < 1) {
        ValueError("sample_perfect_tile: max_innermost_factor must be positive or -1");
      }
      do {
        tile = PerfectTile(&rand_state_, *extent, n);
      } while (tile.back() > max_innermost_factor);
    }
    std::vector<ExprRV> out;
    for (int64_t f : tile) out.push_back(NewExprRV(IntConst(DataType::Int(32), f)));
    Instruction inst{"sample_perfect_tile",
                     {{"loop", TraceValue::Of(RV(loop))},
                      {"n", TraceValue::Int(n)},
                      {"max_innermost_factor", TraceValue::Int(max_innermost_factor)}},
                     std::vector<RV>(out.begin(), out.end()),
                     true};
    inst.decision = IntList(tile);
    Record(std::move(inst));
    return out;
  });
}

std::vector<ExprRV> Schedule::SamplePartitionedTile(const LoopRV& loop, int n, int partition_pos,
                                                    int innerpart_factor,
                                                    std::optional<std::vector<int64_t>> decision) {
  return Run("sample_partitioned_tile", [&] {
    const ForNode* l = LoopOf(LoopSRef(loop));
    if (n < 2) ValueError("Cannot tile a loop into " + std::to_string(n) + " splits");
    if (partition_pos < 0 || partition_pos >= n) {
      ValueError("sample_partitioned_tile: partition_pos must be in [0, n)");
    }
    if (innerpart_factor < 1) {
      ValueError("sample_partitioned_tile: innerpart_factor must be positive");
    }
    std::optional<int64_t> extent = ConstExtent(l);
    auto inner_product = [&](const std::vector<int64_t>& tile) {
      int64_t p = 1;
      for (int i = partition_pos; i < n; ++i) p *= tile[i];
      return p;
    };
    std::vector<int64_t> tile;
    if (!extent || *extent % innerpart_factor != 0) {
      tile.assign(n, 1);
      tile[0] = -1;
    } else if (decision) {
      if (static_cast<int>(decision->size()) != n) {
        ValueError("sample_partitioned_tile: the decision has " + std::to_string(decision->size()) +
                   " factors where n = " + std::to_string(n));
      }
      if (inner_product(*decision) % innerpart_factor != 0) {
        tile.assign(n, 1);
        tile[0] = *extent / innerpart_factor;
        tile[partition_pos] = innerpart_factor;
      } else {
        tile = RepairTile(*decision, *extent);
      }
    } else {
      do {
        tile = PerfectTile(&rand_state_, *extent, n);
      } while (inner_product(tile) % innerpart_factor != 0);
    }
    std::vector<ExprRV> out;
    for (int64_t f : tile) out.push_back(NewExprRV(IntConst(DataType::Int(32), f)));
    Instruction inst{"sample_partitioned_tile",
                     {{"loop", TraceValue::Of(RV(loop))},
                      {"n", TraceValue::Int(n)},
                      {"partition_pos", TraceValue::Int(partition_pos)},
                      {"innerpart_factor", TraceValue::Int(innerpart_factor)}},
                     std::vector<RV>(out.begin(), out.end()),
                     true};
    inst.decision = IntList(tile);
    Record(std::move(inst));
    return out;
  });
}

LoopRV Schedule::SampleComputeLocation(const BlockRV& block, std::optional<int64_t> decision) {
  return Run("sample_compute_location", [&] {
    StmtSRef block_sref = BlockSRef(block);
    // The candidates, by index: -2 inline (when possible), -1 root, then the loops above the
    // first consumer, outermost first, down to where every consumer is, that compute_at takes.
    std::vector<std::pair<int64_t, StmtSRef>> candidates;
    if (Try([&] { schedule::ComputeInline(state_, block_sref); })) {
      candidates.emplace_back(-2, inline_mark_);
    }
    candidates.emplace_back(-1, root_mark_);
    std::vector<StmtSRef> consumers = schedule::GetConsumers(state_, block_sref);
    if (!consumers.empty()) {
      std::vector<const StmtSRefNode*> nodes;
      for (const StmtSRef& c : consumers) nodes.push_back(c.get());
      const StmtSRefNode* boundary =
          consumers.size() > 1 ? LowestCommonAncestor(nodes) : consumers[0]->parent;
      if (boundary && boundary->loop()) {
        std::vector<StmtSRef> loops = schedule::GetLoops(state_, consumers[0]);
        size_t count = 0;
        while (count < loops.size() && loops[count].get() != boundary) ++count;
        if (count < loops.size()) {
          ++count;
          std::vector<IterVarType> types;
          int last_data_par = -1;
          for (size_t i = 0; i < count; ++i) {
            types.push_back(LoopIterType(loops[i]->loop()));
            if (types.back() == IterVarType::kDataPar) last_data_par = static_cast<int>(i);
          }
          bool seen_reduce = false;
          for (size_t i = 0; i < count; ++i) {
            const ForNode* l = loops[i]->loop();
            if (IsConstInt(l->extent, 1)) continue;
            if (types[i] == IterVarType::kDataPar) {
              if (seen_reduce) break;
            } else {
              seen_reduce = true;
              if (static_cast<int>(i) > last_data_par) break;
            }
            StmtSRef loop_sref = loops[i];
            if (Try([&] { schedule::ComputeAt(state_, block_sref, loop_sref, true, -1); })) {
              candidates.emplace_back(static_cast<int64_t>(i), loop_sref);
            }
          }
        }
      }
    }
    size_t chosen;
    if (decision) {
      // The recorded location if it is still a candidate, else the nearest one outside it.
      auto it = std::lower_bound(candidates.begin(), candidates.end(), *decision,
                                 [](const auto& c, int64_t d) { return c.first < d; });
      if (it != candidates.end() && it->first == *decision) {
        chosen = it - candidates.begin();
      } else if (it != candidates.begin()) {
        chosen = it - candidates.begin() - 1;
      } else {
        chosen = SIZE_MAX;
      }
    } else {
      chosen = UniformInt(&rand_state_, 0, static_cast<int32_t>(candidates.size()));
    }
    StmtSRef sref = chosen == SIZE_MAX ? root_mark_ : candidates[chosen].second;
    int64_t index = chosen == SIZE_MAX ? -1 : candidates[chosen].first;
    LoopRV rv = NewRV<LoopRVNode>(sref);
    Instruction inst{"sample_compute_location", {{"block", TraceValue::Of(RV(block))}}, {rv}};
    inst.decision = TraceValue::Int(index);
    Record(std::move(inst));
    return rv;
  });
}

void Schedule::UndoSymbols(size_t mark) {
  while (symbol_undo_.size() > mark) {
    SymbolUndo& undo = symbol_undo_.back();
    symbols_.erase(undo.key);
    expr_symbols_.erase(undo.key);
    if (undo.symbol) symbols_[undo.key] = std::move(*undo.symbol);
    if (undo.expr_symbol) expr_symbols_[undo.key] = std::move(*undo.expr_symbol);
    symbol_undo_.pop_back();
  }
}

void Schedule::RemoveRV(const RV& rv) {
  Run("remove_rv", [&] {
    if (!rv) ValueError("remove_rv: the handle is None");
    if (!symbols_.count(rv.get()) && !expr_symbols_.count(rv.get())) {
      ValueError("remove_rv: the handle does not belong to this schedule");
    }
    // As in TVM, not an instruction of the trace.
    SymbolUndo undo{rv.get(), std::nullopt, std::nullopt};
    if (auto it = symbols_.find(rv.get()); it != symbols_.end()) undo.symbol = it->second;
    if (auto it = expr_symbols_.find(rv.get()); it != expr_symbols_.end()) {
      undo.expr_symbol = it->second;
    }
    symbol_undo_.push_back(std::move(undo));
    symbols_.erase(rv.get());
    expr_symbols_.erase(rv.get());
  });
}

void Schedule::EnterPostproc() {
  Run("enter_postproc", [&] { Record({"enter_postproc", {}, {}}); });
}

}  // namespace schedule
}  // namespace tessera
