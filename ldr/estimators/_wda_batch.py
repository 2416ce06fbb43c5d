"""WassersteinDA's mini-batch mode (issue 25): when ``batch_size="auto"`` uses it, with which
batches, and the looser stopping rule of its SCF runs (``ldr.estimators.wda``).

A mini-batch objective is itself an approximation of the full-data one (each pair of
classes' plan is the mean of ``n_batches`` plans between random batches): solving its
fixed point to a subspace change of 1e-6, as the exact fit does, buys digits of the
mini-batch answer that the full-data trace ratio does not see.  The numbers behind the
constants are in ``benchmarks/results/bench_wda_scale.txt``.
"""

from __future__ import annotations

import numpy as np

from ldr.driver import solve
from ldr.errors import ParameterError
from ldr.estimators._base import seed_of
from ldr.problem import Problem
from ldr.solvers.scf import SCF

#: ``batch_size="auto"``: exact (tiled) plans while the largest class has at most this many
#: rows; beyond, mini-batch OT with :data:`AUTO_BATCH` rows per class and batch
EXACT_MAX_CLASS = 3000
AUTO_BATCH = 500
#: SCF's stopping rule on a mini-batch objective, the coarse problem of the continuation
#: start included: the fixed-point residual ≤ xtol, or the (mini-batch) trace ratio moved by
#: at most ftol, relatively, over the last fwindow iterations; an exact fit keeps xtol 1e-6.
#: Chosen at d = 20; at d = 784 (70 000 rows) the near-chance answer once blamed on it came
#: from batches drawn per pair (``WDA._draw_batches``): with one batch per class shared by
#: its pairs, SCF meets xtol after 1 iteration there and the answer beats exact WDA on a
#: 5000-row subsample (``benchmarks/results/bench_wda_scale.txt``)
BATCH_XTOL = 1e-3
BATCH_STOP = {"xtol": BATCH_XTOL, "ftol": 1e-3, "fwindow": 5}


def batching(estimator, y) -> dict:
    """The objective's mini-batch keywords from ``estimator.batch_size`` (``"auto"``: exact
    plans up to :data:`EXACT_MAX_CLASS` rows in the largest class, else :data:`AUTO_BATCH`);
    sets ``estimator.batch_size_`` (None: exact)."""
    size = getattr(estimator, "batch_size", None)
    if size is None or y is None:
        estimator.batch_size_ = None
        return {}
    if isinstance(size, str):
        if size != "auto":
            raise ParameterError("batch_size", f"expected 'auto', None or an integer >= 2, "
                                 f"got {size!r}")
        largest = int(np.max(np.unique(np.asarray(y), return_counts=True)[1]))
        size = None if largest <= EXACT_MAX_CLASS else AUTO_BATCH
    estimator.batch_size_ = size
    return {"batch_size": size, "n_batches": estimator.n_batches,
            "random_state": seed_of(estimator.random_state)}


def batch_stop(estimator) -> dict:
    """:data:`BATCH_STOP`, or only xtol 1e-6 where ``solver_params`` sets xtol, ftol or
    fwindow itself (then those apply, over these defaults)."""
    params = getattr(estimator, "solver_params", None) or {}
    if isinstance(params, dict) and {"xtol", "ftol", "fwindow"} & set(params):
        return {"xtol": 1e-6}
    return dict(BATCH_STOP)


def continuation_start(obj, stop: dict):
    """SCF's continuation start (:func:`ldr.driver.initial_point` with ``solver=SCF()``) with
    the coarse problem solved to the stopping rule ``stop`` (:data:`BATCH_STOP`) instead of
    the driver's xtol 1e-6: the top-p generalized eigenvectors of the pencil at the coarse
    problem's fixed point."""
    coarse = obj.coarse_problem()
    scf = SCF()
    problem = Problem(obj)
    if coarse is None:
        return problem.manifold.validate_point(scf.default_start(problem), "SCF start")
    res = solve(coarse, scf, **stop)
    if res.interrupted:  # Ctrl-C before this run had a point
        raise KeyboardInterrupt(res.reason)
    return problem.manifold.validate_point(scf.default_start(problem, res.M), "SCF start")
