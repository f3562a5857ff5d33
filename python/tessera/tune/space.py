"""The design space the tuner searches: schedules written with tir.Schedule's sampling
instructions, so that every candidate is a list of decisions and its trace replays exactly.

Rules, applied block by block (consumers first):

* **matmul-like** blocks (``Out[.., i, j] += Lhs[.., i, r] * Rhs[.., r, j]``, leading batch
  axes allowed): a register tile of Out accumulated in a ``local`` cache, ``mr`` rows by ``nv``
  host vectors (``sample_perfect_tile``), Rhs optionally packed into panels (``sample_categorical``),
  the loop order jo/io or io/jo (``sample_categorical``), the outer loops fused and
  parallelized, the reduction decomposed;
* **injective** blocks (no reduction): the loops fused, split into a parallel outer loop and a
  vectorized inner one whose length is sampled;
* other blocks are left as they are.

A decision list records, in order, the factors of each ``sample_perfect_tile`` and the index
of each ``sample_categorical``. ``None`` in a list means "draw it" (from the schedule's seed).
"""

from __future__ import annotations

import random
from typing import Any, List, Optional, Sequence, Tuple

from .. import _core
from ..tir.schedule import Schedule


class _Decisions:
    """Hands out the given decisions in order, drawing the missing ones, and records them."""

    def __init__(self, sch: Schedule, given: Optional[Sequence[Any]]) -> None:
        self.sch = sch
        self.given = list(given) if given is not None else []
        self.taken: List[Any] = []

    def _next(self) -> Any:
        i = len(self.taken)
        return self.given[i] if i < len(self.given) else None

    def tile(self, loop: Any, n: int, max_innermost: int) -> List[Any]:
        d = self._next()
        rvs = self.sch.sample_perfect_tile(loop, n, max_innermost, decision=d)
        self.taken.append([self.sch.get(r) for r in rvs])
        return rvs

    def choice(self, candidates: Sequence[int], probs: Optional[Sequence[float]] = None) -> int:
        d = self._next()
        probs = list(probs) if probs is not None else [1.0 / len(candidates)] * len(candidates)
        rv = self.sch.sample_categorical(list(candidates), probs, decision=d)
        value = self.sch.get(rv)
        self.taken.append(list(candidates).index(value))
        return value


def _is_reduction(block: Any) -> bool:
    return any(str(iv.iter_type).endswith("CommReduce") for iv in block.iter_vars)


def _matmul_like(block: Any) -> bool:
    """Out[.., i, j] = Out[.., i, j] + Lhs[.., i, r] * Rhs[.., r, j] (with an init), float."""
    store = block.body
    if not isinstance(store, _core.BufferStore) or block.init is None:
        return False
    reduce = [iv for iv in block.iter_vars if str(iv.iter_type).endswith("CommReduce")]
    spatial = [iv for iv in block.iter_vars if str(iv.iter_type).endswith("DataPar")]
    if len(reduce) != 1 or len(spatial) < 2 or not str(store.buffer.dtype).startswith("float"):
        return False
    value = store.value
    if not isinstance(value, _core.Add) or not isinstance(value.a, _core.BufferLoad):
        return False
    if not value.a.buffer.same_as(store.buffer) or not isinstance(value.b, _core.Mul):
        return False
    a, b = value.b.a, value.b.b
    if isinstance(a, _core.Cast):
        a = a.value
    if isinstance(b, _core.Cast):
        b = b.value
    if not isinstance(a, _core.BufferLoad) or not isinstance(b, _core.BufferLoad):
        return False
    k = reduce[0].var
    i, j = spatial[-2].var, spatial[-1].var

    def last_two(load: Any) -> List[Any]:
        return [x for x in load.indices[-2:]]

    def is_var(e: Any, v: Any) -> bool:
        return isinstance(e, _core.Var) and e.same_as(v)

    ai, bi = last_two(a), last_two(b)
    ci = [x for x in store.indices[-2:]]
    return (len(ai) == 2 and len(bi) == 2 and is_var(ci[0], i) and is_var(ci[1], j)
            and is_var(ai[0], i) and is_var(ai[1], k) and is_var(bi[0], k) and is_var(bi[1], j))


