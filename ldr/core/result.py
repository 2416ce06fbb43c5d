"""What a run returns: the Result, its per-iteration Trace and the optimality Certificate."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Trace:
    """Per-iteration records of a run.

    ``trace[i]`` is the dict of iteration ``i`` (iteration 0 is the start point);
    ``trace["cost"]`` is that column as an array (NaN where a row lacks the key).
    Every row has ``iteration``, ``time`` (seconds since the start), ``cost``, ``grad_norm``,
    ``change`` (largest principal-angle sine from the previous iterate; NaN at the start) and
    ``stage`` (index of the solver in a chain); solvers add their own keys (``step_size``,
    ``radius``, ``inner``, ``eigengap``, ...).
    """

    def __init__(self, rows: list[dict] | None = None):
        self.rows: list[dict] = rows or []

    def append(self, row: dict) -> None:
        self.rows.append(row)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)

    def __getitem__(self, key):
        if isinstance(key, str):
            if not any(key in row for row in self.rows):
                raise KeyError(f"trace has no column {key!r}; columns: {self.columns}")
            return np.array([row.get(key, np.nan) for row in self.rows], dtype=float)
        return self.rows[key]

    @property
    def columns(self) -> list[str]:
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def __repr__(self) -> str:
        return f"Trace({len(self)} rows, columns={self.columns})"


@dataclass
class Certificate:
    """Optimality certificate at a point.

    ``grad_norm`` is the Riemannian gradient norm; ``hess_min``/``hess_max`` the extreme
    eigenvalues of the Riemannian Hessian restricted to the tangent space (horizontal space on
    Grassmann), whose dimension is ``dim``.  ``is_local_min`` holds when the gradient is below
    ``tol · grad_scale`` and ``hess_min ≥ −hess_tol · max(|hess_max|, |hess_min|)`` (relative, so
    the verdict does not depend on the data's units).

    :attr:`second_order` reads the spectrum where the gradient is ≈ 0 without calling a
    rounding-level or flat negative curvature a saddle: curvatures within √tol (1e-4 at the
    default tol = 1e-8: the ε_H = √ε_g of approximate second-order stationarity) of the
    curvature scale — the Hessian's largest absolute eigenvalue, or the problem's gradient scale
    where the whole spectrum is smaller (a plateau) — count as 0.

    ``global_optimum`` is True/False where the objective has a global optimality test
    (``global_gap``: a quotient of traces, PCA), decided on ``global_gap ≤ global_tol``, and
    None where no global test is known.  ``global_gap`` is an upper bound on the relative
    suboptimality ``(f(M) − f*)/|f*|`` (see each objective's ``global_gap``).
    """

    grad_norm: float
    hess_min: float
    hess_max: float
    dim: int
    tol: float
    hess_tol: float
    method: str
    grad_scale: float = 1.0
    global_gap: float | None = None
    global_tol: float = 1e-8

    @property
    def psd(self) -> bool:
        size = max(abs(self.hess_max), abs(self.hess_min), 1e-300)
        return self.hess_min >= -self.hess_tol * size

    @property
    def is_local_min(self) -> bool:
        return self.grad_norm <= self.tol * self.grad_scale and self.psd

    @property
    def flat_tol(self) -> float:
        """Curvatures below this (absolute) count as 0 (class docstring)."""
        size = max(abs(self.hess_max), abs(self.hess_min), self.grad_scale, 1e-300)
        return float(np.sqrt(self.tol or 1e-8)) * size

    @property
    def second_order(self) -> str:
        """The Hessian's spectrum in one word: ``"positive"`` (⪰ 0, ``psd``),
        ``"flat"`` (a negative eigenvalue within :attr:`flat_tol` of 0 while others are
        not: a minimum along flat directions, to the precision the gradient allows),
        ``"plateau"`` (every eigenvalue within √tol · grad_scale of 0: the cost is flat
        here in every direction), ``"negative"`` (a saddle) or ``"unknown"`` (not
        computed)."""
        if not (np.isfinite(self.hess_min) and np.isfinite(self.hess_max)):
            return "unknown"
        if max(abs(self.hess_max), abs(self.hess_min)) <= float(
                np.sqrt(self.tol or 1e-8)) * self.grad_scale:
            return "plateau"
        if self.psd:
            return "positive"
        return "flat" if -self.hess_min <= self.flat_tol else "negative"

    @property
    def global_optimum(self) -> bool | None:
        if self.global_gap is None:
            return None
        return bool(self.global_gap <= self.global_tol)

    def __str__(self) -> str:
        verdict = "second-order critical" if self.is_local_min else "NOT certified"
        text = (
            f"‖grad‖ = {self.grad_norm:.3e}, Hessian spectrum on the {self.dim}-dim tangent "
            f"space in [{self.hess_min:.4g}, {self.hess_max:.4g}] ({self.method}): {verdict}"
        )
        if self.global_gap is not None:
            text += (f"; global optimum: {self.global_optimum} (relative gap ≤ "
                     f"{self.global_gap:.2e})")
        return text


@dataclass
class StageSummary:
    solver: str
    n_iter: int
    reason: str
    converged: bool


@dataclass
class Result:
    """The outcome of :func:`ldr.solve`.

    Attributes
    ----------
    M : the final point (d×r orthonormal array, or a tuple on a product manifold)
    cost : its cost
    converged : whether a convergence criterion (not a budget) stopped the last stage
    reason : the readable stopping reason
    n_iter : iterations over all stages
    time : seconds, wall clock
    grad_norm : Riemannian gradient norm at ``M``
    trace : per-iteration :class:`Trace`
    stages : one :class:`~ldr.core.result.StageSummary` per solver of a chain
    counts : oracle evaluations (``cost``, ``grad``, ``hvp``, ``phi``, ``pencil``; ``batch``
        calls of a stochastic solver and the ``terms`` they summed)
    certificate : a :class:`Certificate` when requested (``certify=True``)
    grad_scale : the gradient scale that ``tol`` was relative to (NaN for a run that
        computed no gradient); the run's absolute gradient tolerance is ``tol · grad_scale``
    tol : the relative gradient tolerance the run used (``ldr.solve``'s ``tol``, or the
        solver's default; :mod:`ldr.core.stopping`): converged means ‖grad‖ ≤ tol ·
        grad_scale at ``M`` (0: the gradient rule was off, and the solver's default judged
        the other stops)
    budget : the budget that stopped the run, ``"max_time"`` or ``"max_iter"``; ``""`` when a
        convergence rule, a stall or a non-finite value stopped it
    interrupted : whether a ``KeyboardInterrupt`` ended the run (``reason`` starts
        ``"interrupted"``; ``M`` is the last evaluated iterate: pass the Result as ``M0`` of
        :func:`ldr.solve` to resume)
    """

    M: Any
    cost: float
    converged: bool
    reason: str
    n_iter: int
    time: float
    grad_norm: float
    trace: Trace
    solver: str
    stages: list[StageSummary] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    certificate: Certificate | None = None
    grad_scale: float = float("nan")
    budget: str = ""
    tol: float = float("nan")

    @property
    def interrupted(self) -> bool:
        return self.reason.startswith("interrupted")

    def __repr__(self) -> str:
        status = "converged" if self.converged else "NOT converged"
        return (
            f"Result({self.solver}: cost={self.cost:.10g}, {status} after {self.n_iter} "
            f"iterations in {self.time:.3g}s: {self.reason})"
        )


def summed_counts(*counts: dict) -> dict:
    """Oracle counts of several runs added key by key (a resumed run and its previous
    Result; the two routes of the NCA estimator)."""
    total: dict = {}
    for each in counts:
        for key, value in each.items():
            total[key] = total.get(key, 0) + value
    return total
