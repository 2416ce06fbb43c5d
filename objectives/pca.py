"""Principal component analysis as a manifold program (survey Eq. 2).

With C the per-feature-centered sample covariance (rows of X are samples):

* cost      f(M) = −tr(MᵀCM)          (maximize captured variance)
* gradient  ∇f(M) = −2CM,  Hessian-vector product −2CV
* Φ-oracle  Φ = −C (constant, so one ISM step is exact), Φ₀ = −C
* pencil    (C, I)
* heuristic the top-r eigenvectors of C — provably optimal, so no solver can beat it.
* a sum over rows (built from an in-memory array): f = Σ_i −‖Mᵀx̃_i‖²/(n − 1), the
  stochastic solvers' ``batch`` (:class:`~ldr.Objective`, Eq. S1)
* global test  tr(MᵀCM) ≤ Σ of the r largest eigenvalues of C (Ky Fan), with equality iff M
  spans a top-r eigenspace: ``global_gap`` = 1 − tr(MᵀCM)/Σλ_top.

Default solver: ISM then trust region (one ISM step is exact; the trust region certifies).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ldr.core.eigen import top_eigenvectors
from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective
from ldr.data import arrays
from ldr.data.rows import moments
from ldr.data.validation import check_data, check_rank

__all__ = ["PCA"]


class PCA(Objective):
    """PCA: minimize −tr(MᵀCM) over orthonormal d×r M.

    Parameters
    ----------
    X : array of shape (n_samples, n_features), Dask array, iterator of chunks or Moments
        Data as rows; centered per feature (a copy; ``X`` is not modified).  Only the
        covariance is kept, computed in one pass by :func:`ldr.data.rows.moments`, so a Dask
        array or an iterator of chunks is never held in memory.
    r : int
        Subspace dimension, 1 ≤ r < n_features.
    manifold : {"grassmann", "stiefel"}
        The cost is invariant to M → MR, so Grassmann is the natural choice.

    Attributes
    ----------
    mean_ : (n_features,) per-feature mean
    C : (n_features, n_features) sample covariance (divided by n − 1)

    ``X`` of another array namespace than NumPy (a PyTorch tensor, on a GPU or not) gives ``C``
    and ``mean_`` in that namespace, on that device, in X's float dtype, and every oracle
    computes there: :func:`ldr.solve` then iterates there too (:mod:`ldr.data.arrays`).

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = np.random.default_rng(0).standard_normal((50, 5)) * [5, 4, 3, 2, 1]
    >>> obj = ldr.objectives.PCA(X, 2)
    >>> res = ldr.solve(obj, "trust-region", random_state=0)
    >>> bool(abs(res.cost - obj.cost(obj.heuristic())) < 1e-9)
    True

    Default solver: ``["ism", "trust-region"]`` (one ISM step is exact; the trust region
    certifies it).
    """

    method = Method("pca", "PCA, −tr(MᵀCM)", chunks={})


    def __init__(self, X, r: int, manifold: str = "grassmann"):
        stats = moments(X, name="X")
        r = check_rank(r, stats.d)
        self.mean_ = stats.mean
        self.n_samples_ = stats.n
        self._init_cov(stats.covariance(ddof=1), r, manifold)
        if arrays.in_memory(X) and X.ndim == 2 and stats.n > 1:
            # the rows, for the stochastic solvers' batches (a reference, not a copy; not
            # pickled)
            self._rows = X
            self.n_terms = int(stats.n)

    def __getstate__(self):
        state = dict(self.__dict__)
        if state.pop("_rows", None) is not None:
            state.pop("n_terms", None)
        return state

    def batch(self, M, indices):
        """The rows' terms of the cost (Eq. S1 of :class:`~ldr.Objective`): with x̃_i the
        centered rows, f = −tr(MᵀCM) = Σ_i f_i, f_i(M) = −‖Mᵀx̃_i‖²/(n − 1) and
        ∇f_i = −2 x̃_i x̃_iᵀM/(n − 1).  Only for a PCA built from an in-memory array."""
        rows = self.__dict__.get("_rows")
        if rows is None:
            raise NotImplementedError("this PCA was built from a covariance, chunks or a Dask "
                                      "array, and keeps no rows to batch")
        xp = arrays.namespace(rows)
        Xb = xp.take(rows, xp.asarray(np.asarray(indices), device=arrays.device(rows)), axis=0)
        Xb = xp.astype(Xb, self.mean_.dtype) - self.mean_
        Y = Xb @ M
        w = 1.0 / (self.n_samples_ - 1)
        return -w * float(xp.sum(Y * Y)), (-2.0 * w) * (Xb.T @ Y)

    @classmethod
    def from_covariance(cls, C, r: int, manifold: str = "grassmann", mean=None) -> PCA:
        """PCA from a precomputed covariance matrix (e.g. accumulated over chunks)."""
        C = check_data(C, "C", min_samples=1)
        if C.shape[0] != C.shape[1] or not np.allclose(C, C.T, rtol=1e-10, atol=0):
            raise ParameterError("C", f"must be a symmetric square matrix, got shape {C.shape}")
        self = cls.__new__(cls)
        self.mean_ = np.zeros(C.shape[0]) if mean is None else np.asarray(mean, float).copy()
        self._init_cov(C, check_rank(r, C.shape[0]), manifold)
        return self

    def _init_cov(self, C, r, manifold):
        self.C = 0.5 * (C + C.T)
        self.shape = (C.shape[0], r)
        self.manifold = manifold

    def cost(self, M):
        return -arrays.namespace(M).sum(M * (self.C @ M))  # autograd.numpy where traced

    def egrad(self, M):
        return -2.0 * (self.C @ M)

    def ehvp(self, M, V):
        return -2.0 * (self.C @ V)

    def phi(self, M=None) -> np.ndarray:
        return -self.C

    def phi0(self) -> np.ndarray:
        return -self.C

    def pencil(self, M=None) -> tuple:
        return self.C, arrays.eye_like(self.C.shape[0], self.C)

    def heuristic(self):
        """The top-r eigenvectors of C, decreasing (in C's namespace and on its device)."""
        return top_eigenvectors(self.C, self.shape[1])

    def global_gap(self, M) -> float:
        """Relative suboptimality 1 − tr(MᵀCM)/Σ_{i≤r} λ_i(C), 0 exactly at a global optimum."""
        d, r = self.shape
        C = arrays.to_host(self.C)  # a check on the host (the certificate's)
        top = float(np.sum(scipy.linalg.eigvalsh(C, subset_by_index=[d - r, d - 1])))
        if top <= 0:
            return 0.0                      # C = 0: every subspace is optimal
        M = np.asarray(arrays.to_host(M), float)
        return max(1.0 - float(np.sum(M * (C @ M))) / top, 0.0)

    def explained_variance(self, M) -> float:
        """tr(MᵀCM), the variance captured by span(M)."""
        return float(arrays.namespace(M, self.C).sum(M * (self.C @ M)))

    def linear_map(self, M):
        """x ↦ (x − ``mean_``) M."""
        return self.mean_, M