def _tileable_reduction(block: Any, n_loops: int) -> bool:
    """A reduction with an init whose loops are its iterators, spatial ones first (as te and
    TVMScript write convolutions and contractions), at least two of them spatial."""
    if block.init is None or not isinstance(block.body, _core.BufferStore):
        return False
    kinds = [str(iv.iter_type).endswith("CommReduce") for iv in block.iter_vars]
    if n_loops != len(kinds) or sum(1 for k in kinds if not k) < 2 or not any(kinds):
        return False
    first_reduce = kinds.index(True)
    return all(kinds[first_reduce:]) and str(block.body.buffer.dtype).startswith("float")


class DesignSpace:
    """The schedules of one PrimFunc for a host target, as decision lists.

    >>> space = DesignSpace(func, lanes=8)
    >>> sch, decisions = space.apply(None, seed=1)     # a random point
    >>> sch2, _ = space.apply(decisions)                # the same schedule again
    """

    def __init__(self, func: Any, lanes: int, parallel: bool = True) -> None:
        self.func = func
        self.lanes = max(1, int(lanes))
        self.parallel = parallel

    def apply(self, decisions: Optional[Sequence[Any]] = None, seed: int = 0) -> Tuple[Schedule, List[Any]]:
        """The schedule that ``decisions`` describe (missing ones drawn with ``seed``) and the
        complete decision list. A decision that no longer fits (after a mutation changed an
        earlier one) is drawn again."""
        given = list(decisions) if decisions is not None else []
        for attempt in range(len(given) + 1):
            sch = Schedule(self.func, seed=seed + attempt)
            d = _Decisions(sch, given)
            try:
                self._schedule(sch, d)
                return sch, d.taken
            except Exception:
                if not given:
                    raise
                # Keep the decisions before the one that failed; draw the rest.
                given = given[:max(0, len(d.taken) - 1)] if d.taken else []
        raise RuntimeError("no schedule in the design space fits these decisions")

    def random_decisions(self, rng: random.Random) -> List[Any]:
        return self.apply(None, seed=rng.randrange(1, 2**30))[1]

    def mutate(self, decisions: Sequence[Any], rng: random.Random) -> Tuple[Schedule, List[Any]]:
        """A neighbour: one decision drawn again (and those after it kept where they fit)."""
        given: List[Any] = list(decisions)
        if given:
            given[rng.randrange(len(given))] = None
        return self.apply(given, seed=rng.randrange(1, 2**30))

    # ---- rules ----

    def _schedule(self, sch: Schedule, d: _Decisions) -> None:
        names = []
        _core.post_order_visit(self.func.body, lambda n: names.append(n.name_hint)
                               if isinstance(n, _core.Block) and n.name_hint != "root" else None)
        for name in reversed(names):  # consumers first: producers then see their final loops
            block_rv = sch.get_block(name)
            block = sch.get(block_rv)
            if _matmul_like(block):
                self._matmul(sch, d, block_rv, block)
            elif _tileable_reduction(block, len(sch.get_loops(block_rv))):
                self._reduction(sch, d, block_rv, block)
            elif not _is_reduction(block) and not block.alloc_buffers:
                self._injective(sch, d, block_rv)

    def _injective(self, sch: Schedule, d: _Decisions, block_rv: Any) -> None:
        loops = sch.get_loops(block_rv)
        if not loops:
            return
        fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        extent = sch.get(fused).extent
        if not isinstance(extent, _core.IntImm) or extent.value < 2:
            return
        outer, inner = sch.split(fused, d.tile(fused, 2, max(self.lanes * 8, 1)))
        if self.parallel:
            sch.parallel(outer)
        if sch.get(inner).extent.value > 1:
            sch.vectorize(inner)

    def _reduction(self, sch: Schedule, d: _Decisions, block_rv: Any, block: Any) -> None:
        """A register tile of the two innermost spatial loops (rows x host vectors) with the
        reduction loops outside it, the output tile in a local cache, the outer spatial loops
        fused and parallel (convolutions, contractions)."""
        loops = sch.get_loops(block_rv)
        n_spatial = sum(1 for iv in block.iter_vars if str(iv.iter_type).endswith("DataPar"))
        *outer_s, i, j = loops[:n_spatial]
        reduce = loops[n_spatial:]
        cc = sch.cache_write(block_rv, 0, "local")
        io, ii = sch.split(i, d.tile(i, 2, 8))
        j_ext = sch.get(j).extent.value
        lanes = self.lanes if j_ext % self.lanes == 0 else 1
        jo, jv = sch.split(j, [None, lanes])
        jo, jn = sch.split(jo, d.tile(jo, 2, 4))
        sch.reorder(*outer_s, io, jo, *reduce, ii, jn, jv)
        sch.reverse_compute_at(cc, jo)
        if lanes > 1:
            sch.vectorize(jv)
            sch.vectorize(sch.get_loops(cc)[-1])
        sch.unroll(jn)
        sch.unroll(ii)
        if self.parallel:
            fuse_n = d.choice([1, 2, 3]) if len(outer_s) >= 2 else 1
            par = [*outer_s, io][:max(1, min(fuse_n, len(outer_s) + 1))]
            sch.parallel(sch.fuse(*par) if len(par) > 1 else par[0])
        sch.decompose_reduction(block_rv, reduce[0])

    def _matmul(self, sch: Schedule, d: _Decisions, block_rv: Any, block: Any) -> None:
        loops = sch.get_loops(block_rv)
        *batch, i, j, k = loops
        pack = d.choice([0, 1])
        if pack:
            # B as panels of nr columns, each contiguous along k.
            packed = sch.cache_read(block_rv, 1, "global")
        cc = sch.cache_write(block_rv, 0, "local")
        mr_tile = d.tile(i, 2, 16)
        io, ii = sch.split(i, mr_tile)
        jv_o, jv = sch.split(j, [None, self.lanes])
        nv_tile = d.tile(jv_o, 2, 4)
        jo, jn = sch.split(jv_o, nv_tile)
        order = d.choice([0, 1])
        outer = [jo, io] if order == 0 else [io, jo]
        sch.reorder(*batch, *outer, k, ii, jn, jv)
        sch.reverse_compute_at(cc, outer[-1])
        sch.vectorize(jv)
        sch.unroll(jn)
        sch.unroll(ii)
        sch.vectorize(sch.get_loops(cc)[-1])
        if self.parallel:
            par = sch.fuse(*batch, outer[0]) if batch else outer[0]
            sch.parallel(par)
        if pack:
            nr = self.lanes * sch.get(jn).extent.value
            n_b = len(block.iter_vars) - 1
            sch.transform_layout(packed, ("write", 0), _panel_map(n_b, nr))
            ploops = sch.get_loops(packed)
            pk, pj = ploops[-2], ploops[-1]
            pjo, pji = sch.split(pj, [None, nr])
            sch.reorder(pjo, pk, pji)
            if self.parallel:
                sch.parallel(sch.fuse(*ploops[:-2], pjo) if len(ploops) > 2 else pjo)
            sch.vectorize(pji)
        sch.decompose_reduction(block_rv, k)


