"""The flat space R^{d×r} of unconstrained matrices (PPCA's and factor analysis's loadings,
a metric's factor)."""

from __future__ import annotations

import math

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.manifolds.manifold import RETRACTIONS, Manifold, factor_shape


class Euclidean(Manifold):
    """R^{d×r} with the Euclidean metric, or ``k`` stacked copies (points (k, d, r)).

    The tangent space is the whole space: the projection, the transport and the conversion
    of the Hessian are the identity, and the retraction is ``M + V``.  The geodesics are the
    straight lines t ↦ M + tV, so the exponential is ``M + V``, the logarithm ``N − M`` and
    the distance ‖N − M‖_F (over all the entries of a stack: the product distance).

    Parameters
    ----------
    d, r : int
        A point is a d×r matrix.
    k : int, default 1
        The number of factors; k > 1 stacks them (points (k, d, r)).

    Attributes
    ----------
    dim : int
        k·d·r.
    typical_dist : float
        √dim (pymanopt's).
    """

    transport_is_identity = True

    def __init__(self, d: int, r: int, k: int = 1):
        self.shape = factor_shape(d, r, k)
        self.k = int(k)
        self.dim = math.prod(self.shape)
        self.typical_dist = math.sqrt(self.dim)

    def __repr__(self) -> str:
        d, r = self.shape[-2:]
        return f"Euclidean({d}, {r}" + (f", k={self.k})" if self.k > 1 else ")")

    def __str__(self) -> str:
        d, r = self.shape[-2:]
        return f"R^{{{d}×{r}}}" + (f"^{self.k}" if self.k > 1 else "")

    @property
    def pymanopt(self):
        import pymanopt.manifolds as pm  # only for the adapter and cross-checks

        return pm.Euclidean(*self.shape)

    def project(self, M, Z):
        return Z

    def rhess(self, M, G, H, V, S=None):
        return H

    def retract(self, M, V, method: str = "polar"):
        if method not in RETRACTIONS:
            raise ParameterError("retraction", f"expected one of {RETRACTIONS}, got {method!r}")
        return M + V

    def transport(self, M, N, V):
        return V

    def random_point(self, rng: np.random.Generator):
        return rng.standard_normal(self.shape)

    def exp(self, M, V):
        """Exp_M(V) = M + V, the end of the straight line t ↦ M + tV."""
        self.check_pair(M, V, "V")
        return M + V

    def log(self, M, N):
        """Log_M(N) = N − M."""
        self.check_pair(M, N, "N")
        return N - M

    def dist(self, M, N) -> float:
        """‖N − M‖_F (over all the entries of a stack)."""
        self.check_pair(M, N, "N")
        return arrays.norm(N - M)

    def change(self, M, N) -> float:
        """The relative distance ‖N − M‖_F / max(‖M‖_F, ‖N‖_F), which does not depend on the
        units of the data (the largest over a stack's factors)."""
        if arrays.numpy_fast_path(M, N) and M.ndim == 2:
            # np.linalg.norm's arithmetic without its argument handling
            # benchmark: benchmarks/bench_dml.py
            size = max(arrays.frobenius(M), arrays.frobenius(N), 1e-300)
            return float(arrays.frobenius(N - M) / size)
        return arrays.relative_change(M, N)

    def matrix_tangent_basis(self, M):
        d, r = M.shape
        return d * r, lambda c: c.reshape(d, r), lambda V: V.reshape(-1)
