"""Self-consistent field iteration for eigenvector-dependent generalized eigenproblems.

For an objective with an SCF oracle ``pencil(M) -> (A(M), B(M))`` (B positive definite,
both invariant to M → MQ), the nonlinear eigenproblem A(M)V = B(M)VΛ is solved by
(Liu, Cai, Chen & Li, WDA-eig Algorithm 1)

    M_{k+1} = an orthonormal basis of the top-r generalized eigenvectors of (A(M_k), B(M_k)),

stopped by the driver when the fixed-point residual ‖sin Θ(M_k, G(M_k))‖, G the plain map
above, is ≤ ``xtol`` (for the plain iteration this is the next step's subspace change; for the
accelerated ones it certifies the returned iterate itself, which a small accelerated step
would not).  The trace reports the
arctangent eigengap η_k = arctan λ_r − arctan λ_{r+1} of their Theorems 1–2.

The plain iteration can oscillate or crawl.  Remedies from the SCF literature:

* ``damping=α``: mix the pencil, Ã_k = (1 − α)A(M_k) + αÃ_{k−1} (same for B);
* ``level_shift=σ``: A ← A + σ·B V Vᵀ B with V a B-orthonormal basis of span(M_k), which lifts
  the current subspace's eigenvalues by σ (fixed points are unchanged) and damps jumps;
* ``acceleration="diis"`` (default): Pulay's DIIS on the pencil.  With X_k = M_k(M_kᵀB_kM_k)⁻¹M_kᵀ
  the commutator E_k = A_kX_kB_k − B_kX_kA_k vanishes exactly at a fixed point (AV = BVΛ);
  the next iterate is the top-r eigenvectors of Σcᵢ(Aᵢ, Bᵢ) over the last ``depth + 1``
  pencils, with Σcᵢ = 1 minimizing ‖ΣcᵢEᵢ‖_F (plain step when the mix is not definite);
* ``acceleration="anderson"``: Anderson mixing of the projectors X_k = M_kM_kᵀ with the
  fixed-point map X ↦ P(top-r eigenvectors at X); the next iterate is the top-r
  eigenvectors of the mixed X.

Both are restarted whenever their residual grows and suspended for ``10·depth`` plain steps
when they have not shortened the step for ``4·depth`` iterations; both leave fixed points
unchanged.  DIIS is the default: extrapolating the residuals (Pulay's rule) keeps to the
plain iteration's fixed point, where Anderson's mixing of projectors can carry a start to
another one.

A 2-cycle (M_{k+1} back at M_{k−1}, away from M_k) or stagnation (no smaller step in
``patience`` iterations) stops the run, not converged, with the remedy to try in the reason.
SCF evaluates no gradient (its fixed points are those of the ratio trace, not critical points
of ``cost``): the trace's ``grad_norm`` is NaN; ``cost`` is evaluated for reporting.
A B that is not positive definite is shifted by δI with a warning saying so.

A pencil of another array namespace (PyTorch, CuPy, ...; WDA on a tensor) is worked on
there, on its device (:func:`ldr.core.eigen.top_generalized` by whitening, the accelerations with
``linalg.pinv`` for the least-squares fits): only scalars come to the host, and the level
shift's one full spectrum at the start.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg

from ldr.core.eigen import top_generalized
from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.data import arrays
from ldr.manifolds import orthonormalize, sin_largest_angle
from ldr.solvers.base import Solver, State


def positive_definite(B: np.ndarray, what: str = "B") -> np.ndarray:
    """B itself if positive definite, else B + δI with a warning that says how much."""
    B = 0.5 * (B + B.T)
    if _definite_matrix(B):
        return B
    else:
        d = B.shape[0]
        xp = arrays.namespace(B)
        lam_min = float(xp.linalg.eigvalsh(B)[0])
        delta = max(-lam_min, 0.0) + 1e-10 * max(
            float(xp.sum(xp.abs(xp.linalg.diagonal(B)))) / d, 1e-300)
        warnings.warn(f"pencil: {what} is not positive definite (λ_min = {lam_min:.3e}); "
                      f"regularized as {what} + {delta:.3e}·I. Regularize the objective "
                      "instead (e.g. a larger eps/reg) to control this.", RuntimeWarning,
                      stacklevel=3)
        return B + delta * (np.eye(d) if xp is np else arrays.eye_like(d, B))


def _definite_matrix(B) -> bool:
    """Whether Cholesky accepts B (another namespace: its least eigenvalue > 0, a scalar)."""
    if type(B) is not np.ndarray:
        return float(arrays.namespace(B).linalg.eigvalsh(B)[0]) > 0
    try:
        np.linalg.cholesky(B)
        return True
    except np.linalg.LinAlgError:
        return False


def _definite(A, B) -> tuple[np.ndarray, np.ndarray]:
    """The pencil SCF works with: A symmetrized, B symmetrized and positive definite."""
    if arrays.foreign(A) is None:
        A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    return 0.5 * (A + A.T), positive_definite(B)


class SCF(Solver):
    """SCF iteration on an objective's ``pencil``.

    Parameters
    ----------
    acceleration : {"diis", "anderson", "none"}
    depth : history length of the acceleration (``depth + 1`` iterates are mixed)
    damping : pencil mixing weight α in [0, 1)
    level_shift : σ ≥ 0 (relative to the mean of ``|λ|`` of the pencil at the start)
    cycle_tol : two subspaces closer than this are the same
    patience : stop (not converged) after this many iterations without a smaller step
    """

    name = "scf"
    needs = ("pencil",)
    single_orthonormal_factor = True

    def __init__(self, acceleration: str = "diis", depth: int = 5, damping: float = 0.0,
                 level_shift: float = 0.0, cycle_tol: float = 1e-9, patience: int = 300):
        if acceleration not in ("anderson", "diis", "none"):
            raise ParameterError("acceleration", "expected 'anderson', 'diis' or 'none', got "
                             f"{acceleration!r}")
        if not 0.0 <= damping < 1.0:
            raise ParameterError("damping", f"must lie in [0, 1), got {damping!r}")
        if not level_shift >= 0:
            raise ParameterError("level_shift", f"must be >= 0, got {level_shift!r}")
        if not (isinstance(depth, int) and depth >= 1):
            raise ParameterError("depth", f"must be a positive integer, got {depth!r}")
        self.acceleration = acceleration
        self.depth = depth
        self.damping = damping
        self.level_shift = level_shift
        self.cycle_tol = cycle_tol
        self.patience = patience

    def default_start(self, problem: Problem, at=None):
        """The top-r generalized eigenvectors of the objective's ``pencil0()`` (its pencil at
        the uninformative point; for WDA, the plans of the whole space) when it has one; with
        ``at`` (the answer of the objective's coarse problem, :func:`ldr.driver.loop.initial_point`)
        those of the pencil there."""
        if at is not None:
            A, B = _definite(*problem.objective.pencil(at))
        elif problem.provides("pencil0"):
            A, B = _definite(*problem.objective.pencil0())
        else:
            return None
        return top_generalized(A, B, problem.manifold.shape[1])[0]

    def _pencil(self, problem: Problem, M):
        return _definite(*problem.pencil(M))

    def _state(self, problem: Problem, M, **kw) -> State:
        return State(M=M, cost=problem.cost(M), egrad=None, grad=None, grad_norm=np.nan, **kw)

    def init(self, problem: Problem, M0) -> State:
        self.check_problem(problem)
        A, B = self._pencil(problem, M0)  # first: see step
        state = self._state(problem, M0)
        shift = 0.0
        if self.level_shift:  # σ relative to the pencil's mean |λ|: the full spectrum, once
            lam = scipy.linalg.eigvalsh(arrays.to_host(A), arrays.to_host(B))  # d×d, once
            shift = self.level_shift * (float(np.mean(np.abs(lam))) or 1.0)
        G = top_generalized(A, B, problem.manifold.shape[1])
        state.memory = {"pencil": (A, B), "G": G, "shift": shift, "hist": [],
                        "prev": None, "best_step": np.inf, "since_best": 0}
        state.info = {"residual": sin_largest_angle(M0, G[0])}
        return state

    def _plain_step(self, M, A, B, shift, r):
        if shift:
            xp = arrays.namespace(M)
            V = M @ xp.linalg.inv(xp.linalg.cholesky(M.T @ B @ M)).T   # B-orthonormal basis
            BV = B @ V
            A = A + shift * (BV @ BV.T)
        return top_generalized(A, B, r)

    def _anderson(self, M, M_plain, hist, r):
        """Anderson mixing of the projectors X = MMᵀ with residuals F = X_plain − X."""
        Xk = M @ M.T
        Fk = M_plain @ M_plain.T - Xk
        if hist and arrays.norm(Fk) > arrays.norm(hist[-1][1]):
            hist = []                                          # residual grew: restart
        hist = (hist + [(Xk, Fk)])[-(self.depth + 1):]
        if len(hist) < 2:
            return M_plain, hist
        if type(M) is not np.ndarray:
            return self._anderson_namespace(Xk, Fk, hist, r), hist
        dX = np.column_stack([(b[0] - a[0]).ravel() for a, b in zip(hist, hist[1:])])
        dF = np.column_stack([(b[1] - a[1]).ravel() for a, b in zip(hist, hist[1:])])
        gamma = np.linalg.lstsq(dF, Fk.ravel(), rcond=None)[0]
        Xmix = ((Xk + Fk).ravel() - (dX + dF) @ gamma).reshape(Xk.shape)
        _, V = np.linalg.eigh(0.5 * (Xmix + Xmix.T))
        return orthonormalize(V[:, ::-1][:, :r]), hist

    @staticmethod
    def _anderson_namespace(Xk, Fk, hist, r):
        """:meth:`_anderson`'s mix in the namespace of the iterates (lstsq by pinv)."""
        xp = arrays.namespace(Xk)
        dX = xp.stack([xp.reshape(b[0] - a[0], (-1,)) for a, b in zip(hist, hist[1:])], axis=1)
        dF = xp.stack([xp.reshape(b[1] - a[1], (-1,)) for a, b in zip(hist, hist[1:])], axis=1)
        gamma = xp.linalg.pinv(dF) @ xp.reshape(Fk, (-1,))
        Xmix = xp.reshape(xp.reshape(Xk + Fk, (-1,)) - (dX + dF) @ gamma, Xk.shape)
        _, V = xp.linalg.eigh(0.5 * (Xmix + Xmix.T))
        return orthonormalize(xp.flip(V, axis=1)[:, :r])

    def _diis(self, M, A, B, M_plain, hist, r):
        """Pulay's DIIS: the pencil Σcᵢ(Aᵢ, Bᵢ) with Σcᵢ = 1 minimizing ‖Σcᵢ Eᵢ‖_F, where
        Eᵢ = AᵢXᵢBᵢ − BᵢXᵢAᵢ, X = M(MᵀBM)⁻¹Mᵀ, is the commutator residual (zero exactly at a
        fixed point: A V = B V Λ)."""
        xp = arrays.namespace(M)
        X = M @ xp.linalg.solve(M.T @ B @ M, M.T)
        E = A @ X @ B - B @ X @ A
        if hist and arrays.norm(E) > arrays.norm(hist[-1][2]):
            hist = []                                          # residual grew: restart
        hist = (hist + [(A, B, E)])[-(self.depth + 1):]
        q = len(hist)
        if q < 2:
            return M_plain, hist
        if xp is np:
            G = np.array([[np.sum(a[2] * b[2]) for b in hist] for a in hist])
        else:
            Es = xp.stack([xp.reshape(h[2], (-1,)) for h in hist])
            G = Es @ Es.T
        scale = arrays.max_abs(G)
        if not (math.isfinite(scale) and scale > 0):           # at a fixed point already
            return M_plain, hist
        if xp is np:
            L = np.zeros((q + 1, q + 1))
            L[:q, :q] = G / scale
            L[:q, q] = -1.0
            L[q, :q] = -1.0
            c = np.linalg.lstsq(L, np.r_[np.zeros(q), -1.0], rcond=None)[0][:q]
        else:  # the same bordered system, built without item assignment; lstsq by pinv
            one = xp.ones((q, 1), dtype=G.dtype, device=arrays.device(G))
            L = xp.concat([xp.concat([G / scale, -one], axis=1),
                           xp.concat([-one.T, 0.0 * one[:1, :]], axis=1)], axis=0)
            c = -xp.linalg.pinv(L)[:q, q]
        A_mix = sum(c[i] * h[0] for i, h in enumerate(hist))
        B_mix = sum(c[i] * h[1] for i, h in enumerate(hist))
        if not _definite_matrix(B_mix):                        # not a definite pencil
            return M_plain, hist[-1:]
        return top_generalized(A_mix, B_mix, r)[0], hist

    def step(self, problem: Problem, state: State) -> State:
        mem = state.memory
        r = problem.manifold.shape[1]
        A, B = mem["pencil"]
        if mem["shift"] or self.damping:
            M_plain, w = self._plain_step(state.M, A, B, mem["shift"], r)
        else:
            M_plain, w = mem["G"]                          # computed with the residual
        w_r = float(w[r - 1])
        eta = math.atan(w_r) - math.atan(float(w[r])) if w.shape[0] > r else np.nan
        hist = mem["hist"]
        M_new = M_plain
        # safeguard: when the acceleration has not produced a smaller step for a while, take
        # plain steps for a while (then try again)
        plain_left = mem.get("plain_left", 0)
        accelerate = self.acceleration != "none"
        if accelerate and plain_left == 0 and mem["since_best"] >= 4 * self.depth:
            plain_left = 10 * self.depth
            hist = []
        if accelerate and plain_left == 0:
            if self.acceleration == "anderson":
                M_new, hist = self._anderson(state.M, M_plain, hist, r)
            else:
                M_new, hist = self._diis(state.M, A, B, M_plain, hist, r)
        # the pencil first: an objective that caches it (WDA's plans) then reports the cost
        # from it instead of running its transport again
        A_new, B_new = self._pencil(problem, M_new)
        new = self._state(problem, M_new, iteration=state.iteration + 1)
        G = top_generalized(A_new, B_new, r)            # the plain map at the new iterate
        if self.damping:
            A_new = (1 - self.damping) * A_new + self.damping * A
            B_new = (1 - self.damping) * B_new + self.damping * B
        step = sin_largest_angle(state.M, M_new)
        improved = step < mem["best_step"]
        new.memory = {"pencil": (A_new, B_new), "G": G, "shift": mem["shift"], "hist": hist,
                      "prev": state.M, "plain_left": max(plain_left - 1, 0),
                      "best_step": step if improved else mem["best_step"],
                      "since_best": 0 if improved else mem["since_best"] + 1}
        new.info = {"residual": sin_largest_angle(M_new, G[0]), "eta": eta,
                    "lambda_r": w_r,
                    "mixed": len(hist) - 1 if accelerate and plain_left == 0 else 0}
        if mem["prev"] is not None and step > 1e3 * self.cycle_tol \
                and sin_largest_angle(mem["prev"], M_new) <= self.cycle_tol:
            new.stop_reason = (f"SCF oscillates between two subspaces (2-cycle, η = {eta:.3e}); "
                               "try SCF(damping=0.5) or SCF(level_shift=1.0)")
        elif new.memory["since_best"] >= self.patience:
            new.stop_reason = (f"SCF stagnates: no smaller step in {self.patience} iterations "
                               f"(last {step:.3e}); try the other acceleration ('diis' or "
                               "'anderson'), damping or a level shift")
        return new
