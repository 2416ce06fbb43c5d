"""Quotient of traces: the cost −tr(MᵀAM) / tr(MᵀBM) (survey Eq. 6 for LDA, Eq. 12 for MAF).

With a(M) = tr(MᵀAM), b(M) = tr(MᵀBM) and ρ(M) = a/b:

* cost        f(M) = −ρ(M)
* gradient    ∇f(M) = −2 (A − ρB) M / b = 2 Φ(M) M
* Φ-oracle    Φ(M) = −(A − ρ(M) B) / b(M)            (DESIGN.md; ISM on it is the classical
                                                       trace-ratio iteration)
* Hessian     D∇f(M)[V] = −2 [(A − ρB) V − Dρ[V] B M] / b + 2 (A − ρB) M · Db[V] / b²,
              Db[V] = 2 tr(MᵀBV),  Dρ[V] = 2 (tr(MᵀAV) − ρ tr(MᵀBV)) / b
* pencil      (A, B): the top-r generalized eigenvectors of (A, B) solve the *ratio trace*
              max tr((MᵀBM)⁻¹ MᵀAM), the classical eigenvector recipe, which is what
              ``heuristic()`` returns (orthonormalized) — not the optimum of this cost.
* global test (Dinkelbach; Wang et al. 2007, trace ratio): with ρ = ρ(M),
              g(ρ) = Σ of the r largest eigenvalues of A − ρB ≥ tr(Mᵀ(A − ρB)M) = 0, and M is
              a global maximizer of ρ iff g(ρ) = 0.  Moreover ρ* − ρ ≤ g(ρ)/β_r with β_r the
              sum of the r smallest eigenvalues of B, and the top-r eigenvectors M′ of A − ρB
              give ρ(M′) ≤ ρ*, so ``global_gap`` = g(ρ)/(β_r · L), L a lower bound on ``|ρ*|``
              (ρ(M′) when positive), bounds the relative suboptimality ``(ρ* − ρ)/|ρ*|``.

Default solver: ISM then trust region (ISM is the classical trace-ratio iteration, which
increases ρ monotonically to the global optimum; the trust region certifies in a step or two).
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import scipy.linalg

from ldr.eigen import top_generalized
from ldr.objective import Objective

__all__ = ["QuotientOfTraces"]


class QuotientOfTraces(Objective):
    """Minimize −tr(MᵀAM)/tr(MᵀBM) over orthonormal d×r M (A symmetric, B positive definite).

    The cost is invariant to M → MR, so the default manifold is Grassmann.

    Default solver: ``["ism", "trust-region"]`` (the trace-ratio iteration reaches the global
    optimum; the trust region certifies it; ``benchmarks/bench_defaults.py``).
    """

    def __init__(self, A, B, r: int, manifold: str = "grassmann"):
        A = np.asarray(A, dtype=float)
        B = np.asarray(B, dtype=float)
        self.A, self.B = 0.5 * (A + A.T), 0.5 * (B + B.T)
        self.shape, self.manifold = (A.shape[0], int(r)), manifold
        # the oracles use A and B times one power of two (exact), so that B's largest entry is
        # about 1: ρ, its gradient, Φ and the Hessian do not change, but b² no longer
        # underflows (nor 1/b² overflows) for data at 1e-90 or 1e90
        big = float(np.max(np.abs(self.B))) if self.B.size else 1.0
        unit = 2.0 ** -np.round(np.log2(big)) if np.isfinite(big) and big > 0 else 1.0
        self._A, self._B = self.A * unit, self.B * unit

    def ratio(self, M) -> float:
        """ρ(M) = tr(MᵀAM)/tr(MᵀBM), the natural (positive) score."""
        return float(np.sum(M * (self._A @ M)) / np.sum(M * (self._B @ M)))

    def cost(self, M):
        if type(M) is np.ndarray:  # not traced by autograd: reuse the point's products
            return -self._at(M)[3]
        return -anp.sum(M * (self._A @ M)) / anp.sum(M * (self._B @ M))

    def phi(self, M) -> np.ndarray:
        _, _, b, rho = self._at(np.asarray(M, dtype=float))
        return -(self._A - rho * self._B) / b

    def egrad(self, M):
        AM, BM, b, rho = self._at(np.asarray(M, dtype=float))
        return -2.0 * (AM - rho * BM) / b

    def _at(self, M):
        """(AM, BM, b, ρ) at M, computed once per point and shared by the cost, gradient, Φ
        and Hessian-vector products there (keyed by the point's bytes, so an array changed in
        place is a new point; stored as one attribute, so a reader never pairs a key with
        another point's values)."""
        key = (M.shape, M.dtype.str, M.tobytes())
        cached = getattr(self, "_cache", None)
        if cached is None or cached[0] != key:
            AM, BM = self._A @ M, self._B @ M
            b = np.sum(M * BM)
            cached = (key, (AM, BM, b, np.sum(M * AM) / b))
            self._cache = cached
        return cached[1]

    def ehvp(self, M, V):
        AM, BM, b, rho = self._at(np.asarray(M, dtype=float))
        AV, BV = self._A @ V, self._B @ V
        mbv = np.sum(M * BV)
        db = 2.0 * mbv
        drho = 2.0 * (np.sum(M * AV) - rho * mbv) / b
        return -2.0 * (AV - rho * BV - drho * BM) / b + 2.0 * (AM - rho * BM) * db / b**2

    def ehvp_at(self, M):
        """``V ↦ ehvp(M, V)`` for many V at one M (the trust region's inner solve).  With
        C = A − ρB, G₀ = CM (so ∇f = −2G₀/b) and tr(MᵀCV) = ⟨G₀, V⟩, tr(MᵀBV) = ⟨BM, V⟩,
        the Hessian above reads  −2 CV/b + 4⟨G₀, V⟩ BM/b² + 4⟨BM, V⟩ G₀/b²:  one product with
        the d×d matrix C, formed once per point."""
        cls = type(self)
        if cls.ehvp is not QuotientOfTraces.ehvp or cls.cost is not QuotientOfTraces.cost:
            return super().ehvp_at(M)  # a subclass with its own cost or Hessian
        M = np.asarray(M, dtype=float)
        BM = self._B @ M
        b = float(np.vdot(M, BM))
        rho = float(np.vdot(M, self._A @ M)) / b
        C = self._A - rho * self._B
        G0 = C @ M
        c1, c2 = -2.0 / b, 4.0 / b**2

        def hvp(V):
            return c1 * (C @ V) + (c2 * np.vdot(G0, V)) * BM + (c2 * np.vdot(BM, V)) * G0

        return hvp

    def pencil(self, M=None) -> tuple[np.ndarray, np.ndarray]:
        return self.A, self.B

    def heuristic(self) -> np.ndarray:
        return top_generalized(self._A, self._B, self.shape[1])[0]

    def global_gap(self, M) -> float:
        """Upper bound on the relative suboptimality ``(ρ* − ρ(M))/|ρ*|`` (module docstring);
        0 exactly at a global maximizer of the ratio."""
        M = np.asarray(M, dtype=float)
        r = self.shape[1]
        rho = self.ratio(M)
        w, V = scipy.linalg.eigh(self._A - rho * self._B)
        g = max(float(np.sum(w[-r:])), 0.0)
        if g == 0.0:
            return 0.0
        beta = float(np.sum(scipy.linalg.eigvalsh(self._B)[:r]))
        bound = g / beta                                       # ρ* − ρ ≤ bound
        rho_next = self.ratio(V[:, -r:])                       # ρ(M′) ≤ ρ*
        lower = rho_next if rho_next > 0 else -(rho + bound)   # a lower bound on |ρ*|
        return bound / lower if lower > 0 else float("inf")
