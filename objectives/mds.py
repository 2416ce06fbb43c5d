"""Linear metric MDS: Kruskal–Shepard stress of an orthogonal projection (survey §3.1.2, Eq. 4).

Rows x_i of X are samples, δ_ij = d_X(x_i, x_j) the given dissimilarities (Euclidean
distances of X by default), u_ij = Mᵀ(x_i − x_j) and, with a smoothing ε > 0,

    s_ij = √(‖u_ij‖² + ε²),        e_ij = s_ij − ε        (≈ ‖u_ij‖ = d_Y(Mᵀx_i, Mᵀx_j))

* cost      f(M) = Σ_i Σ_j (δ_ij − e_ij)²                      (Eq. 4, both orders of each pair)
* gradient  ∇f(M) = 2 Xᵀ L_Ω X M,   Ω_ij = −2(δ_ij − e_ij)/s_ij = 2 − 2(δ_ij + ε)/s_ij,
            L_Ω = diag(Ω1) − Ω
* Φ-oracle  Φ(M) = Xᵀ L_Ω X   (so ∇f = 2ΦM).  Its fixed points are first-order points, but
            ISM on it is a poor solver: from random starts it improves, then stalls short of
            the optimum (measured stress-1 0.31–0.34 where trust region reaches 0.29); use
            gradient or trust region, or chain ``["ism", "trust-region"]``.
* Hessian   D∇f(M)[V] = 2 Xᵀ (L_{Ω′} XM + L_Ω XV),   Ω′_ij = 2(δ_ij + ε) u_ijᵀw_ij / s_ij³,
            w_ij = Vᵀ(x_i − x_j)
* heuristic PCA's top-r eigenvectors.  For Euclidean δ this is classical scaling (Torgerson):
            the survey's Eq. 3 shows the scatter Σ_ij ‖y_i − y_j‖² is PCA's objective.  It is
            the natural start, not the stress optimum (and for non-Euclidean δ just PCA).

**Why ε.**  ‖u‖ is not differentiable where two projections coincide (u_ij = 0 with
x_i ≠ x_j); s_ij − ε is smooth everywhere, equals 0 at u = 0 (so i = j and duplicated
samples contribute exactly nothing), and differs from ‖u‖ by at most ε.  The default
ε = 1e-6 × the median positive dissimilarity changes the stress by a relative ~1e-6 and leaves
every gradient bounded (|∂e/∂u| ≤ 1); the Hessian grows like δ/ε only at coincident
projections, where the true stress has its concave kink.

Everything is accumulated over blocks of rows: besides the n×n dissimilarities (O(n²)
memory) no temporary exceeds block_size × n × r.  The cost depends on M only through the
distances ‖Mᵀ(x_i − x_j)‖, so the manifold is Grassmann.
"""

from __future__ import annotations

import numbers

import autograd.numpy as anp
import numpy as np
import scipy.linalg

from ldr.data.validation import check_data, check_new_data, check_rank
from ldr.errors import ParameterError
from ldr.objective import Method, Objective

__all__ = ["MDS"]


def _check_dissimilarity(D, n: int) -> np.ndarray:
    D = check_data(D, "dissimilarity", min_samples=1)
    if D.shape != (n, n):
        raise ParameterError("dissimilarity", f"must be n×n with n = {n} samples, got {D.shape}")
    scale = max(float(np.abs(D).max()), 1e-300)
    if np.abs(D - D.T).max() > 1e-10 * scale:
        raise ParameterError("dissimilarity", "must be symmetric; symmetrize it as (D + Dᵀ)/2")
    if D.min() < 0:
        raise ParameterError("dissimilarity", "must be non-negative")
    if np.abs(np.diag(D)).max() > 1e-12 * scale:
        raise ParameterError("dissimilarity", "the diagonal d_X(x_i, x_i) must be 0")
    D = 0.5 * (D + D.T)
    np.fill_diagonal(D, 0.0)
    return D


