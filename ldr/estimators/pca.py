"""Principal component analysis by manifold optimization, with scikit-learn's PCA API."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import moments
from ldr.estimators.base import (
    AffineMap,
    FitData,
    LinearDR,
    WeightedFit,
    check_int_components,
    closed_form_result,
    sign_rule,
)
from ldr.estimators.gaussian import minka_dimension, ppca_covariance, ppca_precision
from ldr.objectives.pca import PCA as PCAObjective

__all__ = ["PCA"]


class PCA(WeightedFit, LinearDR):
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
    solver, start, tol, max_iter, solver_params, verbose,
    warm_start, random_state : see :class:`LinearDR`

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`LinearDR` (``components_ == M_.T``, orthonormal rows, also with whiten)
    explained_variance_ : (n_components,)
        Variance along each component: the eigenvalues of MᵀCM (C divided by n − 1).
    explained_variance_ratio_ : (n_components,)
        Its share of the total variance tr(C) (zeros for constant data).
    singular_values_ : (n_components,)
        The singular values of the centered data, ``‖(X − mean_) m_j‖``, from the rows where
        they are in memory, else ``√((n − 1) · explained_variance_)``.
    noise_variance_ : float
        The probabilistic-PCA noise σ² (Tipping & Bishop 1999; Bishop, PRML Eq. 12.46): the
        mean of the min(n_samples, n_features) − r discarded covariance eigenvalues; 0 when
        r = min(n_samples, n_features).
    n_samples_ : int

    Notes
    -----
    ``get_covariance`` does not depend on ``whiten`` (the model's covariance is one of the
    data), so it, ``get_precision``, ``score_samples`` and ``score`` differ from
    scikit-learn's with ``whiten=True``, which scales the components there.

    References
    ----------
    J. P. Cunningham and Z. Ghahramani, "Linear dimensionality reduction: survey, insights,
    and generalizations", JMLR 16, 2015.

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
    _computes_in_namespace = True
    _defines_inverse = True

    def __init__(self, n_components=None, *, whiten=False, solver=None, start=None, tol=None,
                 max_iter=1000, solver_params=None, verbose=0, random_state=0, warm_start=False):
        self.n_components = n_components
        self.whiten = whiten
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start

    # --- the pipeline's hooks (ldr.estimators.base) -------------------------------------
    def _prepare(self, data: FitData) -> None:
        if not isinstance(self.whiten, (bool, np.bool_)):
            raise ParameterError("whiten", f"expected True or False, got {self.whiten!r}")
        if data.stats is None:
            data.stats = self._batch_moments(data)

    def _batch_moments(self, data: FitData):
        return moments(data.X, name="X", validated=True, weights=data.weights).on_host()

    @staticmethod
    def _spectrum(data: FitData) -> tuple[np.ndarray, np.ndarray]:
        """The covariance's eigenvalues (largest first, clipped at 0) and eigenvectors, once
        per fit."""
        if "spectrum" not in data.derived:
            w, V = scipy.linalg.eigh(data.stats.covariance(ddof=1))
            data.derived["spectrum"] = (np.maximum(w[::-1], 0.0), V[:, ::-1])
        return data.derived["spectrum"]

    def _n_components(self, data: FitData) -> int:
        """r from ``n_components`` (the spectrum is computed only for a float or "mle")."""
        n = int(round(data.stats.n))  # (a sum of weights with sample_weight)
        d = data.stats.d
        q = self.n_components
        upper = min(n, d)
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
            return minka_dimension(self._spectrum(data)[0], n)
        if isinstance(q, numbers.Real) and not isinstance(q, (numbers.Integral, bool)):
            if not 0.0 < q < 1.0:
                raise ParameterError("n_components", f"a float must lie in (0, 1) (the "
                                     f"fraction of variance to keep), got {q!r}; pass an int "
                                     "for a count")
            total = float(np.trace(data.stats.covariance(ddof=1)))
            if total <= 0:
                return 1
            ratio = np.cumsum(self._spectrum(data)[0][:upper] / total)
            return min(int(np.searchsorted(ratio, q, side="right")) + 1, upper)
        return check_int_components(q, upper, "min(n_samples, n_features)",
                                    " (or a float in (0, 1), or 'mle')")

    def _objective(self, data: FitData, r: int):
        return PCAObjective(data.stats, r) if r < data.stats.d else None

    def _closed_form(self, data: FitData, r: int):
        w, V = self._spectrum(data)
        return closed_form_result(V, -np.sum(w), "the principal axes are the eigenvectors of C")

    def _finish(self, data: FitData, obj, result):
        """Rotate to the principal axes within the span (largest variance first, sign rule)
        and set the variances, singular values and noise variance."""
        stats = data.stats
        C = stats.covariance(ddof=1)
        total = float(np.trace(C))
        n = stats.n  # (a sum of weights with sample_weight)
        d = stats.d
        M = np.asarray(arrays.to_host(result.M), dtype=float)
        if obj is not None:
            w, V = np.linalg.eigh(M.T @ C @ M)
            M = M @ V[:, ::-1]
            w = np.maximum(w[::-1], 0.0)
        else:
            w = self._spectrum(data)[0]
        M = sign_rule(M)
        r = M.shape[1]
        kept = min(int(round(n)), d)
        noise = 0.0
        if r < kept:
            spectrum = data.derived.get("spectrum")
            noise = (float(np.mean(spectrum[0][r:kept])) if spectrum is not None
                     else max(total - float(np.sum(w)), 0.0) / (kept - r))
            # by subtraction the noise carries an error of about eps·tr(C): never above the
            # smallest kept variance (the PPCA solution's order), 0 at rounding level
            noise = min(noise, float(w[-1]))
            if noise <= 16 * np.finfo(float).eps * max(total, 0.0):
                noise = 0.0
        self.mean_ = np.asarray(stats.mean)
        self.explained_variance_ = w
        self.explained_variance_ratio_ = w / total if total > 0 else np.zeros_like(w)
        self.singular_values_ = self._singular_values(data, M, w)
        self.noise_variance_ = float(noise)
        self.n_samples_ = int(n) if float(n).is_integer() else float(n)
        return M

    @staticmethod
    def _singular_values(data: FitData, M, w):
        """‖(X − mean) m_j‖ from the rows where they are in memory (in their namespace):
        √((n − 1)λ) would lose half the digits of a singular value near zero."""
        X = data.X
        if data.lazy:
            return np.sqrt(w * (data.stats.n - 1))
        xp = arrays.namespace(X)
        Z = (X - arrays.like(data.stats.mean, X)) @ arrays.like(M, X)
        if data.weights is not None:  # ‖diag(√w) Z‖: the norms of the repeated rows
            Z = Z * arrays.like(np.sqrt(data.weights), X)[:, None]
        return np.asarray(arrays.to_host(xp.linalg.vector_norm(Z, axis=0)), dtype=float)

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        """``(X − mean_) @ components_.T``, divided by √explained_variance_ with ``whiten``
        (a zero variance clipped to the dtype's eps, as scikit-learn); the map back
        multiplies."""
        A = M
        B = M.T
        if self.whiten:
            scale = np.sqrt(self.explained_variance_)
            eps = np.finfo(np.float32 if data.dtype == np.float32 else np.float64).eps
            A = M / np.maximum(scale, eps)
            B = scale[:, None] * M.T
        return AffineMap(np.asarray(data.stats.mean), A, B)

    # --- the Gaussian model ---------------------------------------------------------------
    def _host(self, name: str) -> np.ndarray:
        return np.asarray(arrays.to_host(getattr(self, name)), dtype=float)

    def _like_components(self, value):
        """A NumPy result in the namespace, device and dtype of ``components_``."""
        return arrays.like(np.asarray(value), self.components_) \
            if arrays.foreign(self.components_) is not None \
            else np.asarray(value).astype(self.components_.dtype, copy=False)

    def get_covariance(self):
        """The probabilistic-PCA covariance Vᵀ diag(max(λ − σ², 0)) V + σ² I of the data
        (V = ``components_``, λ = ``explained_variance_``, σ² = ``noise_variance_``)."""
        C = ppca_covariance(self._host("components_"), self._host("explained_variance_"),
                            self.noise_variance_)
        return self._like_components(C)

    def get_precision(self):
        """The inverse of :meth:`get_covariance`, by the matrix inversion lemma (σ² > 0)."""
        P = ppca_precision(self._host("components_"), self._host("explained_variance_"),
                           self.noise_variance_)
        return self._like_components(P)

    def score_samples(self, X):
        """Log-likelihood of each row of X under ``N(mean_, get_covariance())``."""
        X = self._check_rows(X, "score_samples")
        xp = arrays.namespace(X)
        Xr = np.asarray(arrays.to_host(X), dtype=float) - self._host("mean_")
        # a singular covariance (rank-deficient data, all its directions kept) has no
        # density: ppca_precision says so (scikit-learn raises a LinAlgError there)
        P = ppca_precision(self._host("components_"), self._host("explained_variance_"),
                           self.noise_variance_)
        _, logdet = np.linalg.slogdet(P)
        out = -0.5 * np.sum(Xr * (Xr @ P), axis=1) - 0.5 * (Xr.shape[1] * np.log(2 * np.pi)
                                                             - logdet)
        return out if xp is np else arrays.like(out, xp.astype(X, xp.float64))

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the rows of X (scikit-learn's ``PCA.score``)."""
        return float(np.mean(arrays.to_host(self.score_samples(X))))
