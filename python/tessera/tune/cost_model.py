"""The cost model: gradient-boosted trees (xgboost) trained online on the candidates measured so
far, predicting each candidate's speed (log of runs per second) from its features."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence

import numpy as np


class XGBModel:
    """Ranks candidates; untrained (fewer than ``min_samples`` results) it ranks at random."""

    def __init__(self, min_samples: int = 8, seed: int = 0) -> None:
        self.min_samples = min_samples
        self.seed = seed
        self._x: List[List[float]] = []
        self._y: List[float] = []
        self._booster = None

    @property
    def trained(self) -> bool:
        return self._booster is not None

    def update(self, feats: Sequence[Sequence[float]], seconds: Sequence[Optional[float]]) -> None:
        """Add results (None for a failed candidate: the slowest class) and retrain."""
        for f, s in zip(feats, seconds):
            self._x.append(list(f))
            self._y.append(-math.log(s) if s else float("nan"))
        if len([y for y in self._y if y == y]) < self.min_samples:
            return
        import xgboost as xgb

        y = np.array(self._y, dtype="float64")
        worst = np.nanmin(y) - 1.0 if np.isfinite(y).any() else 0.0
        y = np.where(np.isnan(y), worst, y)
        # Normalised so that the trees see relative speed.
        y = (y - y.mean()) / (y.std() + 1e-9)
        dtrain = xgb.DMatrix(np.array(self._x, dtype="float32"), label=y)
        params = {"max_depth": 6, "eta": 0.2, "subsample": 1.0, "min_child_weight": 1,
                  "objective": "reg:squarederror", "seed": self.seed, "nthread": 1, "verbosity": 0}
        self._booster = xgb.train(params, dtrain, num_boost_round=60)

    def predict(self, feats: Sequence[Sequence[float]]) -> np.ndarray:
        """Higher is faster."""
        if self._booster is None or not feats:
            rng = np.random.default_rng(self.seed + len(self._x))
            return rng.random(len(feats))
        import xgboost as xgb

        return self._booster.predict(xgb.DMatrix(np.array(feats, dtype="float32")))
