"""What every estimator shares: the generic :class:`~ldr.estimators.LinearDR`, its fit
template, the solver settings and the projection API.

Every estimator speaks one vocabulary (``tests/test_vocabulary.py`` walks them all):

==================  ==================================================================
``n_components``    the first argument: r, the subspace dimension (None: the method's
                    natural maximum)
``solver``          any solver or chain :func:`ldr.solve` accepts
``start``           the start point ("heuristic", "random", an array, or the method's
                    own names)
``tol``             the gradient tolerance, ``gtol`` of :func:`ldr.solve` (relative)
``max_iter``        a value other than the default bounds the whole fit (every stage, tCG's
                    Hessian-vector products counted); the default caps each stage
``solver_params``   every other option of :func:`ldr.solve` (``xtol``, ``ftol``,
                    ``fwindow``, ``max_time``, ``gtol_scale``, ``certify``, ``callback``),
                    as a dict
``random_state``    the seed of every random choice of ``fit`` (random starts, k-means,
                    random features); default 0, so two fits give the same answer; None
                    draws fresh entropy
``M_``              the fitted point in ldr's layout (d×r, a tuple on a product)
``components_``     scikit-learn's layout: one component per row
==================  ==================================================================

:class:`~ldr.estimators.LinearDR` wraps **any** method: a registered one by name
(``LinearDR("lda")``, :mod:`ldr.registry`), an :class:`~ldr.Objective` subclass built as
``cls(X, [y,] r, **objective_params)``, or a factory ``f(X, y, r) -> Objective`` — so a user's
own objective can be cross-validated like any scikit-learn transformer. ``fit`` follows one
template, which the concrete estimators specialize through hooks instead of rewriting it:

1. ``_prepare(X, y)`` — validate the data (:class:`FitData`: X, y, output dtype, statistics),
   then ``_reduce(data)`` — for estimators whose objective would refuse singular statistics,
   the span of the data to fit in (``subspace_``; ``ldr.estimators.span``; ``M_`` and
   ``components_`` are mapped back to the original features);
2. ``_n_components(data)`` — resolve r;
3. ``_make_objective(data, r)`` — the objective, or None when there is nothing to optimize
   (r = n_features: the whole space), then ``_closed_form(data, r)`` gives the point;
4. ``_solve(obj, M0, warm)`` — by default :func:`solve_and_warn`: :func:`ldr.solve` with the
   estimator's settings, a ConvergenceWarning quoting the driver's reason if unconverged;
5. ``_finalize(obj, M, data)`` — the point to keep (a rotation within the span) and the
   method's scores; ``_components(obj, M)`` — ``components_``.

Layout of the answer: ``M_`` is ldr's d×r point and the projection is ``X @ M``; ``components_``
keeps scikit-learn's meaning — one component per **row** — so ``components_ == M_.T`` for
orthogonal projections, the whole linear map for methods that whiten first (SFA; LPP/NPE with
``form="whitened"``), the loadings Wᵀ for latent-variable models. float32 X gives float32 fitted
arrays and outputs; the solve runs in float64 (:mod:`ldr.estimators._output`).
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ldr import registry
from ldr.data.rows import as_dask_array, map_rows, moments
from ldr.data.validation import is_lazy, refuse_lazy
from ldr.errors import ParameterError
from ldr.estimators._fitdata import FitData
from ldr.estimators._namespace import namespace_of, project_in, to_namespace, to_numpy, transform_in
from ldr.estimators._output import (
    FLOAT_DTYPES,
    OutputMixin,
    as_output,
    cast_fitted,
    output_dtype,
    preserve_float32,
    project_centered,
    validate_data,
)
from ldr.estimators._solving import (
    SOLVER_PARAMS,
    closed_form_result,
    converged_alternation,
    reraise_interrupt,
    seed_of,
    solve_and_warn,
    solver_options,
    start_point,
    warm_result,
    warn_if_unconverged,
)
from ldr.estimators.span import check_span_components
from ldr.objective import Objective

__all__ = ["FLOAT_DTYPES", "SOLVER_PARAMS", "FitData", "LinearDR", "OutputMixin",
           "ProjectionAPI", "as_output", "cast_fitted", "check_int_components",
           "check_n_components", "closed_form_result",
           "converged_alternation", "deprecated_attribute", "output_dtype", "preserve_float32",
           "project_centered", "seed_of", "sign_rule", "solve_and_warn", "solver_options",
           "reraise_interrupt", "start_point", "warm_result", "warn_if_unconverged"]

# --- n_components ------------------------------------------------------------------------------
def check_n_components(n_components, n_features: int, default: int | None = None) -> int:
    """``n_components`` as an int with 1 <= n_components < n_features; None is ``default``
    (the method's natural maximum; n_features − 1, the largest proper subspace, if None)."""
    q = n_components
    if q is None:
        q = n_features - 1 if default is None else default
        if q < 1:
            raise ParameterError("n_components", f"None means the largest proper subspace, "
                                 f"but n_features = {n_features} leaves none: pass data with "
                                 "at least two features")
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q < n_features:
        raise ParameterError("n_components", f"must be an integer with 1 <= n_components < "
                             f"n_features = {n_features}, got {q!r}")
    return int(q)


def check_int_components(q, upper: int, bound: str, other: str = "") -> int:
    """An integer ``n_components`` with ``1 <= q <= upper`` (``bound`` names the upper limit,
    ``other`` the other accepted forms, for the message)."""
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q <= upper:
        raise ParameterError("n_components", f"must be None or an integer with 1 <= "
                             f"n_components <= {bound} = {upper}{other}, got {q!r}")
    return int(q)


def sign_rule(M: np.ndarray) -> np.ndarray:
    """scikit-learn's sign rule (``svd_flip`` on the components): the largest entry of each
    column of M is positive."""
    rows = np.argmax(np.abs(M), axis=0)
    signs = np.sign(M[rows, np.arange(M.shape[1])])
    return M * np.where(signs == 0, 1.0, signs)


def deprecated_attribute(new: str, old: str, since: str = "0.2") -> property:
    """A read-only alias ``old`` of the fitted attribute ``new`` that warns
    (``FutureWarning``) on use; kept for one release."""
    def get(self):
        warnings.warn(f"{type(self).__name__}.{old} is deprecated since ldr {since} and will "
                      f"be removed in the next release; use {new}", FutureWarning,
                      stacklevel=2)
        check_is_fitted(self, new)
        return getattr(self, new)
    return property(get, doc=f"Deprecated alias of ``{new}``.")


# --- the objective -----------------------------------------------------------------------------
def _is_factory(objective) -> bool:
    return callable(objective) and not isinstance(objective, type)


def resolve_objective(objective):
    """An :class:`~ldr.Objective` subclass (given as a class, or by a registered method's name
    or class name, :mod:`ldr.registry`), or a factory ``f(X, y, r) -> Objective``."""
    if isinstance(objective, str):
        try:
            return registry.get(objective)
        except ParameterError as exc:
            raise exc.renamed("objective") from None
    if isinstance(objective, type) and issubclass(objective, Objective):
        return objective
    if _is_factory(objective):
        return objective
    raise ParameterError("objective", f"expected an ldr.Objective subclass, a registered "
                         f"method's name ({', '.join(registry.names())}) or a factory "
                         f"f(X, y, r) -> Objective, got {objective!r}; an Objective instance "
                         "is already fitted to its data: pass its class, or wrap it as "
                         "lambda X, y, r: MyObjective(...)")


def requires_y(cls) -> bool:
    """Whether ``cls`` is built from (X, y, r) (True) or (X, r) (False): its declared Method,
    else its constructor's signature; a factory takes y always and needs it not (False)."""
    if _is_factory(cls):
        return False
    if cls.method is not None:
        return cls.method.supervised
    names = [p.name for p in inspect.signature(cls).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) >= 2 and names[1] == "r":
        return False
    if len(names) >= 3 and names[1] == "y" and names[2] == "r":
        return True
    raise ParameterError("objective", f"{cls.__name__}({', '.join(names)}) is not of the form "
                         "cls(X, r, ...) or cls(X, y, r, ...); declare a Method with a build "
                         "classmethod, pass a factory f(X, y, r), or write a LinearDR subclass "
                         "that overrides _make_objective")


def _chunked(cls) -> bool:
    return not _is_factory(cls) and cls.method is not None and cls.method.chunked


class LinearDR(OutputMixin, TransformerMixin, BaseEstimator):
    """Any ldr method as a scikit-learn transformer.

    Parameters
    ----------
    objective : str, Objective subclass or callable
        A registered method by name (``"lda"``, or its class name ``"LDA"``); an
        :class:`~ldr.Objective` subclass built as ``cls(X, [y,] r, **objective_params)``
        (supervised when it declares so or its constructor reads ``(X, y, r, ...)``); or a
        factory ``f(X, y, r) -> Objective`` (y is None without labels), e.g. a function that
        returns an ``@ldr.objective`` built on the training rows.
    n_components : int or None, default None
        r, the subspace dimension, 1 <= r < n_features; None: the natural maximum, the
        objective's ``max_rank(X, y)`` where it defines one (LDA: min(n_features, n_classes)
        − 1), else n_features − 1, the largest proper subspace (at r = n_features every cost
        on a Grassmann manifold is constant).
    solver : str, Solver, list of them or None, default None
        Any solver :func:`ldr.solve` accepts (a list chains them); None: ``ldr.solve``'s
        default, the objective's ``default_solver`` (``["ism", "trust-region"]`` for an
        objective with a Φ-oracle — PCA and the quotients of traces — else the trust region).
        ``benchmarks/bench_estimator_defaults.py`` measures it against the trust region from
        the heuristic on 20 real tables: the same cost to 1e-15, every fit converged, median
        time 0.82× on the development tables and 0.94× on the held-out ones.
    start : "heuristic", "random", None or array, default None
        None: the solver's own start (ISM: the eigenvectors of Φ₀), else the objective's
        eigenvector heuristic, else a random point seeded by ``random_state`` — as
        :func:`ldr.solve`; "heuristic": the objective's heuristic where it has one, else a
        random point; "random"; or an explicit d×r orthonormal array.
    tol : float, default 1e-8
        Gradient tolerance (``gtol`` of :func:`ldr.solve`, relative to the problem's gradient
        scale).
    max_iter : int, default 1000
        Iterations per solver stage.
    objective_params : dict, optional
        Keyword arguments of the objective's constructor.
    solver_params : dict, optional
        The other options of :func:`ldr.solve`: ``xtol``, ``ftol``, ``fwindow``,
        ``max_time``, ``gtol_scale``, ``certify``, ``callback``.
    random_state : int, RandomState or None, default 0
        Seeds random starts (the only randomness); None draws fresh entropy.
    warm_start : bool, default False
        When fitted before, start the next ``fit`` at the previous fit's point (``start`` is
        then ignored) and continue its :class:`~ldr.Result` (``result_.trace`` numbered on):
        a fit stopped by ``max_iter`` or interrupted resumes; scikit-learn's meaning (as its
        ``NeighborhoodComponentsAnalysis``).  The new data must give a point of the same
        shape.

    Attributes
    ----------
    M_ : (n_features, n_components) orthonormal, or a tuple on a product manifold
        The solution in ldr's layout: ``transform`` is ``objective_.transform(X, M_)``.
    components_ : (n_components, n_features)
        ``M_.T``: one component per row, scikit-learn's layout.  Not set by the generic
        estimator when ``M_`` is a tuple (a product manifold).
    n_components_ : int
    cost_ : float
        The objective's cost at ``M_`` (a cost to minimize).
    n_iter_ : int
        Solver iterations.
    result_ : ldr.Result
        The driver's full record (reason, trace, oracle counts, certificate if requested).
    objective_ : ldr.Objective
        The fitted objective (it holds the statistics of the training data).
    mean_ : (n_features,)
        The training mean, where the objective centers the data.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> est = LinearDR("lda", n_components=2, objective_params={"reg": 0.01}).fit(X, y)
    >>> est.transform(X).shape, est.M_.shape, est.components_.shape
    ((178, 2), (13, 2), (2, 13))
    >>> bool(np.allclose(est.M_.T @ est.M_, np.eye(2)))
    True
    """

    _required_parameters = ["objective"]
    _objective_class: type | None = None  # fixed by the concrete subclasses
    _objective_args: tuple[str, ...] = ()  # their __init__ arguments forwarded to it
    _pairwise_memory = False  # forms n×n matrices (for the memory stated on a Dask array)

    def __init__(self, objective, n_components=None, *, solver=None,
                 start=None, tol=1e-8, max_iter=1000, objective_params=None,
                 solver_params=None, random_state=0, warm_start=False):
        self.objective, self.n_components = objective, n_components
        self.solver, self.start, self.tol, self.max_iter = solver, start, tol, max_iter
        self.objective_params, self.solver_params = objective_params, solver_params
        self.random_state, self.warm_start = random_state, warm_start

    # --- the objective ----------------------------------------------------------------------
    #: answers in the input's array namespace under array_api_dispatch (``_namespace``)
    _array_api_support = True

    def _objective_spec(self) -> tuple:
        if self._objective_class is not None:
            return self._objective_class, {k: getattr(self, k) for k in self._objective_args}
        params = self.objective_params or {}
        if not isinstance(params, dict):
            raise ParameterError("objective_params", f"expected a dict, got {params!r}")
        return resolve_objective(self.objective), dict(params)

    def _requires_y(self) -> bool:
        return requires_y(self._objective_spec()[0])

    def _make_objective(self, data: FitData, r: int) -> Objective | None:
        """Hook: the objective on the training data, or None when there is nothing to
        optimize (then :meth:`_closed_form` gives the point)."""
        cls, params = self._objective_spec()
        params = {**params, **data.params}
        try:
            if _is_factory(cls):
                obj = cls(data.X, data.y, r, **params)
                if not isinstance(obj, Objective):
                    raise ParameterError("objective", f"the factory returned "
                                         f"{type(obj).__name__}, not an ldr.Objective")
                return obj
            return registry.build(cls, data.X, data.y if requires_y(cls) else None, r,
                                  **params)
        except ParameterError as exc:
            if exc.param == "r":  # the objective's r is the estimator's n_components
                raise exc.renamed("n_components") from None
            raise

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = self._array_api_support
        try:
            tags.target_tags.required = self._requires_y()
        except ValueError:  # an invalid objective is reported by fit, not by the tags
            tags.target_tags.required = False
        return tags

    # --- the fit template -------------------------------------------------------------------
    def _validate(self, X, y):
        if self._requires_y():
            if y is None:
                raise ParameterError(
                    "y", f"{type(self).__name__} requires y to be passed, but the target y is "
                    f"None: {self._objective_spec()[0].__name__} is supervised; call fit(X, y)")
            return validate_data(self, X, y, dtype=FLOAT_DTYPES, ensure_min_samples=2,
                                 multi_output=True)
        return validate_data(self, X, dtype=FLOAT_DTYPES, ensure_min_samples=2), y

    def _validate_lazy(self, X, y):
        """A Dask array (or DataFrame) X, kept lazy: only the objectives that read rows in
        chunks (``Method.chunks``) take it; the others raise, stating the memory needed."""
        cls = self._objective_spec()[0]
        if not _chunked(cls):
            refuse_lazy(X if is_lazy(X) else y, "X" if is_lazy(X) else "y",
                        type(self).__name__, pairwise=self._pairwise_memory)
        if not isinstance(X, np.memmap):  # a memmap is read in row chunks by ldr.data.rows
            X = as_dask_array(X, "X")
        if X.ndim != 2:
            raise ParameterError("X", f"expected a 2-D array of shape (n_samples, n_features), "
                                 f"got a Dask array with shape {X.shape}")
        if self._requires_y() and y is None:
            raise ParameterError(
                "y", f"{type(self).__name__} requires y to be passed, but the target y is None: "
                f"{cls.__name__} is supervised; call fit(X, y)")
        self.n_features_in_ = int(X.shape[1])
        self.__dict__.pop("feature_names_in_", None)
        return X, y

    def _prepare(self, X, y) -> FitData:
        """Hook: validate (X, y).  A Dask array or memmap stays lazy for the objectives that
        read rows in chunks."""
        chunked = is_lazy(X) or is_lazy(y) or (
            isinstance(X, np.memmap) and _chunked(self._objective_spec()[0]))
        dtype = np.float64 if chunked else output_dtype(X)
        X, y = self._validate_lazy(X, y) if chunked else self._validate(X, y)
        return FitData(X, y, dtype, chunked)

    def _reduce(self, data: FitData) -> None:
        """Hook: reduce ``data`` to the span of the rows where the objective would refuse a
        singular covariance (``ldr.estimators.span``), setting ``subspace_``; nothing
        here (a generic objective's structure is unknown)."""

    def _n_components(self, data: FitData) -> int:
        """Hook: r from ``n_components`` (None: :meth:`_natural_n_components`)."""
        if data.basis is not None:
            return check_span_components(self.n_components, data.n_features,
                                         data.basis.shape[0], self._natural_n_components(data))
        return check_n_components(self.n_components, data.n_features,
                                  self._natural_n_components(data))

    def _natural_n_components(self, data: FitData) -> int | None:
        """``n_components=None``: the objective's ``max_rank(X, y)`` where it defines one
        (LDA: min(n_features, n_classes) − 1), else None (n_features − 1)."""
        if self.n_components is not None:
            return None
        max_rank = getattr(self._objective_spec()[0], "max_rank", None)
        return None if max_rank is None else max_rank(data.X, data.y)

    def _start(self, obj: Objective):
        """Hook: the start point handed to :func:`ldr.solve` (``start``, resolved)."""
        return start_point(self.start, obj)

    def _warm_point(self, obj: Objective):
        """The previous fit's point on ``obj``'s manifold (``warm_start``)."""
        return self.result_.M

    def _closed_form(self, data: FitData, r: int) -> tuple:
        """Hook: ``(M, Result)`` when :meth:`_make_objective` returned None."""
        raise NotImplementedError(f"{type(self).__name__} has no closed form")

    def _solve(self, obj: Objective, M0, warm):
        """Hook: the warned Result from ``M0`` (``warm``: the previous fit's Result, or None)."""
        return solve_and_warn(self, obj, M0)

    def _finalize(self, obj: Objective | None, M, data: FitData):
        """Hook: the point to keep (a subclass may rotate a Grassmann answer); sets scores."""
        return M

    def _components(self, obj: Objective | None, M):
        """Hook: ``components_`` (r×d); ``M.T`` for a single factor, unset on a product."""
        return None if isinstance(M, tuple) else M.T

    def fit(self, X, y=None):
        """Build the objective on (X[, y]) and minimize it (the module docstring's template);
        returns self.  ``X`` may be a Dask array (or a Dask DataFrame) or an ``np.memmap`` for
        the objectives whose statistics are computed in one pass by :mod:`ldr.data.rows` (PCA,
        OrthogonalLDA, MAF, SFA, PPCA, FactorAnalysis): nothing is materialized; the others
        raise a ValueError stating the memory they would need (Dask) or load the memmap."""
        space = namespace_of(X) if self._array_api_support else None
        if space is None or not getattr(self, "_rows_in_namespace", False):  # (_namespace)
            X, y = to_numpy(X), to_numpy(y)  # ProjectionAPI, _moments_namespace: kept there
        data = self._prepare(X, y)
        self._reduce(data)
        r = self._n_components(data)
        obj = self._make_objective(data, r)
        if obj is None:
            M, res = self._closed_form(data, r)
        else:
            warm = warm_result(self, obj)
            res = self._solve(obj, self._start(obj) if warm is None else warm, warm)
            M = res.M if isinstance(res.M, tuple) else np.asarray(res.M, dtype=float)
        self.objective_, self.result_ = obj, res
        self.M_ = self._finalize(obj, M, data)
        components = self._components(obj, self.M_)
        if data.basis is not None:  # back from the span's coordinates z = Uᵀx
            self.M_ = data.basis @ self.M_
            components = None if components is None else components @ data.basis.T
        if components is not None:
            self.components_ = components
        self.n_components_ = r
        self.cost_, self.n_iter_ = float(res.cost), res.n_iter
        mean = getattr(obj, "mean_", None) if obj is not None else None
        if data.mean is not None:
            self.mean_ = np.asarray(data.mean)
        elif mean is not None:
            self.mean_ = np.asarray(mean)
        cast_fitted(self, data.dtype)  # float32 in, float32 out (ldr.estimators._output)
        if space is not None:  # the input's namespace and device (ldr.estimators._namespace)
            to_namespace(self, *space)
        return self

    def transform(self, X) -> np.ndarray:
        """The objective's mapping of X onto the learned subspace (usually ``(X − mean_) M_``),
        computed in float64; float32 for float32 X; in X's namespace under array_api_dispatch
        (:func:`~ldr.estimators._namespace.transform_in`)."""
        check_is_fitted(self, "M_")
        if is_lazy(X):  # a lazy Dask array, block by block (map_blocks)
            return map_rows(X, self._transform_block, self.n_features_in_, self.n_components_)
        if (space := namespace_of(X, fitted=self)) is not None:
            return transform_in(self, X, *space)
        X = validate_data(self, to_numpy(X), reset=False, dtype=FLOAT_DTYPES)
        return as_output(self._transform_block(X), output_dtype(X))

    def _transform_block(self, X):
        if getattr(self, "subspace_", None) is not None:  # the objective is the span's
            return ((np.asarray(X, dtype=float) - np.asarray(self.mean_, dtype=float))
                    @ np.asarray(self.components_, dtype=float).T)
        return self.objective_.transform(X, self.M_)


class ProjectionAPI(TransformerMixin):
    """``transform`` as ``(X − mean_) @ components_.T`` (float32 kept) and the one-pass statistics
    (PCA, OrthogonalLDA); a TransformerMixin, so that ``set_output`` wraps this ``transform``."""
    _rows_in_namespace = True  # LinearDR.fit hands rows of another namespace as they are

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _prepare(self, X, y) -> FitData:
        """The validated data and their :class:`~ldr.data.statistics.Moments` (one pass over
        chunks for a Dask array or memmap)."""
        dtype = output_dtype(X)
        space = namespace_of(X)
        if space is not None and (y is not None or not self._requires_y()):
            # one pass over the rows in their namespace, on their device; d×d to the host
            xp, kw = space[0], {"dtype": [space[0].float64, space[0].float32],
                                "ensure_min_samples": 2}
            if y is None:
                X = validate_data(self, X, **kw)
            else:
                X, y = validate_data(self, X, y, multi_output=True, **kw)
            dtype = np.float32 if X.dtype == xp.float32 else np.float64
            X64 = X if X.dtype == xp.float64 else xp.astype(X, xp.float64)  # as NumPy's path
            stats = moments(X64, y, name="X").on_host()
            return FitData(X, None if y is None else to_numpy(y), dtype, False, stats)
        chunked = is_lazy(X) or is_lazy(y) or isinstance(X, np.memmap)
        X, y = self._validate_lazy(X, y) if chunked else self._validate(X, y)
        return FitData(X, y, dtype, chunked, moments(X, y, name="X"))

    def transform(self, X) -> np.ndarray:
        """``(X − mean_) @ components_.T`` (PCA divides by ``√explained_variance_`` when
        ``whiten``); float32 stays float32, a Dask array stays lazy."""
        check_is_fitted(self, "M_")
        if is_lazy(X):
            return map_rows(X, self._transform_block, self.n_features_in_,
                            self.n_components_)
        space = namespace_of(X, fitted=self)
        if space is not None:  # computed in X's namespace, on its device
            return project_in(self, X, *space)
        X = validate_data(self, to_numpy(X), reset=False, dtype=[np.float64, np.float32])
        return self._transform_block(X)

    def _scale(self, Z, xp, device):
        """Hook: :meth:`transform`'s ``Z`` in namespace ``xp``, finished (PCA whitens)."""
        return Z

    def _transform_block(self, X):
        return (X - self.mean_) @ self.components_.T
