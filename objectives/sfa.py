"""Linear slow feature analysis: PCA of the time derivative of whitened data (survey §3.1.6).

Rows x_1, …, x_n of X are samples **in time order**.  With the covariance
Σ = (1/n) Σ_t (x_t − μ)(x_t − μ)ᵀ and the symmetric whitening W = Σ^{−1/2}, the whitened data
are z_t = Wᵀ(x_t − μ), their time derivative is the finite difference ż_t = z_{t+1} − z_t, and

    Ċ = (1/(n − 1)) Σ_{t=1}^{n−1} ż_t ż_tᵀ            (the survey's ẊẊᵀ, of whitened data)

    minimize  f(M) = tr(MᵀĊM)  over orthonormal d×r M                   (Eq. 13)

* gradient  ∇f(M) = 2ĊM,  Hessian-vector product 2ĊV
* Φ-oracle  Φ = Ċ (constant, so one ISM step is exact), Φ₀ = Ċ
* pencil    (−Ċ, I): the top generalized eigenvectors are the slowest directions
* heuristic the r eigenvectors of Ċ with the smallest eigenvalues — provably optimal
  (Ky Fan), so no solver can beat it, as for PCA.

Whitening is the survey's choice (ii) (and Wiskott & Sejnowski's unit-variance, decorrelation
constraints): it enters through the data, not through M, so M stays orthonormal and the
features are y_t = Mᵀ W (x_t − μ) — that is what :meth:`SFA.transform` returns; the filters in
the original coordinates are W M (:meth:`SFA.filters`).  Without whitening the program would
return the directions of least variance rather than the slowest ones.  On the training data
(shrinkage = 0) the features have covariance MᵀM = I.  Equivalently, span(W M) at the optimum is
spanned by the generalized eigenvectors of (Σ̇, Σ) with the smallest eigenvalues, Σ̇ the
derivative second moment of the raw data.  The derivative moment is uncentered (the survey's ẊẊᵀ,
Wiskott's ⟨ẏ²⟩) and divided by n − 1 (a constant factor, which moves no optimum).
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import scipy.linalg

from ldr.core.deprecation import renamed_value
from ldr.core.objective import Method, Objective
from ldr.data.rows import moments
from ldr.data.validation import check_rank, eigh_nonsingular, shrink

__all__ = ["SFA"]


class SFA(Objective):
    """Linear slow feature analysis: minimize tr(MᵀĊM) over orthonormal d×r M.

    The **row order of X is the time order**, and keeping it is the caller's responsibility:
    shuffled rows (or rows sorted by anything but time) silently give a meaningless answer,
    as the finite differences then measure jumps between unrelated samples.

    Parameters
    ----------
    X : array (n_samples, n_features), Dask array, iterator of chunks, or Moments
        Samples as rows, in time order (equally spaced); centered and whitened (a copy).
        Only Σ and the raw difference moment Σ_t ẋ_t ẋ_tᵀ are kept, computed in one pass by
        :func:`ldr.data.rows.moments` (differences across chunk boundaries included); whitening
        acts on them: Ċ = W (Σ ẋẋᵀ/(n − 1)) W.
    r : int
        Number of slow features, 1 ≤ r < n_features.
    shrinkage : float in [0, 1]
        s in the shrinkage of the covariance before whitening, Σ ← (1 − s) Σ + s · tr(Σ)/d · I.
        A singular Σ (fewer samples than features, constant or collinear features) cannot be
        whitened and raises an error that asks for ``shrinkage > 0``.
    manifold : {"grassmann", "stiefel"}

    Attributes
    ----------
    mean_ : (n_features,) per-feature mean
    Sigma : (n_features, n_features) covariance Σ (divided by n; shrunk when shrinkage > 0)
    whitening_ : (n_features, n_features) symmetric W = Σ^{−1/2}
    Cdot : (n_features, n_features) second moment Ċ of the whitened finite differences

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = ldr.datasets.make_maf(200, 6, seed=0)
    >>> obj = ldr.objectives.SFA(X, 2)
    >>> res = ldr.solve(obj, "trust-region", random_state=0)
    >>> bool(abs(res.cost - obj.cost(obj.heuristic())) < 1e-9)
    True
    >>> Y = obj.transform(X, res.M)          # y_t = Mᵀ W (x_t − μ): unit covariance
    >>> bool(np.allclose(Y.T @ Y / len(Y), np.eye(2)))
    True

    Default solver: ``["ism", "trust-region"]``: ISM follows the Φ-oracle's eigenvectors to a
    fixed point, the trust region certifies it.
    """

    method = Method("sfa", "slow feature analysis (rows in time order)",
                    options={"reg": "shrinkage"}, chunks={"lag": 1, "diff": True})


    def __init__(self, X, r: int, shrinkage: float = 0.0, manifold: str = "grassmann", *,
                 reg="deprecated"):
        shrinkage = renamed_value(type(self).__name__, "reg", "shrinkage", reg, shrinkage)
        stats = moments(X, lag=1, diff=True, name="X", min_samples=3)
        n = stats.n
        d = stats.d
        r = check_rank(r, d)
        self.mean_ = stats.mean
        self.n_samples_ = n
        Sigma = shrink(stats.covariance(), shrinkage)
        w, V = eigh_nonsingular(Sigma, "X", "covariance Σ", "the data cannot be whitened", n)
        self.Sigma = Sigma
        self.whitening_ = (V / np.sqrt(w)) @ V.T
        Cdot = self.whitening_ @ stats.diff_moment() @ self.whitening_
        self.Cdot = 0.5 * (Cdot + Cdot.T)
        self.shape = (d, r)
        self.manifold = manifold

    def cost(self, M):
        return anp.sum(M * (self.Cdot @ M))

    def egrad(self, M):
        return 2.0 * (self.Cdot @ M)

    def ehvp(self, M, V):
        return 2.0 * (self.Cdot @ V)

    def phi(self, M=None) -> np.ndarray:
        return self.Cdot

    def phi0(self) -> np.ndarray:
        return self.Cdot

    def pencil(self, M=None) -> tuple[np.ndarray, np.ndarray]:
        return -self.Cdot, np.eye(self.shape[0])

    def heuristic(self) -> np.ndarray:
        _, V = scipy.linalg.eigh(self.Cdot, subset_by_index=[0, self.shape[1] - 1])
        return V.copy()

    def slowness(self, M) -> float:
        """tr(MᵀĊM): the mean squared time derivative of the features (smaller is slower)."""
        return float(np.sum(M * (self.Cdot @ M)))

    def filters(self, M) -> np.ndarray:
        """W M: the directions in the original coordinates, y_t = (W M)ᵀ (x_t − μ)."""
        return self.whitening_ @ M

    def linear_map(self, M):
        """The slow features y = Mᵀ W (x − μ): x ↦ (x − ``mean_``) W M (whitening, then M)."""
        return self.mean_, self.filters(M)
