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
the solve are float64 (:mod:`ldr.estimators._output`).

Both follow scikit-learn's array API convention (:mod:`ldr.estimators._namespace`): under
``sklearn.config_context(array_api_dispatch=True)`` views X and y of another namespace (a
PyTorch tensor, on a GPU or not) are read there — the one pass over the stacked rows [X | Y]
gives the means and the covariance blocks Σ_x, Σ_y, Σ_xy, and only those come to the host,
where each view's span is found and the solver iterates — and the fitted arrays and
``transform``'s scores are in that namespace, on that device.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_array, check_consistent_length
from sklearn.utils.validation import check_is_fitted

from ldr.data.rows import as_dask_array, map_rows, moments
from ldr.data.validation import is_lazy, non_numeric_error, span_basis
from ldr.errors import ParameterError
from ldr.estimators._base import (
    FLOAT_DTYPES,
    OutputMixin,
    as_output,
    cast_fitted,
    output_dtype,
    solve_and_warn,
    start_point,
)
from ldr.estimators._namespace import fitted_numpy, namespace_of, to_namespace, to_numpy
from ldr.estimators._output import validate_data
from ldr.objectives.cca import OrthogonalCCA as OrthogonalCCAObjective
from ldr.objectives.cca import TraditionalCCA as TraditionalCCAObjective


