"""Matrices with orthonormal columns: the point set of the Stiefel and Grassmann manifolds,
what the two share, and the functions on orthonormal bases other modules use.

* :class:`OrthonormalColumns`, the base of :class:`~ldr.manifolds.Stiefel` and
  :class:`~ldr.manifolds.Grassmann`: a point is a d×r matrix M with MᵀM = I (k stacked
  ones for k > 1); the retraction, the random point, the feasibility ‖MᵀM − I‖_F and the
  nearest point are the same on both;
* :func:`orthonormalize`: an orthonormal basis of a matrix's column span (QR);
* :func:`sin_largest_angle`: the sine of the largest principal angle between two spans.
"""

from __future__ import annotations

import math

import numpy as np

from ldr.core import linalg
from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.manifolds.manifold import RETRACTIONS, Manifold, factor_shape


def orthonormalize(A):
    """An orthonormal basis of the column span of ``A`` (d×r, d ≥ r): Q of A = QR with
    diag(R) ≥ 0 (:func:`ldr.core.linalg.qr`), in the namespace of ``A`` (NumPy for a list)."""
    return linalg.qr(A if arrays.foreign(A) is not None else np.asarray(A, dtype=float))


def sin_largest_angle(M, N) -> float:
    """Sine of the largest principal angle between span(M) and span(N), both orthonormal
    (the largest over a stack's pairs): ``sin θ_max = ‖(I − M Mᵀ) N‖₂`` (Björck & Golub
    1973).  The residual is formed and its norm taken from its r×r Gram matrix
    (:func:`ldr.core.linalg.spectral_norm`), so an angle of 1e-12 keeps its relative accuracy,
    where the arccos of the cosines loses every angle below about 1e-8.

    References
    ----------
    Å. Björck, G. H. Golub (1973), "Numerical methods for computing angles between linear
    subspaces", Math. Comp. 27, 579–594.
    """
    return min(1.0, linalg.spectral_norm(N - M @ (M.mT @ N)))


class OrthonormalColumns(Manifold):
    """The base of Stiefel and Grassmann: points are d×r matrices with orthonormal columns
    (1 ≤ r ≤ d), or stacks (k, d, r) of them for k > 1.

    * retraction (Absil & Malick 2012): ``"polar"``, R_M(V) = U Wᵀ for M + V = U S Wᵀ, the
      nearest orthonormal matrix to M + V (survey Eq. 35; it keeps ‖MᵀM − I‖ at rounding
      level however long a run is), or ``"qr"``, the Q factor of M + V with diag(R) ≥ 0;
    * random point: the Q factor (diag(R) ≥ 0) of a standard normal matrix, uniformly
      distributed on the Stiefel manifold (Mezzadri 2007, §5);
    * feasibility: ‖MᵀM − I‖_F (the largest over a stack's factors);
    * nearest point to a matrix M: its polar factor (same span).
    * typical distance √(k r) (pymanopt's).

    References
    ----------
    P.-A. Absil, J. Malick (2012), "Projection-like retractions on matrix manifolds", SIAM
    J. Optim. 22, 135–158.  J. P. Cunningham, Z. Ghahramani (2015), "Linear dimensionality
    reduction: survey, insights, and generalizations", JMLR 16, 2859–2900 (the survey).
    F. Mezzadri (2007), "How to generate random matrices from the classical compact groups",
    Notices Amer. Math. Soc. 54, 592–604.
    """

    def __init__(self, d: int, r: int, k: int = 1):
        self.shape = factor_shape(d, r, k)
        if not r <= d:
            raise ParameterError("r", f"a {type(self).__name__} point needs 1 <= r <= d, got "
                                      f"(d, r) = {(d, r)}")
        self.k = int(k)
        self.typical_dist = math.sqrt(self.k * self.shape[-1])
        self.orthonormal_matrix = self.k == 1

    def __repr__(self) -> str:
        d, r = self.shape[-2:]
        return f"{type(self).__name__}({d}, {r}" + (f", k={self.k})" if self.k > 1 else ")")

    def __str__(self) -> str:
        d, r = self.shape[-2:]
        return f"{type(self).__name__}({d}, {r})" + (f"^{self.k}" if self.k > 1 else "")

    def retract(self, M, V, method: str = "polar"):
        if method == "polar":
            return linalg.polar(M + V)
        if method == "qr":
            return linalg.qr(M + V)
        raise ParameterError("retraction", f"expected one of {RETRACTIONS}, got {method!r}")

    def random_point(self, rng: np.random.Generator):
        return linalg.qr(rng.standard_normal(self.shape))

    def feasibility(self, M) -> float:
        M = arrays.to_host(M)  # a check, not an iteration's work
        E = M.mT @ M - np.eye(self.shape[-1])
        return float(np.max(np.linalg.norm(E, axis=(-2, -1))))

    def nearest(self, M, name: str):
        """The polar factor U Wᵀ of M = U S Wᵀ, the nearest matrix with orthonormal columns
        in the Frobenius norm (same span); a ParameterError naming ``name`` when M has
        numerically dependent columns, whose span is not r-dimensional."""
        s = np.linalg.svd(M, compute_uv=False)
        top = np.max(s, axis=-1)
        low = np.min(s, axis=-1)
        if np.any(low <= 1e-12 * top):
            raise ParameterError(name, f"its columns are linearly dependent (singular values "
                                 f"down to {float(np.min(low / np.maximum(top, 1e-300))):.1e} "
                                 "of the largest), so no orthonormal basis spans them; pass a "
                                 "start with independent columns")
        return linalg.polar(M)

    def orthogonal_complement(self, M: np.ndarray) -> np.ndarray:
        """An orthonormal basis (d × (d − r)) of the complement of span(M), M one matrix."""
        Q, _ = np.linalg.qr(M, mode="complete")
        return Q[:, M.shape[1]:]
