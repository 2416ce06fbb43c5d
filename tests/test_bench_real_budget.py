"""bench_real's budget per fit: ``--budget``, or ``--relative-budget`` × the counterpart's fit
time on that table where that is longer (the counterpart is fitted first)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

from sklearn.base import BaseEstimator
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _tables  # noqa: E402
import bench_real  # noqa: E402
from _real_report import Run  # noqa: E402

ARGS = SimpleNamespace(budget=60.0, relative_budget=3.0, counterpart_budget=300.0, repeats=1,
                       max_rows=None,
                       cv=False, folds=5)


def test_the_budget_is_three_times_a_slow_counterparts_time_and_60_s_otherwise():
    assert bench_real._budget(ARGS, Run(finished=True, seconds=157.0)) == 471.0
    assert bench_real._budget(ARGS, Run(finished=True, seconds=4.0)) == 60.0
    over = Run(finished=False, error="over the 300 s budget")
    assert bench_real._budget(ARGS, over) == 300.0
    assert bench_real._budget(ARGS, Run(finished=False, error="ValueError: x")) == 60.0


class _Slow(BaseEstimator):
    """A counterpart that takes ``seconds`` to fit."""

    def __init__(self, seconds=0.0):
        self.seconds = seconds

    def fit(self, X, y=None):
        time.sleep(self.seconds)
        return self


def _row(counterpart_seconds, budget, relative=3.0):
    spec = bench_real.Spec("PCA", ("classes",), lambda t: PCA(2),
                           lambda t: ("slow", _Slow(counterpart_seconds)),
                           score="none", supervised=False)
    iris = _tables.Table("iris", "classes", *load_iris(return_X_y=True), "")
    return bench_real.run_one(spec, iris, SimpleNamespace(
        **{**vars(ARGS), "budget": budget, "relative_budget": relative}))


def test_a_fit_over_the_budget_finishes_when_the_counterpart_took_a_third_of_it_or_more():
    slow = _row(0.4, budget=1e-4)       # the counterpart's 0.4 s gives PCA 1.2 s
    assert slow["theirs"].finished and slow["budget"] >= 1.2
    assert slow["ours"].finished, slow["ours"].error
    fast = _row(0.0, budget=1e-4, relative=0.01)   # PCA's fit (≥ 0.3 ms) is over 0.1 ms
    assert fast["budget"] == 1e-4
    assert not fast["ours"].finished and fast["ours"].error == "over the 0.0001 s budget"