class _TwoView(OutputMixin, TransformerMixin, BaseEstimator):
    """Validation, solve, canonical rotation and the two-view ``transform``."""

    _objective_class: type

    def __init__(self, n_components=None, *, reg=0.0, solver=None, start=None,
                 tol=1e-8, max_iter=1000, solver_params=None,
                 random_state=0):
        self.n_components, self.reg, self.solver, self.start = n_components, reg, solver, start
        self.tol, self.max_iter = tol, max_iter
        self.solver_params, self.random_state = solver_params, random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True  # (module docstring)
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        return tags

    def _check_Y(self, Y, n_samples: int, reset: bool) -> np.ndarray:
        if Y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             f"is None: CCA needs the second view, fit(X, Y)")
        try:
            Y = check_array(Y, input_name="Y", dtype=FLOAT_DTYPES, ensure_2d=False,
                            ensure_min_samples=2 if reset else 1)
        except ValueError:
            better = non_numeric_error(Y if np.ndim(Y) == 2 else np.reshape(Y, (-1, 1)), "y")
            if better is None:
                raise
            raise better from None
        if Y.ndim == 1:
            Y = Y.reshape(-1, 1)
        check_consistent_length(np.empty(n_samples), Y)
        self._check_n_features_y(Y, reset)
        return Y

    def fit(self, X, y) -> _TwoView:
        """Fit the paired views X (n × d_x) and y (n × d_y, or (n,)); returns self."""
        space = None if is_lazy(X) or is_lazy(y) else namespace_of(X)
        if space is not None:  # the views' statistics in their namespace (module docstring)
            (X, Y), (Ux, mx), (Uy, my), dtype, (dx, dy) = self._namespace_views(X, y, *space)
        else:
            if is_lazy(X) or is_lazy(y):  # Dask arrays: statistics in one pass, none in memory
                X, Y = self._lazy_views(X, y)
            else:
                X = validate_data(self, X, dtype=FLOAT_DTYPES, ensure_min_samples=2)
                Y = self._check_Y(y, X.shape[0], reset=True)
            dtype = output_dtype(X)
            (X, Ux, mx), (Y, Uy, my) = self._span(X, "X"), self._span(Y, "Y")
            dx, dy = X.shape[1], Y.shape[1]
        self.x_subspace_, self.y_subspace_ = Ux, Uy
        r = min(dx, dy) if self.n_components is None else self.n_components
        if isinstance(r, bool) or not isinstance(r, numbers.Integral) \
                or not 1 <= r <= min(dx, dy):
            rank = "" if Ux is None and Uy is None else (
                " — the ranks of the views: they span only these many dimensions, and the "
                "fit works in those spans (x_subspace_, y_subspace_)")
            raise ParameterError("n_components", f"must be an integer with 1 <= n_components <= "
                             f"min(n_features, n_targets) = {min(dx, dy)} (X has {dx} "
                             f"features, Y has {dy}{rank}), got {r!r}")
        obj = self._objective_class(X, Y, int(r), reg=self.reg)
        M0 = self._default_start(obj) if self.start is None else None
        res = solve_and_warn(self, obj, start_point(self.start, obj) if M0 is None else M0)
        Mx, My = (np.asarray(m, dtype=float) for m in res.M)
        U, _, Vt = np.linalg.svd(Mx.T @ self._cross(obj) @ My)
        Mx, My = Mx @ U, My @ Vt.T
        order = np.argsort(-self._pair_correlations(obj, Mx, My), kind="stable")
        M = (Mx[:, order], My[:, order])
        self.canonical_correlations_ = self._pair_correlations(obj, *M)
        self.objective_, self.result_ = obj, res
        self.n_components_, self.n_iter_ = int(r), res.n_iter
        self.cost_ = float(obj.cost(M))
        self._scores(obj, M)
        rotations = self._rotations(obj, M)
        self.M_ = tuple(m if B is None else B @ m for m, B in zip(M, (Ux, Uy)))
        self.x_weights_, self.y_weights_ = self.M_
        self.x_rotations_, self.y_rotations_ = (
            m if B is None else B @ m for m, B in zip(rotations, (Ux, Uy)))
        self.x_mean_ = obj.mean_a_ if mx is None else mx
        self.y_mean_ = obj.mean_b_ if my is None else my
        cast_fitted(self, dtype)  # float32 in, float32 out (ldr.estimators._output)
        if space is not None:
            to_namespace(self, *space)
        return self

    def _reduces(self) -> bool:
        """Whether a view with a singular covariance is fitted in its span (reg = 0)."""
        return (isinstance(self.reg, numbers.Real) and not isinstance(self.reg, bool)
                and self.reg == 0)

    def _namespace_views(self, X, y, xp, device):
        """The objective's data for views of another namespace: both validated there, the
        :class:`~ldr.data.statistics.Moments` of the stacked rows [X | Y] computed there in
        one pass (:func:`ldr.data.rows.moments`), on the host, and each view's span from its
        covariance block.  Returns ``((moments, d_x), (U_x, x̄), (U_y, ȳ), dtype, (d_x, d_y))``
        in the coordinates of the spans, as :meth:`_span` would give them."""
        X = validate_data(self, X, dtype=[xp.float64, xp.float32], ensure_min_samples=2)
        Y = self._check_Y_in(y, X.shape[0], True, xp, device)
        dtype = np.float32 if X.dtype == xp.float32 else np.float64
        stats = moments(xp.concat([xp.astype(X, xp.float64), xp.astype(Y, xp.float64)],
                                  axis=1), name="X").on_host()
        dx, dy = X.shape[1], Y.shape[1]
        maps, spans = [], []
        for rows, name in ((slice(0, dx), "X"), (slice(dx, dx + dy), "Y")):
            E = np.eye(dx + dy)[:, rows]  # the view's coordinates: an exact selection
            U = span_basis(stats.project(E).covariance(), name) if self._reduces() else None
            maps.append(E if U is None else E @ U)
            spans.append((U, None if U is None else np.asarray(stats.mean[rows])))
        if spans[0][0] is not None or spans[1][0] is not None:
            stats = stats.project(np.hstack(maps))  # block diagonal: each view in its span
        kx, ky = maps[0].shape[1], maps[1].shape[1]
        return (stats, kx), spans[0], spans[1], dtype, (kx, ky)

    def _check_n_features_y(self, Y, reset: bool) -> None:
        """Record Y's width at fit (``n_features_y_``); afterwards refuse another width."""
        if reset:
            self.n_features_y_ = Y.shape[1]
        elif Y.shape[1] != self.n_features_y_:
            raise ValueError(f"Y has {Y.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_y_} features as input")

    def _check_Y_in(self, y, n_samples: int, reset: bool, xp, device):
        """:meth:`_check_Y` for the view y of X's namespace ``xp`` (moved there, to X's
        device, when given in another one)."""
        if y is None:
            self._check_Y(None, n_samples, reset)
        if namespace_of(y) != (xp, device):
            y = xp.asarray(np.ascontiguousarray(to_numpy(y)), device=device)
        Y = check_array(y, input_name="Y", dtype=[xp.float64, xp.float32], ensure_2d=False,
                        ensure_min_samples=2 if reset else 1)
        if Y.ndim == 1:
            Y = xp.reshape(Y, (-1, 1))
        if Y.shape[0] != n_samples:
            check_consistent_length(np.empty(n_samples), np.empty(Y.shape[0]))
        self._check_n_features_y(Y, reset)
        return Y

    def _scores_in(self, V, view: str, xp, device):
        """``(V − mean) @ rotations`` of one view in its namespace, in float64, then V's
        dtype (as :meth:`_x_block`, :meth:`_y_block` and ``as_output``)."""
        def put(name):
            value = np.asarray(fitted_numpy(self, f"{view}_{name}_"), dtype=np.float64)
            return xp.asarray(np.ascontiguousarray(value), device=device)

        V64 = V if V.dtype == xp.float64 else xp.astype(V, xp.float64)
        return xp.astype((V64 - put("mean")) @ put("rotations"), V.dtype)

    def _default_start(self, obj):
        """Hook: the start for ``start=None`` (None: the solver's own default start)."""
        return None

    def _scores(self, obj, M):
        """Hook: scores beyond ``canonical_correlations_`` (none by default)."""

    def _span(self, V, name: str):
        """``(rows to fit, span, mean)``: with reg = 0 and a singular covariance of the view
        ``V`` (constant or collinear columns, fewer samples than columns), its rows in the
        coordinates of its span (``x_subspace_``/``y_subspace_``) and its mean; else
        ``(V, None, None)``, the view as it is."""
        if not self._reduces():
            return V, None, None
        stats = moments(V, name=name)
        U = span_basis(stats.covariance(), name)
        return (V, None, None) if U is None else (V @ U, U, np.asarray(stats.mean))

    def _lazy_views(self, X, y):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target "
                             f"y is None: CCA needs the second view, fit(X, Y)")
        X, Y = as_dask_array(X, "X"), as_dask_array(y, "Y")
        if Y.ndim == 1:
            Y = Y[:, None]
        if X.ndim != 2 or Y.ndim != 2:
            raise ValueError(f"X, Y: expected 2-D arrays, got shapes {X.shape} and {Y.shape}")
        self.n_features_in_, self.n_features_y_ = int(X.shape[1]), int(Y.shape[1])
        self.__dict__.pop("feature_names_in_", None)
        return X, Y

    def _transform_lazy(self, X, y):
        Xc = map_rows(X, self._x_block, self.n_features_in_, self.n_components_)
        if y is None:
            return Xc
        Y = as_dask_array(y, "Y")
        Y = Y[:, None] if Y.ndim == 1 else Y
        return Xc, map_rows(Y, self._y_block, self.n_features_y_, self.n_components_, "Y")

    def _x_block(self, X):
        return (X - self.x_mean_) @ self.x_rotations_

    def _y_block(self, Y):
        return (Y - self.y_mean_) @ self.y_rotations_

    def transform(self, X, y=None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """The X scores, or ``(X_c, Y_c)`` when the second view y is given (lazy Dask arrays
        for Dask input); each view's scores are float32 for float32 data."""
        check_is_fitted(self, "M_")
        if is_lazy(X) or is_lazy(y):
            return self._transform_lazy(X, y)
        space = namespace_of(X, fitted=self)
        if space is not None:  # in X's namespace, on its device (module docstring)
            xp = space[0]
            X = validate_data(self, X, reset=False, dtype=[xp.float64, xp.float32])
            Xc = self._scores_in(X, "x", *space)
            if y is None:
                return Xc
            return Xc, self._scores_in(self._check_Y_in(y, X.shape[0], False, *space), "y",
                                       *space)
        X = validate_data(self, X, reset=False, dtype=FLOAT_DTYPES)
        if y is None:
            return as_output(self._x_block(np.asarray(X, dtype=np.float64)), output_dtype(X))
        Y = self._check_Y(y, X.shape[0], reset=False)
        Xc = self._x_block(np.asarray(X, dtype=np.float64))
        Yc = self._y_block(np.asarray(Y, dtype=np.float64))
        return as_output(Xc, output_dtype(X)), as_output(Yc, output_dtype(Y))

    def fit_transform(self, X, y=None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """``fit(X, y).transform(X, y)``: the pair ``(X_c, Y_c)``."""
        return self.fit(X, y).transform(X, y)


class OrthogonalCCA(_TwoView):
    """Orthogonal CCA: the orthogonal projections of X and Y with the largest correlation.

    Maximizes ρ = tr(M_xᵀΣ_xyM_y)/√(tr(M_xᵀΣ_xM_x) tr(M_yᵀΣ_yM_y)) (survey Eq. 10) from
    the orthonormalized traditional CCA mappings, which it improves on for r > 1.

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components <= min(n_features, n_targets); None: min(n_features, n_targets),
        the natural maximum (every canonical pair).
    reg : float in [0, 1], default 0
        Shrinkage of Σ_x and Σ_y towards tr(Σ)/d · I.  With 0, a view whose covariance is
        singular (constant or collinear columns, fewer samples than columns) is fitted in
        the span of its rows (``x_subspace_``, ``y_subspace_``).
    start : None, "heuristic", "random" or a pair of arrays, default None
        None: with 1 < n_components = min(n_features, n_targets) (one view's factor square)
        the top singular pairs of Σ_xy (the optimum when both factors are square), else the
        orthonormalized traditional mappings ("heuristic"; optimal for n_components = 1).
    solver, tol, max_iter, solver_params, random_state : see
        :class:`ldr.estimators.LinearDR`

    Attributes
    ----------
    M_ : (M_x, M_y), orthonormal (n_features × r, n_targets × r), canonical basis (module
        docstring)
    x_weights_, y_weights_ : M_x, M_y
    x_rotations_, y_rotations_ : the maps, ``transform(X) == (X − x_mean_) @ x_rotations_``
        (here the weights themselves)
    x_mean_, y_mean_ : per-feature means
    x_subspace_, y_subspace_ : (n_features, k) or None
        The span of each view's centered rows when its covariance is singular and reg = 0
        (the objective was fitted on ``X @ x_subspace_``; ``M_`` and the rotations are mapped
        back by it); None for a view of full rank (or reg > 0).
    correlation_ : float
        ρ at ``M_`` on the training data.
    canonical_correlations_ : (n_components,)
        The correlation of each pair of score columns (with the ``reg``-shrunk covariances;
        with reg = 0, ``np.corrcoef`` of the columns of ``transform(X, Y)``), decreasing:
        the pairs are sorted by it (module docstring).
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
        Sa, Sb, Sab = obj._Sa, obj._Sb, obj._Sab
        sx, sy = np.sum(Mx * (Sa @ Mx), axis=0), np.sum(My * (Sb @ My), axis=0)
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


class CCA(_TwoView):
    """Traditional (Hotelling) CCA: maximally correlated pairs of whitened projections.

    Maximizes tr(M_xᵀ Σ_x^{-1/2} Σ_xy Σ_y^{-1/2} M_y) (survey Eq. 8–9); its optimum is the
    SVD of the whitened cross-covariance, the default start, so the default run certifies it.
    The scores have unit variance per component and per-pair correlations
    ``canonical_correlations_`` (with reg = 0).

    Parameters
    ----------
    n_components : int or None, default None
        1 <= n_components <= min(n_features, n_targets); None: min(n_features, n_targets),
        the natural maximum (every canonical pair).
    reg : float in [0, 1], default 0
        Shrinkage of Σ_x and Σ_y (canonical ridge).  With 0, a view with a singular
        covariance is fitted in the span of its rows (``x_subspace_``, ``y_subspace_``):
        CCA is invariant to an invertible change of coordinates of each view, so the
        answer is the one on the view without its constant or redundant columns (with
        fewer samples than columns, the canonical correlations approach 1: shrink then).
    solver, start, tol, max_iter, solver_params, random_state : see
        :class:`ldr.estimators.LinearDR`

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
    n_components_, cost_, n_iter_, result_, objective_, n_features_in_, n_features_y_

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