def _panel_map(ndim: int, nr: int) -> Any:
    """(.., k, j) -> (.., j // nr, k, j % nr) for a B of ``ndim`` dimensions."""
    if ndim == 2:
        return lambda k, j: (j // nr, k, j % nr)
    if ndim == 3:
        return lambda b, k, j: (b, j // nr, k, j % nr)
    if ndim == 4:
        return lambda b, h, k, j: (b, h, j // nr, k, j % nr)
    raise ValueError(f"no panel layout for a {ndim}-dimensional B")


class RuleSpace:
    """The automatic schedule's rules as a design space (the tuner's default).

    Every choice the rules of ``tessera.autoschedule`` make for a block (register tile of a
    matmul-like block, packing of either operand into panels, the order of the tile loops,
    unrolling of the reduction, vector chunks of injective blocks) is a ``sample_categorical``
    in the schedule's trace, the rules' own choice the most likely. A point is the list of the
    indices taken, in order; ``default()`` is the automatic schedule itself.

    >>> space = RuleSpace(func, "c")
    >>> sch, decisions = space.default()             # what ts.autoschedule picks
    >>> sch2, d2 = space.apply(None, seed=7)         # a random point
    >>> sch3, _ = space.apply(d2)                    # the same schedule again
    """

    def __init__(self, func: Any, target: str = "c", parallel: bool = True,
                 facts: Optional[dict] = None) -> None:
        from ..autoschedule import _target

        self.func = func
        facts = dict(facts or {})
        if not parallel:
            facts["cores"] = 1
        self._target_obj = _target(target, facts)
        self._sizes: dict = {}  # decision list -> the number of candidates of each choice

    def _point(self, given: Sequence[int], seed: int, draw_missing: bool) -> Tuple[Schedule, List[int]]:
        from ..tir.schedule.schedule import _as_module

        raw, decisions, sizes = _core.auto_schedule_space(
            _as_module(self.func), self._target_obj,
            [int(d) if d is not None else -1 for d in given], int(seed), draw_missing)
        self._sizes[tuple(decisions)] = list(sizes)
        return Schedule._wrap(raw), list(decisions)

    def default(self) -> Tuple[Schedule, List[int]]:
        """The automatic schedule: every choice the rules' own."""
        return self._point([], 1, draw_missing=False)

    def apply(self, decisions: Optional[Sequence[Any]] = None, seed: int = 0) -> Tuple[Schedule, List[int]]:
        """The schedule that ``decisions`` describe (missing ones, ``None`` and those out of
        range drawn with ``seed``) and its complete decision list."""
        return self._point(list(decisions or []), seed if seed > 0 else 1, draw_missing=True)

    def random_decisions(self, rng: random.Random) -> List[int]:
        return self.apply(None, seed=rng.randrange(1, 2**30))[1]

    def neighbours(self, decisions: Sequence[Any]) -> List[Tuple[Schedule, List[int]]]:
        """Every point that differs from ``decisions`` in one choice (the choices after it kept
        where they still fit), without duplicates. The choices take turns: the first other
        candidate of every choice, then the second of those that have one, and so on, so that
        a tuner that measures only the first few still tries every choice (the register tile
        alone has up to 12 candidates)."""
        given = list(decisions)
        sizes = self._sizes.get(tuple(given))
        if sizes is None:
            _, given = self._point(given, 1, draw_missing=False)
            sizes = self._sizes[tuple(given)]
        others = [[c for c in range(n) if c != given[k]] if k < len(given) else []
                  for k, n in enumerate(sizes)]
        out, keys = [], {tuple(given)}
        for turn in range(max((len(o) for o in others), default=0)):
            for k, cands in enumerate(others):
                if turn >= len(cands):
                    continue
                point = list(given)
                point[k] = cands[turn]
                sch, dec = self._point(point, 1, draw_missing=False)
                if tuple(dec) not in keys:
                    keys.add(tuple(dec))
                    out.append((sch, dec))
        return out

    def mutate(self, decisions: Sequence[Any], rng: random.Random) -> Tuple[Schedule, List[int]]:
        """A neighbour: one choice with more than one candidate set to another candidate (the
        choices after it kept where they still fit)."""
        given = list(decisions)
        sizes = self._sizes.get(tuple(given))
        if sizes is None:  # a point this space has not made (e.g. from a database)
            _, given = self._point(given, 1, draw_missing=False)
            sizes = self._sizes[tuple(given)]
        open_ = [k for k, n in enumerate(sizes) if n > 1 and k < len(given)]
        if open_:
            k = rng.choice(open_)
            others = [c for c in range(sizes[k]) if c != given[k]]
            given[k] = rng.choice(others)
        return self.apply(given, seed=rng.randrange(1, 2**30))
