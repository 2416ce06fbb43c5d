"""Two-view estimators: canonical correlations analysis, traditional and orthogonal.

``fit(X, y)`` and ``transform(X, y=None)`` follow :class:`sklearn.cross_decomposition.CCA`
(the second view is the argument ``y``, an (n, d_y) array or (n,)): ``transform`` returns the
X scores alone, or the pair ``(X_c, Y_c)`` when y is given, and ``fit_transform(X, y)``
returns the pair.  The objectives live on Stiefel(d_x, r) ×
Stiefel(d_y, r) (:mod:`ldr.objectives.cca`); ``M_ = (M_x, M_y)``.

After the solve, each estimator rotates the pair to its canonical basis: with
M_xᵀ Σ_xy M_y = U S Vᵀ (Σ_xy the cross-covariance, whitened for traditional CCA) it keeps
(M_x U, M_y V).  The spans are unchanged and tr(M_xᵀ Σ_xy M_y) becomes tr(S), which is never
smaller (von Neumann's trace inequality); both costs see M_x and M_y only through that trace
and rotation-invariant norms, so the cost is never worse.  The columns are then canonical
pairs, each positively correlated, and they are ordered by decreasing correlation of the pair
of score columns (``canonical_correlations_``), as in scikit-learn's CCA.  For traditional CCA
that is the order of S; for orthogonal CCA the columns are not whitened, so the correlation
of pair j, s_j / √(m_xjᵀΣ_x m_xj · m_yjᵀΣ_y m_yj), need not follow s_j and the pairs are
sorted by it.

Both estimators also speak scikit-learn's cross-decomposition API (Wegelin 2000, §4.1: weights
u, v; scores Ξ, Ω; loadings Γ, Δ), with A = ``x_rotations_`` (d_x × r), B = ``y_rotations_``
(d_y × r), the X scores T = (X − x̄)A and Σ_x, Σ_y, Σ_xy the sample covariances of the
training views:

* ``x_loadings_`` P = Σ_x A (AᵀΣ_xA)⁻¹, the least-squares regression of the centred X on its
  scores (X − x̄ ≈ T Pᵀ, Wegelin's X = ΞΓᵀ + X_{R+1}); ``y_loadings_`` Q = Σ_y B (BᵀΣ_yB)⁻¹;
* ``x_weights_`` W, the columns of A made orthonormal in order (Gram–Schmidt: A = W R, R upper
  triangular with a positive diagonal); then A = W (PᵀW)⁻¹, scikit-learn's definition of the
  rotations from the weights and loadings;
* ``coef_`` (n_targets × n_features) = (A (AᵀΣ_xA)⁻¹ AᵀΣ_xy)ᵀ and ``intercept_`` = ȳ:
  ``predict(X) = (X − x̄) coef_ᵀ + ȳ`` is the least-squares regression of Y on the r X scores,
  Ŷ = ȳ + T (TᵀT)⁻¹ Tᵀ(Y − ȳ);
* ``inverse_transform(T[, U]) = T Pᵀ + x̄ [, U Qᵀ + ȳ]``, the least-squares reconstruction.

Each view's scores, and the fitted arrays, are float32 for float32 data; the statistics and
the solve are float64.  Under ``sklearn.config_context(array_api_dispatch=True)`` views of
another namespace (a PyTorch tensor, on a GPU or not) are read there — the one pass over the
stacked rows [X | Y] gives the means and the covariance blocks Σ_x, Σ_y, Σ_xy, and only those
come to the host, where each view's span is found and the solver iterates — and the fitted
arrays and ``transform``'s scores are in that namespace, on that device.  Dask arrays are
read in one pass over their chunks.

References
----------
H. Hotelling (1936), "Relations between two sets of variates", Biometrika 28(3/4), 321–377.
J. A. Wegelin (2000), "A survey of Partial Least Squares (PLS) methods, with emphasis on the
two-block case", Technical Report 371, Department of Statistics, University of Washington.
J. P. Cunningham, Z. Ghahramani (2015), "Linear dimensionality reduction: survey, insights,
and generalizations", JMLR 16, 2859–2900 (the survey; Eq. 8–10).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.metrics import r2_score
from sklearn.utils import check_array, check_consistent_length
from sklearn.utils.validation import check_is_fitted

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import as_dask_array, map_rows, moments
from ldr.data.validation import is_lazy, non_numeric_error, span_basis, validate_data
from ldr.estimators.base import AffineMap, FitData, LinearDR, WeightedFit, same_space
from ldr.objectives.cca import OrthogonalCCA as OrthogonalCCAObjective
from ldr.objectives.cca import TraditionalCCA as TraditionalCCAObjective
from ldr.objectives.cca import paired_moments

__all__ = ["CCA", "OrthogonalCCA"]


class TwoView(WeightedFit, LinearDR):
    """What both CCAs share: the second view's validation, the statistics of the stacked
    views, each view's span, the canonical rotation and the second view's map."""

    _computes_in_namespace = True
    _objective_class: type

    def __init__(self, n_components=None, *, shrinkage=0.0, solver=None, start=None,
                 tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, warm_start=False,
                 reg="deprecated"):
        self.n_components = n_components
        self.shrinkage = shrinkage
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.reg = reg

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _requires_y(self) -> bool:
        return True

    def _reads_chunks(self) -> bool:
        return True

    # --- the second view ------------------------------------------------------------------
    _missing_y = "CCA needs the second view, fit(X, Y)"

    def _validate_with_y(self, X, y, dtypes) -> tuple:
        X = validate_data(self, X, dtype=dtypes, ensure_min_samples=2)
        xp = arrays.namespace(X) if arrays.input_space(X) is not None else np
        return X, self._check_view(y, X.shape[0], True, xp)

    def _validate_lazy(self, X, y) -> FitData:
        data = super()._validate_lazy(X, y)
        Y = as_dask_array(y, "Y")
        self._predict_1d = Y.ndim == 1
        if Y.ndim == 1:
            Y = Y[:, None]
        if Y.ndim != 2:
            raise ParameterError("Y", f"expected a 2-D array, got shape {Y.shape}")
        self.n_features_y_ = int(Y.shape[1])
        data.y = Y
        return data

    def _check_view(self, y, n_samples: int, reset: bool, xp):
        """The second view as a 2-D float array of X's namespace ``xp`` (moved there when
        given in another one), with as many rows as X; its width recorded at fit
        (``n_features_y_``) and checked afterwards."""
        if xp is not np and (arrays.input_space(y) is None or arrays.input_space(y)[0] is not xp):
            y = xp.asarray(np.ascontiguousarray(np.asarray(arrays.to_host(y), dtype=float)))
        try:
            Y = check_array(y, input_name="Y", dtype=[xp.float64, xp.float32], ensure_2d=False,
                            ensure_min_samples=2 if reset else 1)
        except ValueError:
            Yh = np.asarray(arrays.to_host(y), dtype=object)
            better = non_numeric_error(Yh if Yh.ndim == 2 else Yh.reshape(-1, 1), "y")
            if better is None:
                raise
            raise better from None
        if reset:  # predict answers a 1-D y with 1-D predictions, as scikit-learn's CCA
            self._predict_1d = Y.ndim == 1
        if Y.ndim == 1:
            Y = xp.reshape(Y, (-1, 1))
        if Y.shape[0] != n_samples:
            check_consistent_length(np.empty(n_samples), np.empty(Y.shape[0]))
        if reset:
            self.n_features_y_ = Y.shape[1]
        elif Y.shape[1] != self.n_features_y_:
            raise ValueError(f"Y has {Y.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_y_} features as input")
        return Y

    def _check_second_view(self, Y, X):
        xp = arrays.namespace(X) if arrays.input_space(X) is not None else np
        return self._check_view(Y, X.shape[0], False, xp)

    # --- the pipeline's hooks ---------------------------------------------------------------
    def _prepare(self, data: FitData) -> None:
        """The statistics of the stacked rows [X | Y] (one pass, in their namespace or over
        Dask chunks) and, with no shrinkage, each view's span where its covariance is
        singular (``x_subspace_``, ``y_subspace_``)."""
        level = self._shrinkage()
        data.params["shrinkage"] = level
        if data.stats is None:
            data.stats = self._batch_moments(data)
        stats = data.stats
        dx = data.X.shape[1]
        dy = stats.d - dx
        maps = []
        spans = []
        for rows, name in ((slice(0, dx), "X"), (slice(dx, dx + dy), "Y")):
            E = np.eye(dx + dy)[:, rows]  # the view's coordinates: an exact selection
            U = span_basis(stats.project(E).covariance(), name) if level == 0 else None
            maps.append(E if U is None else E @ U)
            spans.append(U)
        data.derived["means"] = (np.asarray(stats.mean[:dx]), np.asarray(stats.mean[dx:]))
        # Σ of the stacked views in their own coordinates: the loadings and coef_ read it
        data.derived["covariance"] = np.asarray(arrays.to_host(stats.covariance(ddof=1)),
                                                dtype=float)
        if spans[0] is not None or spans[1] is not None:
            stats = stats.project(np.hstack(maps))  # block diagonal: each view in its span
        data.stats = stats
        data.X = stats
        data.derived["spans"] = spans
        data.derived["widths"] = (maps[0].shape[1], maps[1].shape[1])
        self.x_subspace_ = spans[0]
        self.y_subspace_ = spans[1]

    def _batch_moments(self, data: FitData):
        """The moments of the stacked rows [X | Y] (weighted by ``sample_weight``)."""
        if data.lazy:
            return paired_moments(data.X, data.y)[0]
        xp = arrays.namespace(data.X)
        Y = data.y if data.y.dtype == xp.float64 else xp.astype(data.y, xp.float64)
        return moments(xp.concat([data.X, Y], axis=1), name="X",
                       weights=data.weights).on_host()

    def _n_components(self, data: FitData) -> int:
        dx, dy = data.derived["widths"]
        r = min(dx, dy) if self.n_components is None else self.n_components
        if isinstance(r, bool) or not isinstance(r, numbers.Integral) \
                or not 1 <= r <= min(dx, dy):
            rank = "" if self.x_subspace_ is None and self.y_subspace_ is None else (
                " — the ranks of the views: they span only these many dimensions, and the "
                "fit works in those spans (x_subspace_, y_subspace_)")
            raise ParameterError("n_components", f"must be an integer with 1 <= n_components "
                                 f"<= min(n_features, n_targets) = {min(dx, dy)} (X has {dx} "
                                 f"features, Y has {dy}{rank}), got {r!r}")
        return int(r)

    def _objective(self, data: FitData, r: int):
        return self._objective_class(data.X, data.derived["widths"][0], r,
                                     shrinkage=data.params["shrinkage"])

    def _start(self, obj, data: FitData):
        own = self._default_start(obj) if self.start is None else None
        return super()._start(obj, data) if own is None else own

    def _default_start(self, obj):
        """Hook: the start for ``start=None`` (None: the solver's own default start)."""
        return None

    def _finish(self, data: FitData, obj, result):
        """The canonical rotation (module docstring), the scores, and each view's rotations,
        weights, loadings and mean in its original features, and the regression of Y on the
        X scores (``coef_``, ``intercept_``)."""
        Mx, My = (np.asarray(arrays.to_host(m), dtype=float) for m in result.M)
        U, _, Vt = np.linalg.svd(Mx.T @ self._cross(obj) @ My)
        Mx = Mx @ U
        My = My @ Vt.T
        order = np.argsort(-self._pair_correlations(obj, Mx, My), kind="stable")
        M = (Mx[:, order], My[:, order])
        self.canonical_correlations_ = self._pair_correlations(obj, *M)
        self.cost_ = float(obj.cost(M))
        self._scores(obj, M)
        Ux, Uy = data.derived["spans"]
        Rx, Ry = self._rotations(obj, M)
        self.x_rotations_ = Rx if Ux is None else Ux @ Rx
        self.y_rotations_ = Ry if Uy is None else Uy @ Ry
        self.x_weights_ = self._weights(self.x_rotations_)
        self.y_weights_ = self._weights(self.y_rotations_)
        self.x_mean_ = data.derived["means"][0]
        self.y_mean_ = data.derived["means"][1]
        C = data.derived["covariance"]
        dx = self.x_rotations_.shape[0]
        self.x_loadings_ = loadings(C[:dx, :dx], self.x_rotations_)
        self.y_loadings_ = loadings(C[dx:, dx:], self.y_rotations_)
        self.coef_ = regression_coef(C[:dx, :dx], C[:dx, dx:], self.x_rotations_)
        self.intercept_ = np.array(self.y_mean_, dtype=float)
        self.y_map_ = AffineMap(self.y_mean_, self.y_rotations_, self.y_loadings_.T)
        return M

    def _weights(self, A):
        """Hook: ``x_weights_`` from the rotations A: A's columns made orthonormal in order."""
        return orthonormal_columns(A)

    def _point(self, data: FitData, M):
        return tuple(m if B is None else B @ m for m, B in zip(M, data.derived["spans"]))

    def _components(self, data: FitData, obj, M):
        return None

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        return AffineMap(self.x_mean_, self.x_rotations_, self.x_loadings_.T)

    def _scores(self, obj, M):
        """Hook: scores beyond ``canonical_correlations_`` (none by default)."""

    def fit_transform(self, X, y=None):
        """``fit(X, y).transform(X, y)``: the pair of score arrays ``(T, U)``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        y : array of shape (n_samples, n_targets) or (n_samples,)
            The second view; required.

        Returns
        -------
        x_scores, y_scores : arrays of shape (n_samples, n_components)
            T = (X − x̄) ``x_rotations_`` and U = (Y − ȳ) ``y_rotations_``.
        """
        return self.fit(X, y).transform(X, y)

    # --- scikit-learn's regression and reconstruction ---------------------------------------
    _defines_inverse = True

    def predict(self, X):
        """Y predicted from X through the r canonical variates of X.

        ``predict(X) = (X − x_mean_) @ coef_.T + intercept_``: the least-squares regression of
        the centred Y on the X scores T = (X − x̄)A, Ŷ = ȳ + T (TᵀT)⁻¹ Tᵀ(Y − ȳ) on the
        training rows (module docstring; Wegelin 2000, §4.1, for scikit-learn's form of the
        prediction).  Computed in float64 in X's namespace (a Dask array block by block),
        returned in X's float dtype.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        y_pred : array of shape (n_samples, n_targets), or (n_samples,) when the estimator
            was fitted on a 1-D y
        """
        check_is_fitted(self, "coef_")
        fitted = AffineMap(self.x_mean_, self.coef_.T)
        width = self.coef_.shape[0]
        if is_lazy(X):
            intercept = np.asarray(arrays.to_host(self.intercept_), dtype=float)
            Z = map_rows(X, lambda rows: fitted.apply(rows) + intercept,
                         self.n_features_in_, width)
        else:
            Z = fitted.apply(self._check_rows(X, "predict"))
            Z = Z + same_space(self.intercept_, Z)
        return Z[:, 0] if getattr(self, "_predict_1d", False) else Z

    def score(self, X, y, sample_weight=None):
        """The coefficient of determination R² of :meth:`predict` (scikit-learn's
        ``RegressorMixin.score``): 1 − Σ(y − ŷ)² / Σ(y − ȳ)², averaged over the targets.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        y : array of shape (n_samples, n_targets) or (n_samples,)
        sample_weight : array of shape (n_samples,) or None

        Returns
        -------
        score : float
        """
        return r2_score(y, self.predict(X), sample_weight=sample_weight)

    def inverse_transform(self, X, y=None):
        """Back to the features: the least-squares reconstruction from the scores.

        ``X̂ = X @ x_loadings_.T + x_mean_`` and, with y, ``Ŷ = y @ y_loadings_.T + y_mean_``
        (Wegelin 2000, §4.1: X = ΞΓᵀ + X_{R+1}); exact for a view whose covariance has rank
        n_components.

        Parameters
        ----------
        X : array of shape (n_samples, n_components)
            X scores.
        y : array of shape (n_samples, n_components), optional
            Y scores.

        Returns
        -------
        X_original : array of shape (n_samples, n_features)
        y_original : array of shape (n_samples, n_targets)
            Only when y is given.
        """
        X_back = super().inverse_transform(X)
        if y is None:
            return X_back
        xp = arrays.namespace(X_back)
        V = check_array(y, dtype=[xp.float64, xp.float32], input_name="y")
        if V.shape != (X_back.shape[0], self.n_components_):
            raise ParameterError("y", f"expected Y scores of shape ({X_back.shape[0]}, "
                                      f"{self.n_components_}) (X's rows, n_components_), got "
                                      f"{tuple(V.shape)}")
        return X_back, self.y_map_.back(V)


def orthonormal_columns(A: np.ndarray) -> np.ndarray:
    """W of A = W R (R upper triangular with a positive diagonal): Gram–Schmidt on A's
    columns in order, so that span(w_1, …, w_k) = span(a_1, …, a_k) and w_kᵀa_k > 0."""
    W, R = np.linalg.qr(A)
    signs = np.sign(np.diag(R))
    return W * np.where(signs == 0, 1.0, signs)


def loadings(S: np.ndarray, A: np.ndarray) -> np.ndarray:
    """S A (AᵀSA)⁻¹: the least-squares coefficients of the centred rows on their scores
    (X − x̄)A, from the rows' covariance S (Wegelin 2000, §4.1: the loadings Γ)."""
    SA = S @ A
    return np.linalg.solve(A.T @ SA, SA.T).T


def regression_coef(Sx: np.ndarray, Sxy: np.ndarray, A: np.ndarray) -> np.ndarray:
    """(A (AᵀΣ_xA)⁻¹ AᵀΣ_xy)ᵀ, n_targets × n_features: the least-squares regression of the
    centred Y on the X scores (X − x̄)A, written on the centred X."""
    return (A @ np.linalg.solve(A.T @ Sx @ A, A.T @ Sxy)).T


class OrthogonalCCA(TwoView):
    """Orthogonal CCA: the orthogonal projections of X and Y with the largest correlation.

    Maximizes ρ = tr(M_xᵀΣ_xyM_y)/√(tr(M_xᵀΣ_xM_x) tr(M_yᵀΣ_yM_y)) (survey Eq. 10) from
    the orthonormalized traditional CCA mappings, which it improves on for r > 1.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components <= min(n_features, n_targets); None: min(n_features, n_targets),
        the natural maximum (every canonical pair).
    shrinkage : float in [0, 1], default 0
        Shrinkage of Σ_x and Σ_y towards tr(Σ)/d · I.  With 0, a view whose covariance is
        singular (constant or collinear columns, fewer samples than columns) is fitted in
        the span of its rows (``x_subspace_``, ``y_subspace_``).
    start : None, "heuristic", "random" or a pair of arrays, default None
        None: with 1 < n_components = min(n_features, n_targets) (one view's factor square)
        the top singular pairs of Σ_xy (the optimum when both factors are square), else the
        orthonormalized traditional mappings ("heuristic"; optimal for n_components = 1).
    solver, tol, max_iter, solver_params, verbose, random_state, warm_start : see
        :class:`ldr.estimators.LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Not invariant to a rescaling of the features (the projections are orthogonal in the
    given coordinates): for scikit-learn's ``scale=True``, standardize each view first
    (:class:`sklearn.preprocessing.StandardScaler`).

    Attributes
    ----------
    M_ : (M_x, M_y), orthonormal (n_features × r, n_targets × r), canonical basis (module
        docstring)
    x_rotations_, y_rotations_ : (n_features, r), (n_targets, r)
        M_x, M_y, the maps: ``transform(X) == (X − x_mean_) @ x_rotations_`` (the scores
        are neither uncorrelated nor of unit variance).
    x_weights_, y_weights_ : M_x, M_y
        scikit-learn's orthonormal weights; M_x is orthonormal already, so the Gram–Schmidt
        of the module docstring leaves it as it is.
    x_loadings_ : (n_features, n_components)
        Σ_x M_x (M_xᵀΣ_xM_x)⁻¹, the least-squares regression of the centred X on its scores
        (module docstring; ``x_rotations_ == x_weights_ @ inv(x_loadings_.T @ x_weights_)``).
    y_loadings_ : (n_targets, n_components)
        Σ_y M_y (M_yᵀΣ_yM_y)⁻¹.
    coef_ : (n_targets, n_features)
        (M_x (M_xᵀΣ_xM_x)⁻¹ M_xᵀΣ_xy)ᵀ: ``predict(X) == (X − x_mean_) @ coef_.T +
        intercept_``, the least-squares regression of Y on the r X scores.
    intercept_ : (n_targets,)
        ``y_mean_``.
    x_mean_, y_mean_ : per-feature means
    x_subspace_, y_subspace_ : (n_features, k) or None
        The span of each view's centered rows when its covariance is singular and shrinkage = 0
        (the objective was fitted on ``X @ x_subspace_``; ``M_`` and the rotations are mapped
        back by it); None for a view of full rank (or shrinkage > 0).
    correlation_ : float
        ρ at ``M_`` on the training data.
    canonical_correlations_ : (n_components,)
        The correlation of each pair of score columns (with the shrunk covariances;
        with shrinkage = 0, ``np.corrcoef`` of the columns of ``transform(X, Y)``), decreasing:
        the pairs are sorted by it (module docstring).
    map_, y_map_ : the fitted maps of the two views (:class:`~ldr.estimators.base.AffineMap`;
        their ``inverse`` are the loadings, transposed)
    n_iter_ : int
        The iterations of the one solve that found the r pairs together (ldr's vocabulary;
        scikit-learn has no orthogonal CCA, so no per-component list).
    n_components_, cost_, result_ (the driver's Result, before the canonical
    rotation), objective_, n_features_in_, n_features_y_

    Examples
    --------
    >>> import ldr
    >>> X, Y = ldr.datasets.make_cca(300, 8, seed=1)
    >>> est = OrthogonalCCA(n_components=3).fit(X, Y)
    >>> Xc, Yc = est.transform(X, Y)
    >>> Xc.shape, Yc.shape
    ((300, 3), (300, 3))
    >>> bool(est.correlation_ > est.objective_.correlation(est.objective_.heuristic()))
    True
    """

    _objective_class = OrthogonalCCAObjective

    def _cross(self, obj):
        return obj.Sab

    @staticmethod
    def _pair_correlations(obj, Mx, My):
        """The correlation of each pair of score columns (X − x̄)m_xj, (Y − ȳ)m_yj."""
        # the covariances scaled to about 1 (the objective's own copies): sx·sy would
        # underflow for data at 1e-90
        Sa = obj._Sa
        Sb = obj._Sb
        Sab = obj._Sab
        sx = np.sum(Mx * (Sa @ Mx), axis=0)
        sy = np.sum(My * (Sb @ My), axis=0)
        return np.sum(Mx * (Sab @ My), axis=0) / (np.sqrt(sx) * np.sqrt(sy))

    def _rotations(self, obj, M):
        return M

    def _weights(self, A):
        return A

    def _default_start(self, obj):
        # one square factor (r = min(d_x, d_y), the default n_components): the top-r singular
        # pairs of Σ_xy, the optimum when both are square (objective's cross_start); r = 1
        # keeps the heuristic, the first canonical pair, which is then optimal
        (dx, r), (dy, _) = obj.shape
        return obj.cross_start() if 1 < r == min(dx, dy) else None

    def _scores(self, obj, M):
        self.correlation_ = obj.correlation(M)


class CCA(TwoView):
    """Traditional (Hotelling) CCA: maximally correlated pairs of whitened projections.

    Maximizes tr(M_xᵀ K M_y), K = Σ_x^{-1/2} Σ_xy Σ_y^{-1/2} (survey Eq. 8–9); its optimum is
    the top-r SVD of K, the default start, so the default run certifies it.  The canonical
    correlations ρ_1 ≥ … ≥ ρ_r are the singular values of K: ρ² are the roots of
    det(Σ_xy Σ_y⁻¹ Σ_yx − ρ² Σ_x) = 0 (Hotelling 1936).  The scores T = (X − x̄)A and
    U = (Y − ȳ)B (A = Σ_x^{-1/2} M_x, B = Σ_y^{-1/2} M_y) have cov(T) = cov(U) = I and
    cov(T, U) = diag(ρ) (without shrinkage).

    Compared with :class:`sklearn.cross_decomposition.CCA` (the same canonical correlations;
    attribute definitions in the module docstring, after Wegelin 2000):

    * no ``scale`` parameter, and none needed: CCA is invariant to an invertible linear
      change of coordinates of each view, so the canonical correlations, the scores (up to
      the sign of a pair), ``predict`` and ``score`` are those of the standardized views
      (scikit-learn's default ``scale=True``); ``coef_``, the rotations and the loadings are
      in the data's units (X D, D diagonal, gives D⁻¹A, D P and ``coef_`` D⁻¹); the weights,
      orthonormal in the given coordinates, are not invariant (nor are scikit-learn's);
    * unit-variance scores: scikit-learn's (NIPALS with unit-norm weights on the deflated
      views) are the same columns, each times a factor of its own;
    * ``coef_`` is the least-squares regression of Y on the X scores, which for exact
      canonical pairs is Ŷ − ȳ = T diag(ρ) Qᵀ (Q = ``y_loadings_`` = Σ_yB); scikit-learn's
      is ``x_rotations_ @ y_loadings_.T`` of its own scalings, Ŷ − ȳ = T Qᵀ up to a
      per-pair factor set by the weights' normalization, without ρ;
    * one solve finds the r pairs together (no deflation): ``n_iter_`` lists that solve's
      iterations once per component;
    * ``n_components=None`` keeps min(n_features, n_targets) pairs (scikit-learn: 2), bounded
      by the ranks of the views; ``fit`` needs y; the inputs are never modified (no ``copy``);
    * a transformer with ``predict`` and ``score`` (R²), not tagged a regressor
      (``sklearn.base.is_regressor`` is False).

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components <= min(n_features, n_targets); None: min(n_features, n_targets),
        the natural maximum (every canonical pair).
    shrinkage : float in [0, 1], default 0
        Shrinkage of Σ_x and Σ_y (canonical ridge).  With 0, a view with a singular
        covariance is fitted in the span of its rows (``x_subspace_``, ``y_subspace_``):
        CCA is invariant to an invertible change of coordinates of each view, so the
        answer is the one on the view without its constant or redundant columns (with
        fewer samples than columns, the canonical correlations approach 1: shrink then).
    solver, start, tol, max_iter, solver_params, verbose, random_state, warm_start : see
        :class:`ldr.estimators.LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_ : (M_x, M_y) orthonormal, in whitened coordinates, canonical basis
    x_rotations_ : (n_features, n_components)
        A = Σ_x^{-1/2} M_x: ``transform(X) == (X − x_mean_) @ x_rotations_``.
    y_rotations_ : (n_targets, n_components)
        B = Σ_y^{-1/2} M_y.
    x_weights_, y_weights_ : (n_features, n_components), (n_targets, n_components)
        The columns of A (of B) made orthonormal in order, A = W R (module docstring): the
        weights of Wegelin's deflation, w_k ∝ a_k minus its part in span(a_1, …, a_{k−1}).
    x_loadings_ : (n_features, n_components)
        P = Σ_x A (AᵀΣ_xA)⁻¹ = Σ_x A without shrinkage, the covariance of each feature with
        each score: X − x̄ ≈ T Pᵀ (``inverse_transform``), and
        ``x_rotations_ == x_weights_ @ inv(x_loadings_.T @ x_weights_)``.
    y_loadings_ : (n_targets, n_components)
        Q = Σ_y B (BᵀΣ_yB)⁻¹.
    coef_ : (n_targets, n_features)
        (A (AᵀΣ_xA)⁻¹ AᵀΣ_xy)ᵀ: ``predict(X) == (X − x_mean_) @ coef_.T + intercept_``;
        with every pair (n_components the smaller rank of the two views) ``predict`` is the
        ordinary least-squares regression of Y on X.
    intercept_ : (n_targets,)
        ``y_mean_`` (a 1-D y gives shape (1,), as scikit-learn's).
    n_iter_ : list of int, one per component
        Every entry is the iterations of the one solve that found the r pairs together
        (scikit-learn's list counts each component's own power iterations); 0 when the
        closed-form start already met the gradient tolerance.
    x_mean_, y_mean_ : per-feature means
    x_subspace_, y_subspace_ : as in :class:`OrthogonalCCA`
    canonical_correlations_ : (n_components,)
        The correlation of each pair of score columns, decreasing.
    map_, y_map_, n_components_, cost_, result_, objective_, n_features_in_,
    n_features_y_ : as in :class:`OrthogonalCCA`

    References
    ----------
    H. Hotelling (1936), "Relations between two sets of variates", Biometrika 28(3/4),
    321–377; J. A. Wegelin (2000), "A survey of Partial Least Squares (PLS) methods, with
    emphasis on the two-block case", Technical Report 371, Department of Statistics,
    University of Washington, §4.1.

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X, Y = ldr.datasets.make_cca(300, 6, seed=0)
    >>> est = CCA(n_components=2).fit(X, Y)
    >>> Xc, Yc = est.transform(X, Y)
    >>> r0 = np.corrcoef(Xc[:, 0], Yc[:, 0])[0, 1]
    >>> bool(abs(r0 - est.canonical_correlations_[0]) < 1e-10)
    True
    >>> est.predict(X).shape, est.coef_.shape
    ((300, 6), (6, 6))
    """

    _objective_class = TraditionalCCAObjective

    def _cross(self, obj):
        return obj.K

    @staticmethod
    def _pair_correlations(obj, Mx, My):
        return obj.canonical_correlations((Mx, My))

    def _rotations(self, obj, M):
        return obj.mappings(M)

    def _finish(self, data: FitData, obj, result):
        M = super()._finish(data, obj, result)
        self.n_iter_ = [int(result.n_iter)] * self.n_components_
        return M

