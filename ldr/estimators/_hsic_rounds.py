"""The alternation of the clustering HSIC estimators (:class:`~ldr.estimators.UnsupervisedHSIC`,
:class:`~ldr.estimators.SemiSupervisedHSIC`, :class:`~ldr.estimators.KDAC`): W-steps and
spectral U-steps, rounds run by ``ldr.estimators._anderson.alternate``.

**Inexact W-steps.**  With the default solver (ISM, then a trust-region polish) a round's
W-step is, until the alternation settles, one step of ISM — W ← the minimizing eigenvectors
of Φ_Γ(W), Γ from the round's embedding — instead of ISM run to a 1e-8 relative gradient
(12–30 steps a round on bench_real's tables, each a pass over the n×n kernel).  The W-step's
iteration and the alternation then converge together (Anderson acceleration is applied to
the pair's map); their common fixed point is the exact alternation's: W a fixed point of ISM
for Γ(U), U the embedding of XW.  Once a round's change is within ``outer_tol`` (and in round
``max_outer``), the rounds are exact again — the full W-step, warm-started, with its
certificate — and only an exact round within ``outer_tol`` ends the alternation, so
``result_``, ``M_`` and ``converged_`` mean what they did.  On bench_real's 14 tables the
labels are the same as with exact rounds (adjusted Rand index 1 between them), the subspace
within sin θ ≤ 1.7e-6 of theirs, the cost within 3e-8 relative; 8–16 rounds instead of 5–12,
but kernel passes 3–7 instead of 29–204, and the fit 4–20× faster (``docs/real_data.rst``).  A named
solver, a start other than "heuristic" (for the first round) or ``n_components="auto"``
keeps every round exact.

**The kernel kept between the steps.**  On the exact U-step's route with the Gaussian kernel
(the default) the U-step at W forms K = K_XW; the next round's ISM step needs Φ at that W:

    A = Γ ⊙ K,   Φ(W) = Xᵀ (diag(A1) − A) X / σ²,   cost = −Σ_ij A_ij             (R1)

(:class:`ldr.objectives.HSIC`: Φ = −2XᵀL_ΨX with Ψ = Γ ⊙ f′(β) and f′ = −K/2σ² for the
Gaussian, :mod:`ldr.kernels.family`), from the kept K — no second exp over n² entries,
which is most of a kernel pass.  Kept only while 2n² floats fit in ``memory_budget`` and Γ
is a low-rank factor (F, s).

**An exact round's ISM steps on the same route** (``settle``): the exact W-step starts with
ISM steps from the round's W, each a pass over the row blocks (n² exp); instead they are
taken by (R1) on a new symmetric gram (half the exp), until W meets the W-step's own stopping
rule, ‖(I − WWᵀ)∇f(W)‖ ≤ gtol · scale with the driver's gradient scale (its reference
gradient computed once and kept by the objective for the driver; the known values go in by
:meth:`ldr.objectives.HSIC.remember`).
The W-step then starts at that W with (Φ, cost) known and stops at once, certified (0
iterations; one pass over the row blocks, the reference point's), at the ISM iterate it
would have reached itself (sin θ ≤ 6e-13 on bench_real's tables).  An inexact round's U-step
is warm-started from the last U (``_spectral.spectral_embedding``).
"""

from __future__ import annotations

import numbers

import numpy as np

from ldr.errors import ParameterError
from ldr.estimators._anderson import alternate
from ldr.estimators._base import cast_fitted, converged_alternation, seed_of
from ldr.estimators._hsic_namespace import to_numpy
from ldr.estimators._solving import solver_options
from ldr.estimators._spectral import (
    SYMMETRIC_BLOCK,
    check_spectral,
    cluster_rows,
    dense_route,
    gaussian_sigma,
    gram,
    kernel_embedding,
    spectral_embedding,
)
from ldr.problem import Problem
from ldr.solvers.ism import minimizing_eigenvectors
from ldr.stopping import default_tol

#: an exact round's ISM steps by (R1) before its W-step (``settle``): at most this many
SETTLE_MAX = 30


#: (R1) by blocks above this many rows (at 944 and 1500 rows 20% and 40% faster than one
#: n×n array; at 569 no faster)
PHI_BLOCKED_MIN = 4 * SYMMETRIC_BLOCK


def phi_from_gram(K: np.ndarray, X: np.ndarray, Gamma, sigma: float
                  ) -> tuple[np.ndarray, float]:
    """(R1): Φ(W) and the cost from the Gaussian kernel K = K_XW and Γ = F diag(s) Fᵀ.

    A = Γ ⊙ K is symmetric, so only its blocks on and above the diagonal are formed, a block
    of rows R at a time (in cache): with P_R = A_{R,≥R} [X_{≥R} 1] and S = Σ_R X_Rᵀ P_R,
    XᵀAX = S + Sᵀ − Σ_R X_Rᵀ A_RR X_R, and the degree A1 is P's last column plus the column
    sums of the blocks right of the diagonal."""
    F, s = Gamma
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
        A, P = buf[:j - i, :n - i], out[:j - i]
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


