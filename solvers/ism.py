"""The Iterative Spectral Method (ISM+ paper, Algorithm 1; KDAC paper, Algorithm 2).

For an objective with a Φ-oracle (``egrad(M) = 2 Φ(M) M``), a critical point satisfies the
eigen-equation Φ(M) M = M Λ, so ISM iterates

    M_{k+1} = the r eigenvectors of Φ(M_k) with the smallest eigenvalues,

starting from the minimizing eigenvectors of Φ₀ (``phi0()``) when the objective has one.
At a fixed point with a positive eigengap E = λ_{r+1} − λ_r (ISM+ Eq. 49), the second-order
necessary conditions hold (Theorem 1); the eigengap is reported in the trace.  The driver
stops ISM on the largest principal angle between iterates (``xtol``), not on the papers'
eigenvalue-change surrogate.

ISM is not a descent method.  This implementation therefore

* remembers the best point it has seen and returns it if the last iterate is worse;
* detects cycling (an iterate returning to the subspace of one p ≥ 2 steps back) and
  stagnation (no new best cost for ``patience`` iterations) and stops, not converged,
  saying so — polish such a point with the trust region: ``solver=["ism", "trust-region"]``;
* optionally damps Φ: Φ̃_k = (1 − α) Φ(M_k) + α Φ̃_{k−1}.

On a quotient of traces (LDA, MAF), Φ(M) = −(A − ρ(M)B)/tr(MᵀBM) and ISM is the classical
trace-ratio iteration, which increases ρ monotonically to the global optimum.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import scipy.linalg

from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.data import arrays
from ldr.manifolds import sin_largest_angle
from ldr.solvers.base import Solver, State


def minimizing_eigenvectors(Phi: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """``(V, w)``: the r eigenvectors of symmetric Φ with the smallest eigenvalues, and the
    r + 1 smallest eigenvalues (for the eigengap).  Φ of another namespace than NumPy (a
    PyTorch tensor, on a GPU or not): its ``linalg.eigh``, there."""
    d = Phi.shape[0]
    if type(Phi) is not np.ndarray and arrays.foreign(Phi) is not None:
        w, V = arrays.eigh(Phi)
        return V[:, :r], w[:min(r, d - 1) + 1]
    w, V = scipy.linalg.eigh(Phi, subset_by_index=[0, min(r, d - 1)])
    return V[:, :r], w


def _float(Phi):
    """Φ as a float array: NumPy float64, or as it is in another namespace."""
    return Phi if arrays.foreign(Phi) is not None else np.asarray(Phi, dtype=float)


class ISM(Solver):
    """Iterative Spectral Method.

    Parameters
    ----------
    damping : float in [0, 1)
        Weight α of the previous Φ in Φ̃_k = (1 − α)Φ(M_k) + αΦ̃_{k−1} (0: plain ISM).
    cycle_tol : float
        Two iterates closer than this (largest principal-angle sine) are the same subspace.
    history : int
        How many past iterates are searched for a cycle.
    patience : int
        Stop (not converged) after this many iterations without a new best cost.
    """

    name = "ism"
    needs = ("phi",)
    single_orthonormal_factor = True

    def __init__(self, damping: float = 0.0, cycle_tol: float = 1e-9, history: int = 8,
                 patience: int = 50):
        if not 0.0 <= damping < 1.0:
            raise ParameterError("damping", f"must lie in [0, 1), got {damping!r}")
        self.damping = damping
        self.cycle_tol = cycle_tol
        self.history = history
        self.patience = patience

    def default_start(self, problem: Problem, at=None):
        """The minimizing eigenvectors of Φ₀ when the objective has ``phi0``; with ``at`` (the
        answer of the objective's coarse problem), those of Φ there."""
        if at is not None:
            Phi0 = _float(problem.objective.phi(at))
        elif problem.provides("phi0"):
            Phi0 = _float(problem.objective.phi0())
        else:
            return None
        return minimizing_eigenvectors(0.5 * (Phi0 + Phi0.T), problem.manifold.shape[1])[0]

    def init(self, problem: Problem, M0) -> State:
        self.check_problem(problem)
        Phi = problem.phi(M0)
        # the true gradient (not 2Φ̃M, which differs under damping); objectives that share
        # work between phi, cost and egrad (HSIC) answer these from their cache
        state = self.evaluate(problem, M0)
        state.memory = {"Phi": Phi, "best": (state.cost, M0), "since_best": 0,
                        "recent": deque([M0], maxlen=self.history)}
        return state

    def step(self, problem: Problem, state: State) -> State:
        mem = state.memory
        r = problem.manifold.shape[1]
        Phi = mem["Phi"]
        M_new, w = minimizing_eigenvectors(Phi, r)
        Phi_new = problem.phi(M_new)
        if self.damping:
            Phi_new = (1.0 - self.damping) * Phi_new + self.damping * Phi
        new = self.evaluate(problem, M_new, iteration=state.iteration + 1)
        eigengap = float(w[r] - w[r - 1]) if w.shape[0] > r else np.nan
        new.info = {"eigengap": eigengap, "lambda_r": float(w[r - 1])}
        best_cost, _ = mem["best"]
        improved = new.cost < best_cost - 1e-15 * abs(best_cost)
        recent = deque(mem["recent"], maxlen=self.history)
        new.memory = {"Phi": Phi_new, "recent": recent,
                      "best": (new.cost, M_new) if improved else mem["best"],
                      "since_best": 0 if improved else mem["since_best"] + 1}
        # a cycle: back to the subspace of an iterate p >= 2 steps ago, not a fixed point
        if sin_largest_angle(state.M, M_new) > self.cycle_tol:
            for p, old in enumerate(reversed(recent), start=1):
                if p >= 2 and sin_largest_angle(old, M_new) <= self.cycle_tol:
                    new.stop_reason = (f"ISM cycles with period {p} (eigengap {eigengap:.3e}); "
                                       "polish with solver=['ism', 'trust-region']")
                    break
        recent.append(M_new)
        if new.stop_reason is None and new.memory["since_best"] >= self.patience:
            new.stop_reason = (f"ISM stalled: no better cost in {self.patience} iterations; "
                               "polish with solver=['ism', 'trust-region']")
        if eigengap <= 0 and new.stop_reason is None and not improved:
            new.info["warning"] = "eigengap lost"
        return new

    def finalize(self, problem: Problem, state: State) -> State:
        """Return the best iterate seen if the last one is worse."""
        best_cost, M_best = state.memory.get("best", (state.cost, None))
        if M_best is None or best_cost >= state.cost - 1e-12 * max(1.0, abs(state.cost)):
            return state
        best = self.evaluate(problem, M_best, iteration=state.iteration)
        best.info = {"returned": "best iterate seen"}
        best.memory = state.memory
        best.stop_reason = state.stop_reason
        return best
