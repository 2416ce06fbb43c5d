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

import math

import numpy as np
import scipy.linalg

from ldr.core.eigen import top_generalized
from ldr.core.objective import Objective
from ldr.data import arrays

__all__ = ["QuotientOfTraces"]


class QuotientOfTraces(Objective):
    """Minimize −tr(MᵀAM)/tr(MᵀBM) over orthonormal d×r M (A symmetric, B positive definite).

    The cost is invariant to M → MR, so the default manifold is Grassmann.

    Default solver: ``["ism", "trust-region"]`` (the trace-ratio iteration reaches the global
    optimum; the trust region certifies it).
    """

    def __init__(self, A, B, r: int, manifold: str = "grassmann"):
        xp = arrays.namespace(A, B)  # NumPy, or kept in their namespace (PyTorch, CuPy, ...)
        A = xp.asarray(A)
        B = xp.asarray(B)
        self.A = 0.5 * (A + A.T)
        self.B = 0.5 * (B + B.T)
        self.shape = (A.shape[0], int(r))
        self.manifold = manifold
        # the oracles use A and B times one power of two (exact), so that B's largest entry is
        # about 1: ρ, its gradient, Φ and the Hessian do not change, but b² no longer
        # underflows (nor 1/b² overflows) for data at 1e-90 or 1e90
        big = arrays.max_abs(self.B) if math.prod(self.B.shape) else 1.0
        unit = float(2.0 ** -np.round(np.log2(big))) if np.isfinite(big) and big > 0 else 1.0
        self._A = self.A * unit
        self._B = self.B * unit

    def _point(self, M):
        """M as a float array of A's namespace and device (an autograd trace as it is)."""
        return arrays.as_point(M, self._A)

    def ratio(self, M) -> float:
        """ρ(M) = tr(MᵀAM)/tr(MᵀBM), the natural (positive) score."""
        return float(self._at(self._point(M))[3])

    def cost(self, M):
        return -self._at(self._point(M))[3]

    def phi(self, M):
        _, _, b, rho = self._at(self._point(M))
        return -(self._A - rho * self._B) / b

    def egrad(self, M):
        AM, BM, b, rho = self._at(self._point(M))
        return -2.0 * (AM - rho * BM) / b

    def _at(self, M):
        """(AM, BM, b, ρ) at M, computed once per point and shared by the cost, gradient, Φ
        and Hessian-vector products there (a copy of the point kept with them and compared by
        value, so an array changed in place is a new point; stored as one attribute, so a
        reader never pairs a point with another's values).  On an autograd trace (the cost's
        autograd derivatives) nothing is kept."""
        traced = arrays.traced(M)
        cached = getattr(self, "_cache", None)
        if not traced and cached is not None and arrays.same(cached[0], M):
            return cached[1]
        xp = arrays.namespace(M)
        AM = self._A @ M
        BM = self._B @ M
        b = xp.sum(M * BM)
        values = (AM, BM, b, xp.sum(M * AM) / b)
        if not traced:
            self._cache = (xp.asarray(M, copy=True), values)
        return values

    def ehvp(self, M, V):
        M = self._point(M)
        AM, BM, b, rho = self._at(M)
        AV = self._A @ V
        BV = self._B @ V
        xp = arrays.namespace(M)
        mbv = xp.sum(M * BV)
        db = 2.0 * mbv
        drho = 2.0 * (xp.sum(M * AV) - rho * mbv) / b
        return -2.0 * (AV - rho * BV - drho * BM) / b + 2.0 * (AM - rho * BM) * db / b**2

    def ehvp_at(self, M):
        """``V ↦ ehvp(M, V)`` for many V at one M (the trust region's inner solve).  With
        C = A − ρB, G₀ = CM (so ∇f = −2G₀/b) and tr(MᵀCV) = ⟨G₀, V⟩, tr(MᵀBV) = ⟨BM, V⟩,
        the Hessian above reads  −2 CV/b + 4⟨G₀, V⟩ BM/b² + 4⟨BM, V⟩ G₀/b²:  one product with
        the d×d matrix C, formed once per point."""
        cls = type(self)
        if cls.ehvp is not QuotientOfTraces.ehvp or cls.cost is not QuotientOfTraces.cost:
            return super().ehvp_at(M)  # a subclass with its own cost or Hessian
        M = self._point(M)
        BM = self._B @ M
        b = arrays.vdot(M, BM)
        rho = arrays.vdot(M, self._A @ M) / b
        C = self._A - rho * self._B
        G0 = C @ M
        c1 = -2.0 / b
        c2 = 4.0 / b**2

        def hvp(V):
            return c1 * (C @ V) + (c2 * arrays.vdot(G0, V)) * BM + (c2 * arrays.vdot(BM, V)) * G0

        return hvp

    def pencil(self, M=None) -> tuple[np.ndarray, np.ndarray]:
        return self.A, self.B

    def heuristic(self) -> np.ndarray:
        # on the host (a start point, computed once)
        return top_generalized(arrays.to_host(self._A), arrays.to_host(self._B), self.shape[1])[0]

    def global_gap(self, M) -> float:
        """Upper bound on the relative suboptimality ``(ρ* − ρ(M))/|ρ*|`` (module docstring);
        0 exactly at a global maximizer of the ratio."""
        M = np.asarray(arrays.to_host(M), dtype=float)  # a check on the host
        A = arrays.to_host(self._A)
        B = arrays.to_host(self._B)
        r = self.shape[1]
        rho = float(np.sum(M * (A @ M)) / np.sum(M * (B @ M)))
        w, V = scipy.linalg.eigh(A - rho * B)
        g = max(float(np.sum(w[-r:])), 0.0)
        if g == 0.0:
            return 0.0
        beta = float(np.sum(scipy.linalg.eigvalsh(B)[:r]))
        bound = g / beta                                       # ρ* − ρ ≤ bound
        Vr = V[:, -r:]
        rho_next = float(np.sum(Vr * (A @ Vr)) / np.sum(Vr * (B @ Vr)))   # ρ(M′) ≤ ρ*
        lower = rho_next if rho_next > 0 else -(rho + bound)   # a lower bound on |ρ*|
        return bound / lower if lower > 0 else float("inf")
