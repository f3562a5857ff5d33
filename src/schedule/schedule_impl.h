// The templates behind Schedule's primitives (running one with rollback, new handles), shared
// by the source files that define Schedule methods.
#pragma once

#include "tessera/schedule/schedule.h"
#include "tessera/support/error.h"

namespace tessera {
namespace schedule {

template <class F>
auto Schedule::Run(const char* primitive, F body) -> decltype(body()) {
  ScheduleState::Snapshot snapshot = state_.Save();
  size_t undo_mark = symbol_undo_.size();
  size_t num_insts = trace_.insts.size();
  struct Depth {
    Schedule* self;
    explicit Depth(Schedule* s) : self(s) { ++self->run_depth_; }
    ~Depth() {
      if (--self->run_depth_ == 0) self->symbol_undo_.clear();
    }
  } depth(this);
  auto rollback = [&]() {
    state_.Restore(std::move(snapshot));
    UndoSymbols(undo_mark);
    trace_.insts.resize(num_insts);
  };
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      if (state_.debug_mask() != 0) state_.VerifySRefTree();
    } else {
      auto result = body();
      if (state_.debug_mask() != 0) state_.VerifySRefTree();
      return result;
    }
  } catch (const ScheduleError& e) {
    IRModule mod = snapshot.mod;
    rollback();
    throw Error(e.Render(mod, primitive, error_render_level_), Span(), ErrorKind::kSchedule);
  } catch (...) {
    rollback();
    throw;
  }
}

template <class R>
std::shared_ptr<R> Schedule::NewRV(const StmtSRef& sref) {
  auto rv = std::make_shared<R>();
  symbols_[rv.get()] = {rv, sref};
  LogNewSymbol(rv.get());
  return rv;
}

}  // namespace schedule
}  // namespace tessera