def fit_alternation(est, Xs):
    """Fit a clustering HSIC estimator ``est`` on standardized rows ``Xs``: the alternation
    from the embedding of the full-dimensional kernel, then k-means on the final U."""
    n, k = Xs.shape[0], est.n_clusters
    if not (isinstance(k, numbers.Integral) and 2 <= k < n):
        raise ParameterError("n_clusters", f"must be an integer in [2, n_samples), got {k!r}")
    est.kernel_ = est._kernel(Xs)
    spectral, seed = check_spectral(est.spectral), seed_of(est.random_state)
    sigma = gaussian_sigma(est.kernel_)
    keep = (sigma is not None and est.approximation is None and dense_route(spectral, n)
            and 16.0 * n * n <= est.memory_budget)
    kept: dict = {}  # the last U-step's W and K_XW (R1)
    q = Xs.shape[1] - 1 if est.n_components is None else est.n_components
    # inexact rounds (module docstring): the default solver, whose first stage is ISM, and q
    # fixed ("auto" chooses q in every W-step)
    inexact = est.solver is None and not isinstance(est.n_components, str)

    def embed(W, warm=False):  # the U-step: exact up to 4000 rows, Nyström beyond
        if keep:  # (_spectral); an inexact round's Lanczos warm-started from the last U
            K = gram(est.kernel_, Xs @ W)
            U, dm = spectral_embedding(K, k, est.center_u, kept.get("U") if warm else None)
            kept.update(W=W, K=K, U=U)
            return U, dm
        return kernel_embedding(est.kernel_, Xs @ W, k, est.center_u, spectral,
                                est.n_features, seed)

    def embed_warm(W):
        return embed(W, warm=True)

    def from_kept(Gamma, W):
        """(Φ, cost) at W by (R1) when W is the kept kernel's, else None."""
        if W is not None and kept.get("W") is W and isinstance(Gamma, tuple):
            return phi_from_gram(kept["K"], Xs, Gamma, sigma)
        return None

    def ism_step(Gamma, W):
        """One ISM step from W (from Φ₀'s minimizing eigenvectors when W is None: ISM's
        spectral start, no kernel pass) and the cost at W (None at the start)."""
        if (known := from_kept(Gamma, W)) is not None:
            Phi, cost = known
        else:
            obj = est._objective(Xs, Gamma, q)
            if W is None:
                Phi, cost = to_numpy(obj.phi0()), None
            else:
                Phi, cost = to_numpy(obj.phi(W)), float(obj.cost(W))
        return minimizing_eigenvectors(0.5 * (Phi + Phi.T), q)[0], cost

    def settle(Gamma, W):
        """An exact round's start: ISM steps from W by (R1), each on a new symmetric gram
        (half the exp of a pass over the row blocks), until W meets the W-step's own
        stopping rule, ‖grad f(W)‖ ≤ gtol · the driver's gradient scale (whose reference
        gradient the objective then keeps for the driver: one pass).  Returns (W, (Φ,
        cost) at W, the objective), or (W, None, None) without the kept kernel."""
        known = from_kept(Gamma, W)
        if known is None or not inexact:
            return W, known, None
        obj = est._objective(Xs, Gamma, q)
        options = solver_options(est)
        scale, problem = options.get("tol_scale", "auto"), Problem(obj)
        target = ((default_tol(problem.template) if options["tol"] is None
                   else options["tol"])  # ldr.solve's default, as the W-step's own
                  * (problem.gradient_scale() if scale == "auto" else float(scale)))
        for _ in range(SETTLE_MAX):
            Phi = known[0]  # (R1) returns it symmetric
            G = 2.0 * Phi @ W  # ∇f = 2ΦW, on Grassmann projected: (I − WWᵀ)∇f
            if np.linalg.norm(G - W @ (W.T @ G)) <= target:
                break
            W = minimizing_eigenvectors(Phi, q)[0]
            K = gram(est.kernel_, Xs @ W)
            kept.update(W=W, K=K)
            known = phi_from_gram(K, Xs, Gamma, sigma)
        return W, known, obj

    def round_(U, dm, W, exact):
        Gamma = est._gamma(U, dm, n)
        if not exact and (W is not None or est._spectral_start()):
            W_out, cost = ism_step(Gamma, W)
            return W_out, embed_warm, {"cost": cost, "w_exact": False}
        W0, known, obj = settle(Gamma, W)  # the W-step's ISM steps by the kept kernel
        obj, res = est._fit_w(Xs, Gamma, W0=W0, known=None if known is None else known[::-1],
                              obj=obj)
        return res.M, embed, {"cost": res.cost, "w_converged": res.converged, "w_exact": True}

    U, dm = kernel_embedding(est.kernel_, Xs, k, est.center_u, spectral, est.n_features, seed)
    U, history, it, change = alternate(U, dm, round_, est.max_outer, est.outer_tol,
                                       est.acceleration, inexact)
    kept.clear()
    est.n_outer_, est.history_, est.n_iter_ = it, history, it
    est.converged_ = converged_alternation(est, change, "U", stacklevel=5)
    est.U_, est.labels_ = U, cluster_rows(U, k, est.random_state)
    for name in ("_scores", "_existing"):  # Γ's fixed part (n×m): not kept after the fit
        vars(est).pop(name, None)
    cast_fitted(est, est._dtype)
    return est
