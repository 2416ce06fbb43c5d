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

Each view's scores, and the fitted arrays, are float32 for float32 data; the statistics and
the solve are float64.  Under ``sklearn.config_context(array_api_dispatch=True)`` views of
another namespace (a PyTorch tensor, on a GPU or not) are read there — the one pass over the
stacked rows [X | Y] gives the means and the covariance blocks Σ_x, Σ_y, Σ_xy, and only those
come to the host, where each view's span is found and the solver iterates — and the fitted
arrays and ``transform``'s scores are in that namespace, on that device.  Dask arrays are
read in one pass over their chunks.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_array, check_consistent_length

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import as_dask_array, moments
from ldr.data.validation import non_numeric_error, span_basis, validate_data
from ldr.estimators.base import AffineMap, FitData, LinearDR
from ldr.objectives.cca import OrthogonalCCA as OrthogonalCCAObjective
from ldr.objectives.cca import TraditionalCCA as TraditionalCCAObjective
from ldr.objectives.cca import paired_moments

__all__ = ["CCA", "OrthogonalCCA"]


class TwoView(LinearDR):
    """What both CCAs share: the second view's validation, the statistics of the stacked
    views, each view's span, the canonical rotation and the second view's map."""

    _computes_in_namespace = True
    _objective_class: type

    def __init__(self, n_components=None, *, shrinkage=0.0, solver=None, start=None,
                 tol=None, max_iter=1000, solver_params=None, random_state=0,
                 reg="deprecated"):
        self.n_components = n_components
        self.shrinkage = shrinkage
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.random_state = random_state
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
        if data.lazy:
            stats, dx = paired_moments(data.X, data.y)
        else:
            xp = arrays.namespace(data.X)
            Y = data.y if data.y.dtype == xp.float64 else xp.astype(data.y, xp.float64)
            stats = moments(xp.concat([data.X, Y], axis=1), name="X").on_host()
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
        if spans[0] is not None or spans[1] is not None:
            stats = stats.project(np.hstack(maps))  # block diagonal: each view in its span
        data.stats = stats
        data.X = stats
        data.derived["spans"] = spans
        data.derived["widths"] = (maps[0].shape[1], maps[1].shape[1])
        self.x_subspace_ = spans[0]
        self.y_subspace_ = spans[1]

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
        """The canonical rotation (module docstring), the scores, and each view's weights,
        rotations and mean in its original features."""
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
        rotations = self._rotations(obj, M)
        self.x_weights_, self.y_weights_ = (m if B is None else B @ m
                                            for m, B in zip(M, (Ux, Uy)))
        self.x_rotations_, self.y_rotations_ = (m if B is None else B @ m
                                                for m, B in zip(rotations, (Ux, Uy)))
        self.x_mean_, self.y_mean_ = data.derived["means"]
        self.y_map_ = AffineMap(self.y_mean_, self.y_rotations_)
        return M

    def _point(self, data: FitData, M):
        return (self.x_weights_, self.y_weights_)

    def _components(self, data: FitData, obj, M):
        return None

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        return AffineMap(self.x_mean_, self.x_rotations_)

    def _scores(self, obj, M):
        """Hook: scores beyond ``canonical_correlations_`` (none by default)."""

    def fit_transform(self, X, y=None):
        """``fit(X, y).transform(X, y)``: the pair ``(X_c, Y_c)``."""
        return self.fit(X, y).transform(X, y)


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
    solver, tol, max_iter, solver_params, random_state : see
        :class:`ldr.estimators.LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_ : (M_x, M_y), orthonormal (n_features × r, n_targets × r), canonical basis (module
        docstring)
    x_weights_, y_weights_ : M_x, M_y
    x_rotations_, y_rotations_ : the maps, ``transform(X) == (X − x_mean_) @ x_rotations_``
        (here the weights themselves)
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
    map_, y_map_ : the fitted maps of the two views (:class:`~ldr.estimators.base.AffineMap`)
    n_components_, cost_, n_iter_, result_ (the driver's Result, before the canonical
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

    Maximizes tr(M_xᵀ Σ_x^{-1/2} Σ_xy Σ_y^{-1/2} M_y) (survey Eq. 8–9); its optimum is the
    SVD of the whitened cross-covariance, the default start, so the default run certifies it.
    The scores have unit variance per component and per-pair correlations
    ``canonical_correlations_`` (without shrinkage).

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
    solver, start, tol, max_iter, solver_params, random_state : see
        :class:`ldr.estimators.LinearDR`
    reg : deprecated
        The former name of ``shrinkage``; warns, removed in the next release.

    Attributes
    ----------
    M_ : (M_x, M_y) orthonormal, in whitened coordinates, canonical basis
    x_weights_, y_weights_ : M_x, M_y
    x_rotations_, y_rotations_ : Σ_x^{-1/2} M_x, Σ_y^{-1/2} M_y:
        ``transform(X) == (X − x_mean_) @ x_rotations_``
    x_mean_, y_mean_ : per-feature means
    x_subspace_, y_subspace_ : as in :class:`OrthogonalCCA`
    canonical_correlations_ : (n_components,)
        The correlation of each pair of score columns, decreasing.
    map_, y_map_, n_components_, cost_, n_iter_, result_, objective_, n_features_in_,
    n_features_y_ : as in :class:`OrthogonalCCA`

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X, Y = ldr.datasets.make_cca(300, 6, seed=0)
    >>> est = CCA(n_components=2).fit(X, Y)
    >>> Xc, Yc = est.transform(X, Y)
    >>> r0 = np.corrcoef(Xc[:, 0], Yc[:, 0])[0, 1]
    >>> bool(abs(r0 - est.canonical_correlations_[0]) < 1e-10)
    True
    """

    _objective_class = TraditionalCCAObjective

    def _cross(self, obj):
        return obj.K

    @staticmethod
    def _pair_correlations(obj, Mx, My):
        return obj.canonical_correlations((Mx, My))

    def _rotations(self, obj, M):
        return obj.mappings(M)

