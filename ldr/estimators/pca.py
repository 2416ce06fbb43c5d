"""Principal component analysis by manifold optimization, with scikit-learn's PCA API."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from ldr.errors import ParameterError
from ldr.estimators._base import (
    FitData,
    LinearDR,
    ProjectionAPI,
    check_int_components,
    closed_form_result,
    sign_rule,
)
from ldr.estimators._gaussian import minka_dimension, ppca_covariance, ppca_precision
from ldr.estimators._namespace import fitted_numpy, from_numpy, namespace_of, to_numpy
from ldr.estimators._output import validate_data
from ldr.objectives.pca import PCA as PCAObjective

__all__ = ["PCA"]


class PCA(ProjectionAPI, LinearDR):
    """Principal component analysis by manifold optimization (survey Eq. 2), with the API of
    :class:`sklearn.decomposition.PCA`.

    Minimizes −tr(MᵀCM) over orthonormal d×r M (:class:`ldr.objectives.PCA`, C the sample
    covariance divided by n − 1).  The default run is :func:`ldr.solve`'s (ISM from the
    eigenvectors of Φ₀ = −C, the exact answer, then the trust region, which certifies it at
    iteration 0); other solvers and starts reach the same subspace.  The basis is then
    rotated to the principal axes within it (eigenvectors of MᵀCM, largest variance first)
    with scikit-learn's sign rule (the largest entry of each component is positive), so
    ``components_`` matches ``sklearn.decomposition.PCA`` up to rounding where the
    eigenvalues are distinct.  With r = n_features the Grassmann manifold is a single point:
    no solver runs and the axes are the eigenvectors of C (``result_.solver`` is
    "closed-form", ``objective_`` is None).

    Parameters
    ----------
    n_components : None, int, float in (0, 1) or "mle", default None
        As in scikit-learn's PCA (full SVD): None keeps min(n_samples, n_features)
        components; an int 1 <= r <= min(n_samples, n_features); a float q in (0, 1) keeps the
        fewest components whose cumulative ``explained_variance_ratio_`` exceeds q; "mle"
        chooses r by Minka's evidence (needs n_samples >= n_features; Minka, NIPS 2000).
    whiten : bool, default False
        ``transform`` divides each component by √explained_variance_ (unit-variance
        outputs); ``inverse_transform`` multiplies back.
    solver, start, tol, max_iter, solver_params, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR` (``components_ == M_.T``, orthonormal rows, also with whiten)
    explained_variance_ : (n_components,)
        Variance along each component: the eigenvalues of MᵀCM (C divided by n − 1).
    explained_variance_ratio_ : (n_components,)
        Its share of the total variance tr(C) (zeros for constant data).
    singular_values_ : (n_components,)
        The singular values of the centered data, ``‖(X − mean_) m_j‖`` (=
        ``√((n − 1) · explained_variance_)``); from the data when X is in memory, from that
        formula for a Dask array or memmap).
    noise_variance_ : float
        The probabilistic-PCA noise σ² (Tipping & Bishop, Eq. 12.46 in Bishop's PRML): the
        mean of the min(n_samples, n_features) − r discarded covariance eigenvalues; 0 when
        r = min(n_samples, n_features).
    n_samples_ : int

    Notes
    -----
    float32 data give float32 attributes and transforms (the statistics and the solver work
    in float64).  ``get_covariance`` does not depend on ``whiten`` (the model's covariance
    is one of the data); scikit-learn 1.9 scales the components by √explained_variance_
    there when ``whiten=True``, which changes the matrix it returns — a difference kept on
    purpose, and so ``get_precision``, ``score_samples`` and ``score`` (which read that
    covariance) differ from scikit-learn's with ``whiten=True`` too.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((100, 4)) * [4.0, 3.0, 2.0, 1.0]
    >>> est = PCA(n_components=2).fit(X)
    >>> bool(np.all(np.abs(est.components_.argmax(axis=1) - [0, 1]) == 0))
    True
    >>> est.explained_variance_ratio_.round(2)
    array([0.54, 0.26])
    >>> PCA(n_components=0.9).fit(X).n_components_, PCA().fit(X).n_components_
    (3, 4)
    """

    _objective_class = PCAObjective
    _array_api_support = True

    def __init__(self, n_components=None, *, whiten=False, solver=None,
                 start=None, tol=1e-8, max_iter=1000, solver_params=None,
                 random_state=0):
        self.n_components, self.whiten = n_components, whiten
        self.solver, self.start, self.tol, self.max_iter = solver, start, tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    # --- the fit template's hooks (ldr.estimators._base) ------------------------------------
    def _prepare(self, X, y) -> FitData:
        if not isinstance(self.whiten, (bool, np.bool_)):
            raise ParameterError("whiten", f"expected True or False, got {self.whiten!r}")
        data = super()._prepare(X, None)
        self._C = data.stats.covariance(ddof=1)
        self._total = float(np.trace(self._C))
        self._eig = None
        return data

    def _spectrum(self):
        """The covariance eigenvalues (largest first, clipped at 0) and eigenvectors, once."""
        if self._eig is None:
            w, V = scipy.linalg.eigh(self._C)
            self._eig = (np.maximum(w[::-1], 0.0), V[:, ::-1])
        return self._eig

    def _n_components(self, data: FitData) -> int:
        """r from ``n_components`` (the spectrum is computed only for a float or "mle")."""
        n, d = data.stats.n, data.stats.d
        q, upper = self.n_components, min(n, d)
        if q is None:
            return upper
        if isinstance(q, str):
            if q != "mle":
                raise ParameterError("n_components", f"the only string accepted is 'mle', "
                                                     f"got {q!r}")
            if n < d:
                raise ParameterError("n_components", f"'mle' is only supported if n_samples "
                                     f">= n_features (got {n} < {d}); pass an int or a float "
                                     "in (0, 1)")
            return minka_dimension(self._spectrum()[0], n)
        if isinstance(q, numbers.Real) and not isinstance(q, (numbers.Integral, bool)):
            if not 0.0 < q < 1.0:
                raise ParameterError("n_components", f"a float must lie in (0, 1) (the "
                                     f"fraction of variance to keep), got {q!r}; pass an int "
                                     "for a count")
            if self._total <= 0:
                return 1
            ratio = np.cumsum(self._spectrum()[0][:upper] / self._total)
            return min(int(np.searchsorted(ratio, q, side="right")) + 1, upper)
        return check_int_components(q, upper, "min(n_samples, n_features)",
                                    " (or a float in (0, 1), or 'mle')")

    def _make_objective(self, data: FitData, r: int):
        return PCAObjective(data.stats, r) if r < data.stats.d else None

    def _closed_form(self, data: FitData, r: int):
        w, V = self._spectrum()
        return V, closed_form_result(self, V, -np.sum(w),
                                     "the principal axes are the eigenvectors of C")

    def _finalize(self, obj, M, data: FitData):
        """Rotate to the principal axes within the span (largest variance first, sign rule)
        and set the variances, singular values and noise variance."""
        C, total, stats = self._C, self._total, data.stats
        n, d = stats.n, stats.d
        if obj is not None:
            w, V = np.linalg.eigh(M.T @ C @ M)
            M, w = M @ V[:, ::-1], np.maximum(w[::-1], 0.0)
        else:
            w = self._spectrum()[0]
        M = sign_rule(M)
        r, kept = M.shape[1], min(n, d)
        if r < kept:
            rest = self._eig[0][r:kept] if self._eig is not None else None
            noise = (float(np.mean(rest)) if rest is not None
                     else max(total - float(np.sum(w)), 0.0) / (kept - r))
            # by subtraction the noise carries an error of about eps·tr(C): never above the
            # smallest kept variance (the PPCA solution's order), 0 at rounding level
            noise = min(noise, float(w[-1]))
            if noise <= 16 * np.finfo(float).eps * max(total, 0.0):
                noise = 0.0
        else:
            noise = 0.0
        self.mean_ = np.asarray(stats.mean)
        self.explained_variance_ = w
        self.explained_variance_ratio_ = w / total if total > 0 else np.zeros_like(w)
        # from the data where they are in memory: √((n − 1)λ) loses half the digits of a
        # singular value near zero (an error of √ε·σ₁ instead of ε·σ₁)
        X = data.X
        space = namespace_of(X)
        if space is not None:  # the rows on their device (ldr.estimators._namespace)
            xp, dev = space
            Z = ((X - xp.asarray(stats.mean, dtype=X.dtype, device=dev))
                 @ xp.asarray(np.ascontiguousarray(M), dtype=X.dtype, device=dev))
            self.singular_values_ = np.asarray(to_numpy(xp.linalg.vector_norm(Z, axis=0)),
                                               dtype=float)
        else:
            self.singular_values_ = (
                np.linalg.norm((X - stats.mean) @ M, axis=0)
                if isinstance(X, np.ndarray) and not isinstance(X, np.memmap)
                else np.sqrt(w * (n - 1)))
        self.noise_variance_ = float(noise)
        self.n_samples_ = n
        del self._C, self._total, self._eig
        return M

    def _scale(self, Z, xp, device):
        if not self.whiten:
            return Z
        scale = xp.sqrt(xp.asarray(fitted_numpy(self, "explained_variance_"), device=device))
        return Z / xp.clip(scale, min=float(np.finfo(np.float32 if scale.dtype == xp.float32
                                                        else np.float64).eps))

    def _like_components(self, value):
        """A NumPy result in the namespace (and dtype) of ``components_``."""
        space = namespace_of(self.components_)
        dtype = to_numpy(self.components_[:1, :1]).dtype
        value = np.asarray(value).astype(dtype, copy=False)
        return value if space is None else from_numpy(value, *space)

    def _transform_block(self, X):
        Z = (X - self.mean_) @ self.components_.T
        if self.whiten:  # as scikit-learn: a zero variance is clipped to the dtype's eps
            scale = np.sqrt(self.explained_variance_)
            Z = Z / np.maximum(scale, np.finfo(scale.dtype).eps)
        return Z

    def inverse_transform(self, X) -> np.ndarray:
        """Back to the feature space: ``X @ components_ + mean_`` (× ``√explained_variance_`` per
        component first when ``whiten``) — exact for data in the principal subspace."""
        check_is_fitted(self, "M_")
        space = namespace_of(X, fitted=self, method="inverse_transform")
        X = check_array(to_numpy(X), dtype=[np.float64, np.float32], input_name="X")
        if X.shape[1] != self.n_components_:
            raise ParameterError("X", f"has {X.shape[1]} columns, but {type(self).__name__} has "
                             f"n_components_ = {self.n_components_}")
        V = fitted_numpy(self, "components_")
        if self.whiten:
            V = np.sqrt(fitted_numpy(self, "explained_variance_"))[:, None] * V
        out = X @ V + fitted_numpy(self, "mean_")
        return out if space is None else from_numpy(out, *space)

    def get_covariance(self) -> np.ndarray:
        """The probabilistic-PCA covariance Vᵀ diag(max(λ − σ², 0)) V + σ² I of the data
        (V = ``components_``, λ = ``explained_variance_``, σ² = ``noise_variance_``)."""
        check_is_fitted(self, "M_")
        C = ppca_covariance(np.asarray(fitted_numpy(self, "components_"), float),
                            np.asarray(fitted_numpy(self, "explained_variance_"), float),
                            self.noise_variance_)
        return self._like_components(C)

    def get_precision(self) -> np.ndarray:
        """The inverse of :meth:`get_covariance`, by the matrix inversion lemma (σ² > 0)."""
        check_is_fitted(self, "M_")
        P = ppca_precision(np.asarray(fitted_numpy(self, "components_"), float),
                           np.asarray(fitted_numpy(self, "explained_variance_"), float),
                           self.noise_variance_)
        return self._like_components(P)

    def score_samples(self, X) -> np.ndarray:
        """Log-likelihood of each row of X under ``N(mean_, get_covariance())``."""
        check_is_fitted(self, "M_")
        space = namespace_of(X, fitted=self, method="score_samples")
        X = validate_data(self, to_numpy(X), reset=False, dtype=np.float64)
        Xr = X - fitted_numpy(self, "mean_")
        # a singular covariance (rank-deficient data, all its directions kept) has no
        # density: ppca_precision says so (scikit-learn raises a LinAlgError there)
        P = ppca_precision(np.asarray(fitted_numpy(self, "components_"), float),
                           np.asarray(fitted_numpy(self, "explained_variance_"), float),
                           self.noise_variance_)
        _, logdet = np.linalg.slogdet(P)
        out = -0.5 * np.sum(Xr * (Xr @ P), axis=1) - 0.5 * (X.shape[1] * np.log(2 * np.pi)
                                                             - logdet)
        return out if space is None else from_numpy(out, *space)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the rows of X (scikit-learn's ``PCA.score``)."""
        return float(np.mean(to_numpy(self.score_samples(X))))