class MDS(Objective):
    """Linear Kruskal–Shepard MDS: minimize Σ_ij (δ_ij − ‖Mᵀ(x_i − x_j)‖)² over orthonormal M.

    Parameters
    ----------
    X : array (n_samples, n_features)
    r : int, 1 ≤ r < n_features
    dissimilarity : array (n_samples, n_samples), optional
        Precomputed δ_ij (symmetric, non-negative, zero diagonal).  Default: ``metric``
        distances of X.
    metric : str
        Any :func:`sklearn.metrics.pairwise_distances` metric, used when ``dissimilarity`` is
        not given (default ``"euclidean"``).
    eps : float, optional
        Smoothing of the projected distances (module docstring); default 1e-6 × the median
        positive dissimilarity.
    block_size : int, optional
        Rows per block of the n×n accumulations (default: blocks of about 2²¹ numbers).
    manifold : {"grassmann", "stiefel"}

    Attributes
    ----------
    mean_, delta (the n×n dissimilarities), eps

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = np.random.default_rng(0).standard_normal((60, 4)) * [3, 2, 1, 0.5]
    >>> obj = ldr.objectives.MDS(X, 2)
    >>> res = ldr.solve(obj, "trust-region", M0="heuristic")
    >>> bool(obj.stress(res.M) <= obj.stress(obj.heuristic()))
    True

    Default solver: ``"trust-region"``: ISM stalls on the stress and, polished, ends at worse
    local minima than the trust region alone (``benchmarks/bench_defaults.py``).
    """

    method = Method("mds", "metric MDS: Kruskal-Shepard stress of the projection")

    default_solver = "trust-region"

    def __init__(self, X, r: int, dissimilarity=None, metric: str = "euclidean",
                 eps: float | None = None, block_size: int | None = None,
                 manifold: str = "grassmann"):
        X = check_data(X, "X")
        n, d = X.shape
        r = check_rank(r, d)
        if dissimilarity is None:
            try:
                from sklearn.metrics import pairwise_distances

                delta = pairwise_distances(X, metric=metric)
            except (TypeError, ValueError) as exc:
                raise ParameterError("metric", f"{exc}") from None
            delta = 0.5 * (delta + delta.T)
            np.fill_diagonal(delta, 0.0)
        else:
            delta = _check_dissimilarity(dissimilarity, n)
        positive = delta[delta > 0]
        if positive.size == 0:
            raise ParameterError("X", "all dissimilarities are 0 (every sample is the same); "
                             "nothing to scale")
        if eps is None:
            eps = 1e-6 * float(np.median(positive))
        elif isinstance(eps, bool) or not isinstance(eps, numbers.Real) \
                or not np.isfinite(eps) or eps <= 0:
            raise ParameterError("eps", f"the distance smoothing must be a positive number, got "
                             f"{eps!r}")
        if block_size is None:
            block_size = max(1, min(n, 2**21 // (n * r)))
        elif isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral) \
                or block_size < 1:
            raise ParameterError("block_size", f"must be a positive integer, got {block_size!r}")
        self.mean_ = X.mean(axis=0)
        self.X = X - self.mean_
        self.delta, self.eps = delta, float(eps)
        self.block_size = int(block_size)
        self.shape, self.manifold = (d, r), manifold

    def _blocks(self):
        n, b = self.X.shape[0], self.block_size
        return [slice(i, min(i + b, n)) for i in range(0, n, b)]

    # -- cost (autograd-traceable) ------------------------------------------------------------
    def cost(self, M):
        Y = anp.dot(self.X, M)
        eps = self.eps
        total = 0.0
        for sl in self._blocks():
            diff = Y[sl][:, None, :] - Y[None, :, :]
            s = anp.sqrt(anp.sum(diff**2, axis=2) + eps**2)
            total = total + anp.sum((self.delta[sl] - (s - eps)) ** 2)
        return total

    def stress(self, M) -> float:
        """Kruskal's stress-1, √(Σ(δ_ij − ‖Mᵀ(x_i − x_j)‖)² / Σ δ_ij²), exact distances (no ε)."""
        Y = self.X @ M
        num = 0.0
        for sl in self._blocks():
            dist = np.sqrt(np.sum((Y[sl][:, None, :] - Y[None, :, :]) ** 2, axis=2))
            num += float(np.sum((self.delta[sl] - dist) ** 2))
        return float(np.sqrt(num / np.sum(self.delta**2)))

    # -- closed-form oracles ------------------------------------------------------------------
    def _omega(self, Y, sl):
        """(differences u, s, Ω) for the rows ``sl``."""
        diff = Y[sl][:, None, :] - Y[None, :, :]
        s = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff) + self.eps**2)
        omega = 2.0 - 2.0 * (self.delta[sl] + self.eps) / s
        return diff, s, omega

    def egrad(self, M):
        M = np.asarray(M, dtype=float)
        Y = self.X @ M
        G = np.zeros_like(M)
        for sl in self._blocks():
            _, _, om = self._omega(Y, sl)
            LY = om.sum(axis=1)[:, None] * Y[sl] - om @ Y      # rows sl of L_Ω Y
            G += self.X[sl].T @ LY
        return 2.0 * G

    def phi(self, M) -> np.ndarray:
        Y = self.X @ np.asarray(M, dtype=float)
        d = self.X.shape[1]
        P = np.zeros((d, d))
        for sl in self._blocks():
            _, _, om = self._omega(Y, sl)
            P += self.X[sl].T @ (om.sum(axis=1)[:, None] * self.X[sl] - om @ self.X)
        return 0.5 * (P + P.T)

    def ehvp(self, M, V):
        M, V = np.asarray(M, dtype=float), np.asarray(V, dtype=float)
        Y, Z = self.X @ M, self.X @ V
        H = np.zeros_like(M)
        for sl in self._blocks():
            diff, s, om = self._omega(Y, sl)
            uw = np.einsum("ijk,ijk->ij", diff, Z[sl][:, None, :] - Z[None, :, :])
            omp = 2.0 * (self.delta[sl] + self.eps) * uw / s**3
            out = om.sum(axis=1)[:, None] * Z[sl] - om @ Z
            out += omp.sum(axis=1)[:, None] * Y[sl] - omp @ Y
            H += self.X[sl].T @ out
        return 2.0 * H

    def heuristic(self) -> np.ndarray:
        d, r = self.shape
        _, V = scipy.linalg.eigh(self.X.T @ self.X, subset_by_index=[d - r, d - 1])
        return V[:, ::-1].copy()

    def transform(self, X, M):
        return (check_new_data(X, self.shape[0]) - self.mean_) @ M
