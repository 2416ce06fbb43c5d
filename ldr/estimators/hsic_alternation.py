"""The alternation of the clustering HSIC estimators (:class:`~ldr.estimators.UnsupervisedHSIC`,
:class:`~ldr.estimators.SemiSupervisedHSIC`, :class:`~ldr.estimators.KDAC`): W-steps and
spectral U-steps (:mod:`ldr.estimators.spectral`), rounds run by
:func:`ldr.estimators.anderson.alternate`.

A round fits W on Grassmann(d, q) for Γ built from the last embedding U (the W-step,
−tr(Γ K_XW) minimized: ISM Eq. 1; KDAC Eq. 4), then embeds the projected rows XW (the U-step,
the top-k eigenvectors of D^{-1/2} K_XW D^{-1/2}: KDAC Eq. 3), starting from U of the
full-dimensional kernel; a round's change is sin θ(U, U⁺), its fixed-point residual.

**Inexact W-steps.**  With the default solver (ISM, then a trust-region polish) a round's
W-step is, until the alternation settles, one step of ISM — W ← the minimizing eigenvectors
of Φ_Γ(W), Γ from the round's embedding — instead of ISM run to its gradient tolerance (each
of its steps a pass over the n×n kernel).  The W-step's iteration and the alternation then
converge together (Anderson acceleration is applied to the pair's map); their common fixed
point is the exact alternation's: W a fixed point of ISM for Γ(U), U the embedding of XW.
Once a round's change is within ``outer_tol`` (and in round ``max_outer``), the rounds are
exact again — the full W-step, warm-started, with its certificate — and only an exact round
within ``outer_tol`` ends the alternation, so ``result_``, ``M_`` and ``converged_`` are the
exact alternation's.  A named solver, a start other than "heuristic" (for the first round) or
``n_components="auto"`` keeps every round exact.

**The kernel kept between the steps.**  On the exact U-step's route with the Gaussian kernel
(the default) the U-step at W forms K = K_XW; the next round's ISM step needs Φ at that W:

    A = Γ ⊙ K,   Φ(W) = Xᵀ (diag(A1) − A) X / σ²,   cost = −Σ_ij A_ij             (R1)

(:class:`ldr.objectives.HSIC`: Φ = −2XᵀL_ΨX with Ψ = Γ ⊙ f′(β) and f′ = −K/2σ² for the
Gaussian, :mod:`ldr.kernels.family`), from the kept K — no second exp over n² entries,
which is most of a kernel pass.  Kept only while 2n² floats fit in ``memory_budget``, Γ
is a low-rank factor (F, s) and the rows are NumPy's ((R1) is in-place NumPy code; rows of
another namespace take Φ from a pass over them).

**An exact round's ISM steps on the same route** (:meth:`HSICAlternation.settle`): the exact
W-step starts with ISM steps from the round's W, each a pass over the row blocks (n² exp);
instead they are taken by (R1) on a new symmetric gram (half the exp), until W meets the
W-step's own stopping rule, ‖(I − WWᵀ)∇f(W)‖ ≤ tol · scale with the driver's gradient scale
(its reference gradient computed once and kept by the objective for the driver; the known
values go in by :meth:`ldr.objectives.HSIC.remember`).  The W-step then starts at that W
with (Φ, cost) known and stops at once, certified (0 iterations; one pass over the row
blocks, the reference point's), at the ISM iterate it would have reached itself.  An inexact
round's U-step is warm-started from the last U
(:func:`ldr.estimators.spectral.spectral_embedding`).

References
----------
Niu, Dy & Jordan (2011), Dimensionality reduction for spectral clustering, AISTATS.
Wu, Li, Ioannidis, Kaeli, Sznaier & Dy (2018), Iterative spectral method for alternative
clustering, AISTATS (KDAC; Eqs. 2–4).
Wu, Miller, Chang, Sznaier & Dy (2019), Solving interpretable kernel dimension reduction,
NeurIPS (ISM's family of kernels; Eq. 1).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ldr.core.problem import Problem
from ldr.core.result import Result
from ldr.core.stopping import default_tol
from ldr.data import arrays
from ldr.estimators.anderson import alternate
from ldr.estimators.spectral import (
    BLOCK,
    SYMMETRIC_BLOCK,
    dense_route,
    gaussian_sigma,
    gram,
    kernel_embedding,
    spectral_embedding,
)
from ldr.kernels import Kernel
from ldr.objectives.chunked_rows import ChunkedRows, RowBlocks
from ldr.objectives.hsic import factor_of
from ldr.solvers.ism import minimizing_eigenvectors

__all__ = ["SETTLE_MAX", "PHI_BLOCKED_MIN", "AlternationResult", "HSICAlternation",
           "phi_from_gram"]

#: an exact round's ISM steps by (R1) before its W-step (:meth:`HSICAlternation.settle`): at
#: most this many
SETTLE_MAX = 30


#: (R1) by blocks above this many rows (the blocks on and above the diagonal, each in cache);
#: one n×n array, in fewer calls, below
PHI_BLOCKED_MIN = 4 * SYMMETRIC_BLOCK


def phi_from_gram(K: np.ndarray, X: np.ndarray, Gamma, sigma: float
                  ) -> tuple[np.ndarray, float]:
    """(R1): Φ(W) and the cost from the Gaussian kernel K = K_XW and Γ = F diag(s) Fᵀ.

    A = Γ ⊙ K is symmetric, so only its blocks on and above the diagonal are formed, a block
    of rows R at a time (in cache): with P_R = A_{R,≥R} [X_{≥R} 1] and S = Σ_R X_Rᵀ P_R,
    XᵀAX = S + Sᵀ − Σ_R X_Rᵀ A_RR X_R, and the degree A1 is P's last column plus the column
    sums of the blocks right of the diagonal."""
    F, s = factor_of(Gamma)
    n, d = X.shape
    if n <= PHI_BLOCKED_MIN:  # small: one n×n array, fewer calls
        A = (F * s) @ F.T
        A *= K
        Phi = (X.T @ (A.sum(axis=1)[:, None] * X) - X.T @ (A @ X)) / sigma**2
        return 0.5 * (Phi + Phi.T), -float(A.sum())
    Fs = F * s
    B1 = np.hstack([X, np.ones((n, 1))])
    deg = np.zeros(n)
    S = np.zeros((d, d))
    diagonal = np.zeros((d, d))
    buf = np.empty((SYMMETRIC_BLOCK, n))
    out = np.empty((SYMMETRIC_BLOCK, d + 1))
    for i in range(0, n, SYMMETRIC_BLOCK):
        j = min(i + SYMMETRIC_BLOCK, n)
        A = buf[:j - i, :n - i]
        P = out[:j - i]
        np.matmul(Fs[i:j], F[i:].T, out=A)
        A *= K[i:j, i:]
        np.matmul(A, B1[i:], out=P)
        deg[i:j] += P[:, -1]
        deg[j:] += A[:, j - i:].sum(axis=0)
        S += X[i:j].T @ P[:, :-1]
        diagonal += X[i:j].T @ (A[:, :j - i] @ X[i:j])
    XAX = S + S.T - diagonal
    Phi = (X.T @ (deg[:, None] * X) - XAX) / sigma**2
    return 0.5 * (Phi + Phi.T), -float(deg.sum())


@dataclasses.dataclass
class AlternationResult:
    """What an alternation ends with.

    Attributes
    ----------
    U : (n, k) array
        The last embedding.
    history : list of dict
        One record per round: ``outer``, ``cost``, ``w_exact`` (whether the round's W-step
        was solved), ``w_converged`` (an exact round's), and its change: ``u_change`` (sin θ
        between the embeddings) or, for an inexact round, ``w_change`` (between the W's).
    n_rounds : int
    change : float
        The last round's change.
    objective, result
        The last exact W-step's objective and :class:`ldr.Result`.
    """

    U: np.ndarray
    history: list
    n_rounds: int
    change: float
    objective: object
    result: Result


@dataclasses.dataclass
class HSICAlternation:
    """W-steps and spectral U-steps on standardized rows (module docstring).

    Parameters
    ----------
    X : (n, d) array or ChunkedRows
        The standardized rows (NumPy), or those of a Dask array or memmap
        (:class:`~ldr.objectives.chunked_rows.ChunkedRows`): the U-step is then Nyström's,
        its passes mapped over the chunks.
    kernel : Kernel
        The kernel on the projected rows XW, fitted.
    n_clusters : int
        k, the embedding's dimension.
    center : bool
        The U-step's matrix centered, H D^{-1/2} K D^{-1/2} H (KDAC Eq. 3).
    spectral : {"auto", "exact", "nystroem"}
        The U-step's route (:func:`ldr.estimators.spectral.kernel_embedding`).
    landmarks : int
        m, the Nyström U-step's landmarks.
    seed : int or None
        The Nyström U-step's landmark draw.
    memory_budget : float
        Bytes: the last U-step's kernel (n² floats, twice) is kept for (R1) within it, and the
        Nyström U-step's Ψ (n×ρ) within it (:func:`ldr.estimators.spectral.nystroem_embedding`).
    approximate : bool
        The W-step's kernel is approximated (random features, Nyström): nothing kept.
    gamma : callable
        ``gamma(U, dm)``: Γ of a round from the embedding U and D^{-1/2} (a factor (F, s) or
        a weighted factor (F, s, w), Γ = diag(w) F diag(s) Fᵀ diag(w)).
    objective : callable
        ``objective(Gamma)``: the W-step's objective (q fixed).
    w_step : callable
        ``w_step(Gamma, start, known, objective)``: ``(objective, Result)`` of the W-step
        solved from ``start`` (None: the estimator's start), with ``known`` = (cost, Φ) at
        ``start`` when given and ``objective`` when already built.
    q : int or None
        The subspace dimension (None: chosen in each W-step, ``n_components="auto"``).
    inexact : bool
        Rounds may take one ISM step instead of the W-step (the default solver, q fixed).
    spectral_start : bool
        The first inexact round starts at ISM's spectral start (``start="heuristic"``).
    tol : float or None
        The W-step's gradient tolerance (None: :func:`ldr.core.stopping.default_tol`).
    tol_scale : "auto" or float
        The scale ``tol`` multiplies ("auto": the driver's gradient scale).
    """

    X: object
    kernel: Kernel
    n_clusters: int
    center: bool
    spectral: str
    landmarks: int
    seed: int | None
    memory_budget: float
    approximate: bool
    gamma: Callable
    objective: Callable
    w_step: Callable
    q: int | None
    inexact: bool
    spectral_start: bool
    tol: float | None
    tol_scale: object = "auto"
    #: the last U-step's W, K_XW and U, for (R1) and a warm U-step
    kept: dict = dataclasses.field(default_factory=dict, init=False, repr=False)
    #: the last exact W-step's (objective, Result)
    last: tuple | None = dataclasses.field(default=None, init=False, repr=False)
    #: σ of the kernel when it is one Gaussian (weight 1), else None: (R1) needs it
    sigma: float | None = dataclasses.field(default=None, init=False)
    #: whether the U-step's kernel is kept for (R1) (module docstring)
    keep: bool = dataclasses.field(default=False, init=False)
    #: the rows by blocks (:mod:`ldr.objectives.chunked_rows`), for the Nyström U-step
    rows: object = dataclasses.field(default=None, init=False, repr=False)

    def __post_init__(self):
        n = self.X.shape[0]
        if isinstance(self.X, ChunkedRows):
            self.rows = self.X
            self.spectral = "nystroem"
        else:
            self.rows = RowBlocks(self.X, BLOCK)
        self.sigma = gaussian_sigma(self.kernel)
        self.keep = (self.sigma is not None and not self.approximate
                     and dense_route(self.spectral, n) and 16.0 * n * n <= self.memory_budget
                     and arrays.foreign(self.X) is None)  # (R1) is NumPy's in-place code

    def run(self, max_outer: int, outer_tol: float, acceleration,
            report=None) -> AlternationResult:
        """The alternation from the embedding of the full-dimensional kernel
        (:func:`ldr.estimators.anderson.alternate`; ``report`` called with each round's
        record)."""
        U, dm = kernel_embedding(self.kernel, self.rows, self.n_clusters, self.center,
                                 self.spectral, self.landmarks, self.seed, self.memory_budget)
        U, history, rounds, change = alternate(U, dm, self.round, max_outer, outer_tol,
                                               acceleration, self.inexact, report)
        self.kept.clear()
        objective, result = self.last
        return AlternationResult(U, history, rounds, change, objective, result)

    def embed(self, W, warm: bool = False):
        """The U-step at W: exact up to ``spectral.DENSE_MAX`` rows, Nyström beyond; with
        the kept kernel, an inexact round's Lanczos warm-started from the last U."""
        if self.keep:
            K = gram(self.kernel, self.X @ W)
            U, dm = spectral_embedding(K, self.n_clusters, self.center,
                                       self.kept.get("U") if warm else None)
            self.kept.update(W=W, K=K, U=U)
            return U, dm
        return kernel_embedding(self.kernel, self.rows, self.n_clusters, self.center,
                                self.spectral, self.landmarks, self.seed, self.memory_budget, W)

    def embed_warm(self, W):
        """:meth:`embed`, warm-started from the last U."""
        return self.embed(W, warm=True)

    def from_kept(self, Gamma, W):
        """(Φ, cost) at W by (R1) when W is the kept kernel's, else None."""
        if W is not None and self.kept.get("W") is W and isinstance(Gamma, tuple):
            return phi_from_gram(self.kept["K"], self.X, Gamma, self.sigma)
        return None

    def ism_step(self, Gamma, W):
        """One ISM step from W (from Φ₀'s minimizing eigenvectors when W is None: ISM's
        spectral start, no kernel pass) and the cost at W (None at the start)."""
        known = self.from_kept(Gamma, W)
        if known is not None:
            Phi = known[0]
            cost = known[1]
        else:
            obj = self.objective(Gamma)
            if W is None:
                Phi = obj.phi0()
                cost = None
            else:
                Phi = obj.phi(W)
                cost = float(obj.cost(W))
        return minimizing_eigenvectors(0.5 * (Phi + Phi.T), self.q)[0], cost

    def settle(self, Gamma, W):
        """An exact round's start: ISM steps from W by (R1), each on a new symmetric gram
        (half the exp of a pass over the row blocks), until W meets the W-step's own
        stopping rule, ‖grad f(W)‖ ≤ tol · the driver's gradient scale (whose reference
        gradient the objective then keeps for the driver: one pass).  Returns (W, (Φ, cost)
        at W, the objective), or (W, None, None) without the kept kernel."""
        known = self.from_kept(Gamma, W)
        if known is None or not self.inexact:
            return W, known, None
        obj = self.objective(Gamma)
        problem = Problem(obj)
        tol = default_tol(problem.template) if self.tol is None else self.tol
        if isinstance(self.tol_scale, str) and self.tol_scale == "auto":
            scale = problem.gradient_scale()
        else:
            scale = float(self.tol_scale)
        for _ in range(SETTLE_MAX):
            Phi = known[0]  # (R1) returns it symmetric
            G = 2.0 * Phi @ W  # ∇f = 2ΦW, on Grassmann projected: (I − WWᵀ)∇f
            if np.linalg.norm(G - W @ (W.T @ G)) <= tol * scale:
                break
            W = minimizing_eigenvectors(Phi, self.q)[0]
            K = gram(self.kernel, self.X @ W)
            self.kept.update(W=W, K=K)
            known = phi_from_gram(K, self.X, Gamma, self.sigma)
        return W, known, obj

    def round(self, U, dm, W, exact: bool):
        """One round from the embedding (U, D^{-1/2}) and the last W (None at first):
        ``(W_out, embed, record)`` for :func:`ldr.estimators.anderson.alternate`."""
        Gamma = self.gamma(U, dm)
        if not exact and (W is not None or self.spectral_start):
            W_out, cost = self.ism_step(Gamma, W)
            return W_out, self.embed_warm, {"cost": cost, "w_exact": False}
        W0, known, obj = self.settle(Gamma, W)  # the W-step's ISM steps by the kept kernel
        obj, res = self.w_step(Gamma, W0, None if known is None else known[::-1], obj)
        self.last = (obj, res)
        return res.M, self.embed, {"cost": res.cost, "w_converged": res.converged,
                                   "w_exact": True}
