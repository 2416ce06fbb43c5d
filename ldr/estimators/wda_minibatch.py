"""Mini-batch optimal transport in the WDA estimators: when ``batch_size="auto"`` uses it,
with which batches, how its SCF runs stop, and the full-data check of its answer.

With ``batch_size`` rows per class and batch, each pair of classes' transport plan is the mean
of ``n_batches`` plans between fixed random batches of the two classes (mini-batch OT, Fatras
et al. 2020; :class:`ldr.objectives.WDA`): memory and time per evaluation scale with the
batch, not with the class.  The mini-batch objective is itself an estimate of the full-data
one, so solving its fixed point to a subspace change of 1e-6, as the exact fit does, buys
digits of the mini-batch answer that the full-data trace ratio does not see: its SCF runs stop
at :data:`BATCH_STOP`.  Its convergence is that of the mini-batch objective; the full-data
trace ratio at the answer (:func:`full_data_check`) says how good the answer is for the data.

References
----------
K. Fatras, Y. Zine, R. Flamary, R. Gribonval and N. Courty, "Learning with minibatch
Wasserstein: asymptotic and gradient properties", AISTATS 2020.
"""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.driver.loop import solve
from ldr.estimators.base import random_seed
from ldr.solvers.scf import SCF

__all__ = ["AUTO_BATCH", "BATCH_STOP", "BATCH_XTOL", "EXACT_MAX_CLASS", "FULL_CHECK_MAX_CLASS",
           "batch_options", "batch_stop", "continuation_start", "full_data_check"]

#: ``batch_size="auto"``: exact plans while the largest class has at most this many rows —
#: about the class size (2896 rows) past which a pair's reference kernel (complex, 16 bytes an
#: entry) no longer fits the half of the default memory budget (256 MiB) that stores it, so
#: that every Sinkhorn iteration recomputes the kernel by row blocks; beyond, mini-batches of
#: :data:`AUTO_BATCH` rows
EXACT_MAX_CLASS = 3000
#: rows per class and batch past :data:`EXACT_MAX_CLASS`: a batch pair's kernel is small
#: (4 MB) and each class's ``n_batches`` = 2 default batches hold 1000 rows, so that the
#: within-class scatter they estimate is non-singular on tables of up to that many features
AUTO_BATCH = 500
#: SCF's subspace-change tolerance on a mini-batch objective: its answer carries the batches'
#: sampling error (the objective estimates the full-data one), which a fixed point refined
#: further does not reduce (module docstring)
BATCH_XTOL = 1e-3
#: SCF's stopping rule on a mini-batch objective, the coarse problem of the continuation start
#: included: the fixed-point residual <= xtol, or the mini-batch trace ratio moved by at most
#: ftol, relatively, over the last fwindow iterations; an exact fit keeps xtol 1e-6
BATCH_STOP = {"xtol": BATCH_XTOL, "ftol": 1e-3, "fwindow": 5}
#: the full-data check after a mini-batch fit runs while the largest class has at most this
#: many rows: one exact cost evaluation with each pair's reference kernel stored (one ``exp``
#: pass per pair instead of one per Sinkhorn half-iteration), which at 8000 rows (complex, 16
#: bytes an entry) still fits the 1 GiB the check allows itself; beyond, ``full_data_`` says
#: that it was skipped
FULL_CHECK_MAX_CLASS = 8000


def batch_options(batch_size, n_batches, random_state, y) -> dict:
    """The mini-batch keywords of :class:`ldr.objectives.WDA` for the labels ``y``: ``{}`` for
    exact plans (``batch_size`` None, or ``"auto"`` while the largest class has at most
    :data:`EXACT_MAX_CLASS` rows), else ``batch_size`` (``"auto"``: :data:`AUTO_BATCH`),
    ``n_batches`` and the seed of the batches."""
    size = batch_size
    if size is None:
        return {}
    if isinstance(size, str):
        if size != "auto":
            raise ParameterError("batch_size", f"expected 'auto', None or an integer >= 2, "
                                 f"got {size!r}")
        largest = int(np.max(np.unique(np.asarray(y), return_counts=True)[1]))
        if largest <= EXACT_MAX_CLASS:
            return {}
        size = AUTO_BATCH
    return {"batch_size": size, "n_batches": n_batches,
            "random_state": random_seed(random_state)}


def batch_stop(solver_params) -> dict:
    """SCF's stopping options on a mini-batch objective: :data:`BATCH_STOP`, or only xtol
    1e-6 where ``solver_params`` sets xtol, ftol or fwindow itself (then those apply, over
    this default)."""
    params = solver_params if isinstance(solver_params, dict) else {}
    if {"xtol", "ftol", "fwindow"} & set(params):
        return {"xtol": 1e-6}
    return dict(BATCH_STOP)


def continuation_start(obj, stop: dict):
    """SCF's continuation start on a mini-batch objective: the top-p generalized eigenvectors
    of the pencil at the fixed point of the coarse problem (reg × the objective's
    ``continuation``), that problem solved to the stopping rule ``stop``
    (:data:`BATCH_STOP`) instead of the driver's xtol 1e-6 (:func:`ldr.driver.loop.initial_point`
    with ``solver=SCF()`` otherwise)."""
    coarse = obj.coarse_problem()
    scf = SCF()
    problem = Problem(obj)
    if coarse is None:
        return problem.manifold.validate_point(scf.default_start(problem), "SCF start")
    res = solve(coarse, scf, **stop)
    if res.interrupted:  # Ctrl-C before this run had a point
        raise KeyboardInterrupt(res.reason)
    return problem.manifold.validate_point(scf.default_start(problem, res.M), "SCF start")


def full_data_check(obj, res) -> dict | None:
    """After a mini-batch fit: the full-data (exact plans) trace ratio at the answer beside
    the mini-batch one, and the result's ``reason`` amended — the solver's convergence is that
    of the mini-batch objective, never a full-data certificate.  None for an exact fit.

    Returns
    -------
    dict or None
        ``batch_ratio`` (the mini-batch trace ratio at ``res.M``), ``full_ratio`` and
        ``relative_gap``, ``(batch − full) / |full|`` (None when the largest class exceeds
        :data:`FULL_CHECK_MAX_CLASS` rows or the rows were read over chunks), ``note``
        (appended to ``res.reason``).
    """
    if obj.exact:
        return None
    largest = int(max(obj.class_counts))
    note = (f"mini-batch OT objective (batch_size {obj.batch_size}, n_batches "
            f"{obj.n_batches}): converged refers to it, not to the full data")
    out = {"batch_ratio": obj.ratio(res.M), "full_ratio": None, "relative_gap": None}
    if obj.lazy:
        note += "; full-data check skipped (the rows were read over chunks)"
    elif largest <= FULL_CHECK_MAX_CLASS:
        check = obj.full_data()  # one forward pass, each pair's kernel stored (<= 1 GiB)
        check.memory_budget = max(check.memory_budget, min(2.0**30, 2.5 * 8 * largest**2))
        full = check.ratio(res.M)
        out["full_ratio"] = full
        out["relative_gap"] = (out["batch_ratio"] - full) / abs(full)
        note += (f"; full-data trace ratio {full:.6g} vs mini-batch "
                 f"{out['batch_ratio']:.6g}")
    else:
        note += (f"; full-data check skipped (largest class {largest} > "
                 f"{FULL_CHECK_MAX_CLASS} rows)")
    out["note"] = note
    res.reason = f"{res.reason} [{note}]"
    return out
