"""The estimator pipeline: one route from the rows to a fitted linear map.

Every estimator of :mod:`ldr.estimators` fits through :meth:`LinearDR.fit`:

1. **validate, once** (:class:`FitData`): X is checked by scikit-learn's ``validate_data`` in
   its own array namespace — NumPy, or under ``sklearn.config_context(array_api_dispatch=True)``
   a PyTorch, CuPy or array-api-strict array, which stays on its device where the estimator
   computes there (``_computes_in_namespace``) and is copied to the host once otherwise — or is
   kept lazy (a Dask array or ``np.memmap``) for the estimators that read one-pass statistics;
   the float dtype of the answers is fixed here (float32 in, float32 out);
2. ``_prepare(data)`` — the method's statistics and parameter checks;
3. ``_n_components(data)`` — r;
4. ``_fit_point(data, r)`` — the objective (``_objective``) minimized by :func:`ldr.solve` with
   the estimator's settings (``_solve``), or a closed form (``_closed_form``) where there is
   nothing to optimize; an alternation (the clustering estimators) replaces this one hook;
5. ``_finish(data, objective, result)`` — the point kept (a rotation within the subspace) and
   the method's scores;
6. the fitted linear map :class:`AffineMap` (``map_``: ``transform(X) = (X − shift) A``), from
   ``_affine_map``; the fitted arrays are rounded to the input's float dtype and moved to its
   namespace and device.

``transform`` and ``inverse_transform`` are written once, on ``map_``.

Every estimator speaks one vocabulary: ``n_components`` first, then keyword-only parameters;
``solver`` (any solver or chain :func:`ldr.solve` accepts); ``start``; ``tol`` (the gradient
tolerance of :func:`ldr.solve`, relative; None: 1e-8 for float64 data, scaled for lower
precisions); ``max_iter`` (the iterations of the whole fit, every solver stage counted);
``solver_params`` (every other option of :func:`ldr.solve`); ``random_state``; the fitted
point ``M_`` (ldr's d×r layout) and ``components_`` (scikit-learn's: one component per row).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ldr.core.deprecation import renamed_value, user_stacklevel, warn_renamed, was_given
from ldr.core.errors import ParameterError
from ldr.core.objective import Objective
from ldr.core.result import Result, Trace
from ldr.data import arrays
from ldr.data.rows import as_dask_array, map_rows
from ldr.data.statistics import Moments, check_weights, merge
from ldr.data.validation import check_magnitude, is_lazy, refuse_lazy, validate_data
from ldr.driver import registry
from ldr.estimators.progress import check_verbose, solve_shown
from ldr.estimators.span import check_span_components
from ldr.solvers import chain

__all__ = ["SOLVE_OPTIONS", "AffineMap", "FitData", "LinearDR", "WeightedFit",
           "check_int_components", "check_n_components", "closed_form_result",
           "deprecated_attribute", "random_seed",
           "sign_rule", "start_point"]

#: the options of :func:`ldr.solve` an estimator's ``solver_params`` may hold; the start, the
#: seed, the gradient tolerance and the budget are the estimator's own ``start``,
#: ``random_state``, ``tol`` and ``max_iter``
SOLVE_OPTIONS = ("xtol", "ftol", "fwindow", "max_time", "tol_scale", "floor_patience",
                 "certify", "callback", "orthonormalize")
#: ``solver_params`` keys of an earlier release (old → new), accepted with a FutureWarning
RENAMED_SOLVE_OPTIONS = {"gtol": "tol", "max_iter": "max_iter", "gtol_scale": "tol_scale"}
#: keys of ``solver_params`` that are the estimator's own parameters (the seed and start under
#: their names in ldr.solve of an earlier release too)
OWN_PARAMETERS = {"tol": "tol", "start": "start", "random_state": "random_state",
                  "seed": "random_state", "M0": "start"}
#: fitted attributes that are labels, not numbers computed from X: never cast or moved
LABELS = frozenset({"classes_", "existing_classes_", "labels_", "feature_names_in_"})
#: fitted attributes that are never moved to the input's namespace
HOST_ONLY = frozenset({"feature_names_in_", "n_features_in_", "result_", "objective_",
                       "results_", "history_"})


# --- small public helpers ---------------------------------------------------------------------
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


def sample_size(value, name: str, n_samples: int, auto) -> int | None:
    """A sample-size parameter (landmarks, sampled rows): "auto" is ``auto(n_samples)``, None
    is None (every row), an integer must lie in [2, n_samples] (a ParameterError naming
    ``name`` otherwise)."""
    if isinstance(value, str) and value == "auto":
        return auto(n_samples)
    if value is not None and (isinstance(value, bool) or not isinstance(
            value, numbers.Integral) or not 2 <= value <= n_samples):
        raise ParameterError(name, f"must be \"auto\", None or an integer in [2, n_samples = "
                             f"{n_samples}], got {value!r}")
    return None if value is None else int(value)


def sign_rule(M: np.ndarray) -> np.ndarray:
    """scikit-learn's sign rule (``svd_flip`` on the components): the largest entry of each
    column of M is positive."""
    rows = np.argmax(np.abs(M), axis=0)
    signs = np.sign(M[rows, np.arange(M.shape[1])])
    return M * np.where(signs == 0, 1.0, signs)


def deprecated_attribute(new: str, old: str) -> property:
    """A read-only alias ``old`` of the fitted attribute ``new`` that warns
    (``FutureWarning``) on use; kept for one release."""
    def get(self):
        warnings.warn(f"{type(self).__name__}.{old} is deprecated and will be removed in the "
                      f"next release; use {new}", FutureWarning, stacklevel=2)
        check_is_fitted(self, new)
        return getattr(self, new)
    return property(get, doc=f"Deprecated alias of ``{new}``.")


def random_seed(random_state):
    """An int or None for :func:`ldr.solve` from a scikit-learn ``random_state``."""
    if random_state is None or (isinstance(random_state, numbers.Integral)
                                and not isinstance(random_state, bool) and random_state >= 0):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.RandomState):
        return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    raise ParameterError("random_state", f"expected None, a non-negative integer, a numpy "
                         f"RandomState or Generator, got {random_state!r}")


def start_point(start, obj: Objective | None):
    """``start``: "heuristic" (the objective's, else a seeded random point), "random", None
    (the solver's own default start) or an array."""
    if isinstance(start, str):
        if start == "heuristic":
            return "heuristic" if obj is not None and obj.provides("heuristic") else "random"
        if start == "random":
            return "random"
        raise ParameterError("start", f"expected 'heuristic', 'random', None or an array, "
                             f"got {start!r}")
    return start


def closed_form_result(M, cost: float, how: str) -> Result:
    """The record of a fit with nothing to optimize (n_components = n_features: the whole
    space is one point of the Grassmannian)."""
    return Result(M=M, cost=float(cost), converged=True, n_iter=0, time=0.0, grad_norm=0.0,
                  trace=Trace(), solver="closed-form",
                  reason=f"n_components = n_features: the whole space, nothing to optimize "
                         f"({how})")


def output_dtype(X) -> type:
    """float32 for float32 data (an array of any namespace, a Dask array, or a DataFrame whose
    columns are all float32), float64 for anything else."""
    dtype = getattr(X, "dtype", None)
    if dtype is None and hasattr(X, "dtypes"):  # a DataFrame: one dtype for all columns
        kinds = set(np.asarray(X.dtypes).tolist())
        dtype = kinds.pop() if len(kinds) == 1 else None
    if dtype is None:
        return np.float64
    if arrays.foreign(X) is not None:
        return np.float32 if dtype == arrays.namespace(X).float32 else np.float64
    try:
        return np.float32 if np.dtype(dtype) == np.float32 else np.float64
    except TypeError:  # an extension dtype (pandas) that numpy does not know
        return np.float64


def overflows_float32(a) -> bool:
    """Whether a float64 array (NumPy or another namespace's) holds finite values beyond
    float32's range."""
    xp = arrays.foreign(a)
    if xp is None:
        if not isinstance(a, np.ndarray) or a.dtype != np.float64 or not a.size:
            return False
        xp = np
    elif a.dtype != xp.float64 or not math.prod(a.shape):
        return False
    finite = xp.where(xp.isfinite(a), xp.abs(a), xp.zeros_like(a))
    return bool(xp.max(finite) > float(np.finfo(np.float32).max))


def rounded(value, dtype):
    """A fitted float64 array (NumPy, or one the fit left in the input's namespace; or a
    tuple of them) as ``dtype``; an array float32 cannot hold (beyond 3.4e38) stays float64.
    float64 leaves the value as it is (no copy)."""
    if np.dtype(dtype) == np.float64:
        return value
    if isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
        return tuple(rounded(v, dtype) for v in value)
    if isinstance(value, np.ndarray) and value.dtype == np.float64 \
            and not overflows_float32(value):
        return value.astype(dtype)
    xp = arrays.foreign(value)
    if xp is not None and value.dtype == xp.float64 and not overflows_float32(value):
        return xp.astype(value, xp.float32)
    return value


def moved(value, space):
    """A NumPy array of numbers (or a tuple of them) in the namespace and on the device
    ``space = (xp, device)``; anything else as it is."""
    if isinstance(value, tuple):
        return tuple(moved(v, space) for v in value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        xp, device = space
        return xp.asarray(np.ascontiguousarray(value), device=device)
    return value


def same_space(value, X):
    """``value`` (an array of any namespace) in X's namespace, on its device and in its
    float dtype; as it is when it is there already."""
    if arrays.foreign(X) is None:
        return np.asarray(arrays.to_host(value), dtype=X.dtype)
    return arrays.like(value, X)


# --- the fitted map -------------------------------------------------------------------------------
@dataclasses.dataclass
class AffineMap:
    """The fitted projection ``z = (x − shift) A`` and, where the method has one, the map back
    ``x ≈ z B + shift``.

    Attributes
    ----------
    shift : (n_features,) array
        Subtracted from each row first (the training mean, or zeros).
    matrix : (n_features, n_components) array
        A.
    inverse : (n_components, n_features) array or None
        B, for ``inverse_transform``; None where the method defines none.
    """

    shift: object
    matrix: object
    inverse: object = None

    def apply(self, X):
        """``(X − shift) A``, computed in float64 in X's namespace, returned in X's dtype."""
        xp = arrays.namespace(X)
        X64 = X if X.dtype == xp.float64 else xp.astype(X, xp.float64)
        Z = (X64 - same_space(self.shift, X64)) @ same_space(self.matrix, X64)
        return finished(Z, X.dtype)

    def back(self, Z):
        """``Z B + shift``, computed in float64 in Z's namespace, returned in Z's dtype."""
        xp = arrays.namespace(Z)
        Z64 = Z if Z.dtype == xp.float64 else xp.astype(Z, xp.float64)
        X = Z64 @ same_space(self.inverse, Z64) + same_space(self.shift, Z64)
        return finished(X, Z.dtype)

    def rounded(self, dtype) -> AffineMap:
        return AffineMap(*(rounded(a, dtype) for a in (self.shift, self.matrix,
                                                       self.inverse)))

    def moved(self, space) -> AffineMap:
        return AffineMap(*(moved(a, space) for a in (self.shift, self.matrix, self.inverse)))


def finished(Z, dtype):
    """A float64 output as ``dtype`` (X's); finite values beyond float32's range are an error
    naming X, not infinities."""
    xp = arrays.namespace(Z)
    if dtype == Z.dtype:
        return Z
    if xp is np and overflows_float32(Z):
        raise ParameterError("X", f"the output reaches {float(np.max(np.abs(Z))):.3g}, "
                             "beyond float32's range (3.4e38): pass X as float64")
    return xp.astype(Z, dtype)


# --- what fit passes from one step to the next ------------------------------------------------
@dataclasses.dataclass
class FitData:
    """What ``fit`` validated and what its steps add.

    Attributes
    ----------
    X : array, lazy rows or Moments
        The rows as float64 in their namespace (or a host copy), a Dask array or memmap kept
        lazy, or — once a step has reduced them — their statistics.
    y : the targets (labels as given; a second view or numeric targets validated)
    dtype : np.float32 or np.float64, the dtype of the fitted arrays and outputs
    space : (xp, device) of an input of another namespace than NumPy, else None
    lazy : whether X is read in chunks
    stats : the rows' :class:`~ldr.data.statistics.Moments`, where a step computed them
    basis : (n_features, k) or None
        The span the fit works in (``subspace_``), when the data were reduced to it.
    mean : the original features' mean, when reduced
    params : objective parameters the preparation fixed, over the estimator's own
    derived : what one step computed for a later one (a spectrum, a kernel width)
    weights : (n,) frequency weights of the rows (``sample_weight``, checked), or None
    """

    X: object
    y: object
    dtype: type
    space: tuple | None = None
    lazy: bool = False
    stats: Moments | None = None
    basis: object = None
    mean: object = None
    params: dict = dataclasses.field(default_factory=dict)
    derived: dict = dataclasses.field(default_factory=dict)
    weights: object = None

    @property
    def n_features(self) -> int:
        """The dimension the objective sees (k after a reduction to the span)."""
        return int(self.X.d if isinstance(self.X, Moments) else self.X.shape[1])


# --- the objective --------------------------------------------------------------------------------
def is_factory(objective) -> bool:
    return callable(objective) and not isinstance(objective, type)


def resolve_objective(objective):
    """An :class:`~ldr.Objective` subclass (given as a class, or by a registered method's name
    or class name, :mod:`ldr.driver.registry`), or a factory ``f(X, y, r) -> Objective``."""
    if isinstance(objective, str):
        try:
            return registry.get(objective)
        except ParameterError as exc:
            raise exc.renamed("objective") from None
    if isinstance(objective, type) and issubclass(objective, Objective):
        return objective
    if is_factory(objective):
        return objective
    raise ParameterError("objective", f"expected an ldr.Objective subclass, a registered "
                         f"method's name ({', '.join(registry.names())}) or a factory "
                         f"f(X, y, r) -> Objective, got {objective!r}; an Objective instance "
                         "is already fitted to its data: pass its class, or wrap it as "
                         "lambda X, y, r: MyObjective(...)")


def requires_y(cls) -> bool:
    """Whether ``cls`` is built from (X, y, r) (True) or (X, r) (False): its declared Method,
    else its constructor's signature; a factory takes y always and needs it not (False)."""
    if is_factory(cls):
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
                         "that overrides _objective")


class LinearDR(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Any ldr method as a scikit-learn transformer.

    Parameters
    ----------
    objective : str, Objective subclass or callable
        A registered method by name (``"lda"``, or its class name ``"LDA"``); an
        :class:`~ldr.Objective` subclass built as ``cls(X, [y,] r, **objective_params)``
        (supervised when it declares so or its constructor reads ``(X, y, r, ...)``); or a
        factory ``f(X, y, r) -> Objective`` (y is None without labels).
    n_components : int or None, default None
        r, the subspace dimension, 1 <= r < n_features; None: the natural maximum, the
        objective's ``max_rank(X, y)`` where it defines one (LDA: min(n_features, n_classes)
        − 1), else n_features − 1, the largest proper subspace.
    solver : str, Solver, list of them or None, default None
        Any solver :func:`ldr.solve` accepts (a list chains them); None: the objective's
        ``default_solver``.
    start : "heuristic", "random", None or array, default None
        None: the solver's own start (ISM: the eigenvectors of Φ₀), else the objective's
        heuristic, else a random point seeded by ``random_state``, as :func:`ldr.solve`;
        "heuristic": the objective's heuristic where it has one, else a random point;
        "random"; or an explicit orthonormal array.
    tol : float or None, default None
        The gradient tolerance of :func:`ldr.solve`, relative to the problem's gradient
        scale; None: 1e-8 for float64 data, scaled to the precision of lower ones.
    max_iter : int, default 1000
        The iterations of the whole fit, every solver stage counted.
    objective_params : dict, optional
        Keyword arguments of the objective's constructor.
    solver_params : dict, optional
        The other options of :func:`ldr.solve`: ``xtol``, ``ftol``, ``fwindow``,
        ``max_time``, ``tol_scale``, ``floor_patience``, ``certify``, ``callback``,
        ``orthonormalize``.
    random_state : int, RandomState, Generator or None, default 0
        Seeds every random choice of the fit; None draws fresh entropy.
    warm_start : bool, default False
        When fitted before, the next ``fit`` starts from the previous answer and continues
        its trace (``start`` ignored; the new data must give a point of the same shape).

    verbose : int, default 0
        0: silent; 1 or more: a progress line per solver iteration on standard output
        (:mod:`ldr.estimators.progress`).

    Attributes
    ----------
    M_ : (n_features, n_components) array, or a tuple on a product manifold
        The solution in ldr's layout.
    components_ : (n_components, n_features)
        One component per row, scikit-learn's layout (``M_.T`` for an orthonormal
        projection); not set when ``M_`` is a tuple.
    map_ : AffineMap
        The fitted projection: ``transform(X) == (X − map_.shift) @ map_.matrix``.
    n_components_ : int
    cost_ : float
        The objective's cost at ``M_`` (a cost to minimize); where a stochastic stage's end
        was not evaluated exactly (``result_.reason`` says so), its last epoch's estimate.
    n_iter_ : int
        Solver iterations.
    result_ : ldr.Result
        The driver's full record (reason, trace, oracle counts, certificate if requested).
    objective_ : ldr.Objective
        The fitted objective (None where the fit had nothing to optimize).
    mean_ : (n_features,)
        The training mean, where the method centers the data.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> est = LinearDR("lda", n_components=2, objective_params={"shrinkage": 0.01}).fit(X, y)
    >>> est.transform(X).shape, est.M_.shape, est.components_.shape
    ((178, 2), (13, 2), (2, 13))
    >>> bool(np.allclose(est.M_.T @ est.M_, np.eye(2)))
    True
    """

    _required_parameters = ["objective"]
    #: the objective class of a concrete estimator, and its parameters forwarded to it
    _objective_class: type | None = None
    _objective_args: tuple[str, ...] = ()
    #: the fit computes in the input's namespace, on its device (else on a host copy)
    _computes_in_namespace = False
    #: the fit forms n×n arrays (for the memory stated when a Dask array is refused)
    _pairwise_memory = False
    #: stopping options of this estimator over :func:`ldr.solve`'s defaults
    _solver_defaults: dict = {}

    def __init__(self, objective, n_components=None, *, solver=None, start=None, tol=None,
                 max_iter=1000, objective_params=None, solver_params=None,
                 verbose=0, random_state=0,
                 warm_start=False):
        self.objective = objective
        self.n_components = n_components
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.objective_params = objective_params
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start

    # --- tags and the objective's declaration -------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        try:
            tags.target_tags.required = self._requires_y()
        except ValueError:  # an invalid objective is reported by fit, not by the tags
            tags.target_tags.required = False
        return tags

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    def _objective_spec(self) -> tuple:
        if self._objective_class is not None:
            return self._objective_class, {k: getattr(self, k) for k in self._objective_args}
        params = self.objective_params or {}
        if not isinstance(params, dict):
            raise ParameterError("objective_params", f"expected a dict, got {params!r}")
        return resolve_objective(self.objective), dict(params)

    def _requires_y(self) -> bool:
        return requires_y(self._objective_spec()[0])

    def _reads_chunks(self) -> bool:
        """Whether the fit reads the rows in one pass of chunks (a Dask array or memmap stays
        lazy): the objectives that declare ``Method.chunks``."""
        cls = self._objective_spec()[0]
        return not is_factory(cls) and cls.method is not None and cls.method.chunked

    # --- step 1: validate, once ---------------------------------------------------------
    #: what ``fit`` without its y lacks, for the error (None: "the objective is supervised")
    _missing_y: str | None = None

    def _validate(self, X, y) -> FitData:
        """X (and y) checked once: in their namespace, kept lazy, or copied to the host
        (module docstring)."""
        if self._requires_y() and y is None:
            why = self._missing_y or (f"{self._objective_spec()[0].__name__} is supervised; "
                                      "call fit(X, y)")
            raise ParameterError(
                "y", f"{type(self).__name__} requires y to be passed, but the target y is "
                f"None: {why}")
        lazy = is_lazy(X) or is_lazy(y) or isinstance(X, np.memmap)
        if lazy and self._reads_chunks():
            return self._validate_lazy(X, y)
        if is_lazy(X) or is_lazy(y):
            refuse_lazy(X if is_lazy(X) else y, "X" if is_lazy(X) else "y",
                        type(self).__name__, pairwise=self._pairwise_memory)
        space = arrays.input_space(X)
        if space is not None and not self._computes_in_namespace:
            X = arrays.to_host(X)
            y = None if y is None else arrays.to_host(y)
        xp = space[0] if space is not None and self._computes_in_namespace else np
        dtypes = [xp.float64, xp.float32]
        if y is None or not self._uses_y():
            X = validate_data(self, X, dtype=dtypes, ensure_min_samples=2)
        else:
            X, y = self._validate_with_y(X, y, dtypes)
        dtype = output_dtype(X)
        X64 = X if X.dtype == xp.float64 else xp.astype(X, xp.float64)
        check_magnitude(X64, "X")  # the rest of the fit reads X as validated here
        return FitData(X64, y, dtype, space)

    def _uses_y(self) -> bool:
        """Whether ``fit`` reads y (False: a y given to an unsupervised fit is ignored)."""
        return self._requires_y()

    def _validate_with_y(self, X, y, dtypes) -> tuple:
        """Hook: X and y validated together (labels as given, by default)."""
        X, y = validate_data(self, X, y, dtype=dtypes, ensure_min_samples=2,
                             multi_output=True)
        return X, arrays.to_host(y)

    def _validate_lazy(self, X, y) -> FitData:
        """A Dask array (or DataFrame) or memmap X, kept lazy: its shape is checked here and
        its values by the one pass over its chunks."""
        dtype = output_dtype(X)
        if not isinstance(X, np.memmap):
            X = as_dask_array(X, "X")
        if X.ndim != 2:
            raise ParameterError("X", f"expected a 2-D array of shape (n_samples, n_features), "
                                 f"got an array with shape {X.shape}")
        self.n_features_in_ = int(X.shape[1])
        self.__dict__.pop("feature_names_in_", None)
        return FitData(X, y, np.float64 if not isinstance(X, np.memmap) else dtype, None,
                       lazy=True)

    def _renamed(self, new: str, old: str):
        """The value of the parameter ``new``, or of its former name ``old`` when that was
        given (with a FutureWarning): ``(value, name given)``."""
        value = getattr(self, old, "deprecated")
        name = old if was_given(value) else new
        return renamed_value(type(self).__name__, old, new, value, getattr(self, new)), name

    def _shrinkage(self) -> float:
        """``shrinkage`` (or the former ``reg``) of the estimators that shrink a covariance
        towards tr(Σ)/d · I, checked: a number in [0, 1]."""
        level, name = self._renamed("shrinkage", "reg")
        if isinstance(level, bool) or not isinstance(level, numbers.Real) \
                or not 0 <= level <= 1:
            raise ParameterError(name, f"must be a number in [0, 1], got {level!r}")
        return float(level)

    # --- steps 2-5: the hooks ---------------------------------------------------------------
    def _prepare(self, data: FitData) -> None:
        """Hook: the method's statistics and checks on the validated data."""

    def _n_components(self, data: FitData) -> int:
        """Hook: r from ``n_components`` (None: the objective's ``max_rank(X, y)`` where it
        defines one, else n_features − 1)."""
        default = None
        if self.n_components is None:
            max_rank = getattr(self._objective_spec()[0], "max_rank", None)
            default = None if max_rank is None else max_rank(data.X, data.y)
        if data.basis is not None:
            return check_span_components(self.n_components, data.n_features,
                                         data.basis.shape[0], default)
        return check_n_components(self.n_components, data.n_features, default)

    def _objective(self, data: FitData, r: int) -> Objective | None:
        """Hook: the objective on the prepared data, or None when there is nothing to optimize
        (then :meth:`_closed_form` gives the point)."""
        cls, params = self._objective_spec()
        params = {**params, **data.params}
        try:
            if is_factory(cls):
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

    def _closed_form(self, data: FitData, r: int) -> Result:
        """Hook: the Result of a fit with nothing to optimize (:meth:`_objective` gave None)."""
        raise NotImplementedError(f"{type(self).__name__} has no closed form")

    def _check_start(self) -> None:
        """Hook: ``start`` checked where no solve reads it (a closed form)."""
        if isinstance(self.start, str):
            start_point(self.start, None)

    def _start(self, obj: Objective, data: FitData):
        """Hook: the start handed to :func:`ldr.solve` (``start``, resolved)."""
        return start_point(self.start, obj)

    def _solve(self, obj: Objective, data: FitData) -> Result:
        """Hook: the objective minimized with the estimator's settings, from the previous
        answer under ``warm_start``; a ConvergenceWarning when it did not converge."""
        warm = self._warm_result(obj)
        return self._run(obj, self._start(obj, data) if warm is None else warm)

    def _run(self, obj: Objective, start) -> Result:
        """:func:`ldr.solve` with the estimator's solver and settings from ``start``; a
        ConvergenceWarning when it did not converge."""
        res = solve_shown(type(self).__name__, self.verbose, obj, self.solver, start,
                          self._solve_options())
        self._warn_unconverged(res, self._remedy(obj, res))
        # autograd's cached gradient closure is rebuilt on demand and cannot be pickled
        obj.__dict__.pop("_ag_grad", None)
        return res

    def _fit_point(self, data: FitData, r: int) -> tuple:
        """Hook: ``(objective, Result)`` — the objective solved, or the closed form.  An
        alternation overrides this hook."""
        obj = self._objective(data, r)
        if obj is None:  # the settings it does not use are checked all the same
            self._solve_options()
            self._check_start()
            return None, self._closed_form(data, r)
        return obj, self._solve(obj, data)

    def _finish(self, data: FitData, obj, result: Result):
        """Hook: the point to keep (a subclass may rotate within the subspace) and the
        method's scores."""
        return result.M

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        """Hook: the fitted projection of the original features: the objective's
        ``linear_map(M)`` (``(x − shift) A``; without an objective, ``(x − data.mean) M``),
        mapped back from the span of the data when the fit ran there."""
        shift, A = obj.linear_map(M) if obj is not None else (data.mean, M)
        if isinstance(shift, tuple):  # a two-view objective: one map per view
            (shift, A), (y_shift, y_A) = shift, A
            self.y_map_ = AffineMap(np.asarray(arrays.to_host(y_shift), dtype=float),
                                    np.asarray(arrays.to_host(y_A), dtype=float))
        if data.basis is not None:  # the objective saw the coordinates z = Uᵀ(x − mean)
            A = data.basis @ np.asarray(arrays.to_host(A), dtype=float)
            shift = data.mean
        if shift is None:
            shift = np.zeros(A.shape[0])
        return AffineMap(np.asarray(arrays.to_host(shift), dtype=float),
                         np.asarray(arrays.to_host(A), dtype=float))

    def _point(self, data: FitData, M):
        """Hook: ``M_``, the fitted point in the original features (the span's basis applied
        to a single factor)."""
        return M if data.basis is None or isinstance(M, tuple) else data.basis @ M

    def _components(self, data: FitData, obj, M):
        """Hook: ``components_`` (r×d) of the original features: ``M.T`` for a single factor
        (the span's basis applied), None on a product."""
        if isinstance(M, tuple):
            return None
        return (M if data.basis is None else data.basis @ M).T

    # --- the template ---------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit on the rows X (and targets y where the method reads them); returns self.

        X may be a Dask array (or DataFrame) or an ``np.memmap`` for the methods that read
        one-pass statistics (the others raise a ValueError stating the memory they would
        need), and, under scikit-learn's ``array_api_dispatch``, an array of another
        namespace (the fitted arrays then live there)."""
        return self._fit_weighted(X, y, None)

    def _fit_weighted(self, X, y, sample_weight):
        """``fit`` with frequency weights, for the estimators whose statistics are weighted
        moments (:func:`~ldr.data.statistics.chunk_moments`): a sample of integer weight w
        counts as w copies of its row."""
        self.__dict__.pop("moments_", None)
        data = self._validate(X, y)
        if sample_weight is not None:
            if data.lazy:
                raise ParameterError("sample_weight", "weights apply to rows in memory; a "
                                     "Dask array or memmap is read without them")
            data.weights = check_weights(sample_weight, data.X.shape[0])
        return self._fit_data(data)

    def _streams(self) -> bool:
        """Whether the fit reads one-pass moments that merge across batches
        (:meth:`_batch_moments` defined): ``partial_fit`` exists then."""
        return type(self)._batch_moments is not LinearDR._batch_moments

    def _batch_moments(self, data: FitData) -> Moments:
        """Hook: the :class:`~ldr.data.statistics.Moments` of a batch of validated rows
        (``data.X``, ``data.y``): the statistics the fit reads, on the host."""
        raise NotImplementedError

    @available_if(_streams)
    def partial_fit(self, X, y=None, classes=None):
        """Update the fit with one more batch of rows X (and labels y); returns self.

        The batch's moments are merged with those of every batch before it (``moments_``;
        Chan, Golub & LeVeque's pairwise update, :mod:`ldr.data.statistics`), and the fit
        runs from the merged moments: after batches X₁, …, X_b it equals ``fit`` on their
        concatenation (to rounding).  ``fit`` starts anew; a ``partial_fit`` after a
        ``fit`` continues from that fit's rows.  X may be a Dask array (read by its
        chunks).  ``classes`` is accepted for scikit-learn's classifier convention and not
        needed: the classes seen so far are merged batch by batch."""
        seen = getattr(self, "moments_", None)
        width = getattr(self, "n_features_in_", None)
        data = self._validate(X, y)
        batch = self._batch_moments(data)
        if seen is not None and batch.d != seen.d:
            self.n_features_in_ = width
            raise ParameterError("X", f"X has {data.n_features} features, but "
                                 f"{type(self).__name__} is expecting {width} features as "
                                 "input (the batches seen so far; a two-view estimator's "
                                 "second view counts too)")
        data.stats = batch if seen is None else merge(seen, batch)
        data.lazy = True  # the merged statistics, not this batch's rows, are the data
        return self._fit_data(data)

    def _fit_data(self, data: FitData):
        """The pipeline from the validated data: steps 2-6 of the module docstring."""
        self._prepare(data)
        if self._streams():
            self.moments_ = data.stats
        r = self._n_components(data)
        obj, res = self._fit_point(data, r)
        self.objective_ = obj
        self.result_ = res
        self.n_components_ = r
        self.cost_ = float(res.cost)
        self.n_iter_ = res.n_iter
        M = self._finish(data, obj, res)  # may refine n_components_, cost_, n_iter_
        components = self._components(data, obj, M)
        self.map_ = self._affine_map(data, obj, M)
        self.M_ = self._point(data, M)
        if components is not None:
            self.components_ = components
        mean = data.mean if data.mean is not None else getattr(obj, "mean_", None)
        if mean is not None:
            self.mean_ = np.asarray(arrays.to_host(mean), dtype=float)
        self._store(data)
        return self

    def _store(self, data: FitData) -> None:
        """The fitted arrays rounded to the input's float dtype and moved to its namespace
        (labels moved, never rounded; the driver's records stay NumPy)."""
        for name, value in list(vars(self).items()):
            if name.startswith("_") or not name.endswith("_") or name in HOST_ONLY:
                continue
            if isinstance(value, AffineMap):
                value = value.rounded(data.dtype)
                if data.space is not None:
                    value = value.moved(data.space)
            elif name in LABELS:
                if data.space is not None and isinstance(value, np.ndarray) \
                        and value.dtype.kind in "biuf":
                    value = moved(value, data.space)
            else:
                value = rounded(value, data.dtype)
                if data.space is not None:
                    value = moved(value, data.space)
            setattr(self, name, value)

    # --- the solver's settings --------------------------------------------------------------
    def _solve_options(self) -> dict:
        """The keyword arguments of :func:`ldr.solve`: ``tol``, ``max_iter``,
        ``random_state`` and ``solver_params`` over the estimator's ``_solver_defaults``,
        every value checked before any work (a typo is a ParameterError naming it)."""
        params = self.solver_params
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ParameterError("solver_params", f"expected a dict, got {params!r}")
        own = {"tol": self.tol, "max_iter": self.max_iter,
               "random_state": random_seed(self.random_state)}
        check_verbose(self.verbose)
        options = dict(self._solver_defaults)
        for key, value in params.items():
            if key in RENAMED_SOLVE_OPTIONS:
                new = RENAMED_SOLVE_OPTIONS[key]
                warn_renamed(f"{type(self).__name__}.solver_params", key,
                             new if new == "tol_scale" else f"the estimator's {new}")
                if new == "tol_scale":
                    options["tol_scale"] = value
                else:
                    own[new] = value
                continue
            if key in OWN_PARAMETERS:
                raise ParameterError("solver_params", f"{key!r} is set by the estimator's own "
                                     f"parameter {OWN_PARAMETERS[key]}=; pass it there")
            if key not in SOLVE_OPTIONS:
                raise ParameterError("solver_params", f"unknown option {key!r}; the options "
                                     f"are {', '.join(SOLVE_OPTIONS)} (the gradient tolerance "
                                     "is the estimator's tol=, the budget its max_iter=)")
            options[key] = value
        options.update(own)
        from ldr.core.stopping import StopOptions

        StopOptions(**{k: options[k] for k in ("xtol", "ftol", "fwindow", "max_iter",
                                               "max_time", "floor_patience", "tol_scale")
                       if k in options}, tol=1e-8 if options["tol"] is None else options["tol"])
        if self.solver is not None:  # None: the objective's default solver
            chain(self.solver)  # an unknown solver name fails here
        return options

    def _warm_result(self, obj: Objective) -> Result | None:
        """``warm_start``: the previous fit's Result, its point on ``obj``'s manifold
        (``_warm_point``), or None (not asked for, or not fitted yet)."""
        warm = getattr(self, "warm_start", False)
        if not isinstance(warm, (bool, np.bool_)):
            raise ParameterError("warm_start", f"expected True or False, got {warm!r}")
        if not warm or getattr(self, "result_", None) is None:
            return None
        M = self._warm_point(obj)
        shapes = [tuple(np.shape(m)) for m in (M if isinstance(M, tuple) else (M,))]
        want = obj.shape if isinstance(obj.shape[0], (tuple, list)) else (obj.shape,)
        if shapes != [tuple(s) for s in want]:
            raise ParameterError("warm_start", f"the previous fit's point has shape "
                                 f"{shapes if len(shapes) > 1 else shapes[0]}, this fit needs "
                                 f"{obj.shape} (other n_features or n_components): pass "
                                 "warm_start=False to start afresh")
        return dataclasses.replace(self.result_, M=M)

    def _warm_point(self, obj: Objective):
        """The previous fit's point on ``obj``'s manifold (``warm_start``)."""
        return self.result_.M

    def _remedy(self, obj: Objective, res: Result) -> str:
        """Hook: what the ConvergenceWarning of an unconverged ``res`` advises."""
        return "raise max_iter (or max_time through solver_params), or loosen tol"

    def _warn_unconverged(self, res: Result, remedy: str, what: str = "the solver") -> None:
        """A ConvergenceWarning quoting the driver's reason when ``res`` did not converge; a
        KeyboardInterrupt again when it was interrupted (a fit stops at Ctrl-C)."""
        if res.interrupted:
            raise KeyboardInterrupt(res.reason)
        if not res.converged:
            warnings.warn(f"{type(self).__name__}: {what} {res.solver!r} did not converge "
                          f"({res.reason}); {remedy}", ConvergenceWarning,
                          stacklevel=user_stacklevel())

    # --- new rows -------------------------------------------------------------------------
    def _check_rows(self, X, method: str = "transform"):
        """New rows X for a fitted estimator's ``method``: in the namespace and on the device
        of the fit (scikit-learn's rule under ``array_api_dispatch``), validated against the
        fit (feature count and names), float64 or float32."""
        check_is_fitted(self)
        given = self._check_space(X, method)
        xp = given[0] if given is not None else np
        return validate_data(self, X, reset=False, dtype=[xp.float64, xp.float32])

    def _check_space(self, X, method: str):
        """scikit-learn's rule under ``array_api_dispatch``: X in the namespace and on the
        device of the fit, else a ValueError naming ``method``; X's space (None for NumPy)."""
        fitted = arrays.input_space(getattr(self.map_, "matrix", None))
        given = arrays.input_space(X)
        if fitted is not None or given is not None:
            same = (fitted is not None and given is not None and fitted[0] is given[0]
                    and fitted[1] == given[1])
            if not same:
                name = type(self).__name__
                raise ValueError(
                    f"Inputs passed to {name}.{method}() must use the same namespace and the "
                    f"same device as those passed to fit(): it was fitted on "
                    f"{arrays.described(fitted)} and given {arrays.described(given)}. Convert X "
                    f"to the fit's namespace and device, or refit {name} on X's.")
        return given

    def transform(self, X, y=None):
        """The rows projected by the fitted map, ``(X − map_.shift) @ map_.matrix``; computed
        in float64 in X's namespace (and on its device), returned in X's float dtype; a Dask
        array block by block, lazily.  ``y``: the second view of a two-view estimator (then
        the pair of projections)."""
        check_is_fitted(self, "map_")
        if is_lazy(X) or is_lazy(y):
            Z = map_rows(X, self.map_.apply, self.n_features_in_, self.map_.matrix.shape[1])
            if y is None:
                return Z
            Y = as_dask_array(y, "Y")
            Y = Y[:, None] if Y.ndim == 1 else Y
            return Z, map_rows(Y, self.y_map_.apply, self.y_map_.matrix.shape[0],
                               self.y_map_.matrix.shape[1], "Y")
        rows = self._check_rows(X)
        Z = self.map_.apply(rows)
        if y is None:
            return Z
        y_map = getattr(self, "y_map_", None)
        if y_map is None:
            raise ParameterError("y", f"{type(self).__name__}.transform takes one view, X; "
                                 "y is the second view of a two-view estimator")
        return Z, y_map.apply(self._check_second_view(y, rows))

    def _check_second_view(self, Y, X):
        """A two-view estimator's new second view beside the validated rows X: a 2-D float
        array of X's namespace with as many rows and the fitted map's width."""
        from sklearn.utils import check_array

        xp = arrays.namespace(X)
        Y = check_array(Y, dtype=[xp.float64, xp.float32], ensure_2d=False, input_name="Y")
        Y = xp.reshape(Y, (-1, 1)) if Y.ndim == 1 else Y
        width = self.y_map_.matrix.shape[0]
        if Y.shape[0] != X.shape[0] or Y.shape[1] != width:
            raise ParameterError("Y", f"expected shape ({X.shape[0]}, {width}) (X's rows, the "
                                      f"fitted second view's features), got {Y.shape}")
        return Y

    def _has_inverse(self) -> bool:
        """Whether the fitted map has a map back (``inverse_transform`` exists only then, and
        before the fit for the methods that define one)."""
        fitted = getattr(self, "map_", None)
        return self._defines_inverse if fitted is None else fitted.inverse is not None

    #: the method defines a map back from the components to the features
    _defines_inverse = False

    @available_if(_has_inverse)
    def inverse_transform(self, X):
        """Back to the feature space: ``X @ map_.inverse + map_.shift`` (exact for data in the
        fitted subspace)."""
        check_is_fitted(self, "map_")
        given = self._check_space(X, "inverse_transform")
        xp = given[0] if given is not None else np
        from sklearn.utils import check_array

        Z = check_array(X, dtype=[xp.float64, xp.float32], input_name="X")
        if Z.shape[1] != self.n_components_:
            raise ParameterError("X", f"has {Z.shape[1]} columns, but {type(self).__name__} "
                                 f"has n_components_ = {self.n_components_}")
        return self.map_.back(Z)


class WeightedFit:
    """The ``fit`` of the estimators whose statistics are weighted moments (a mixin before
    :class:`LinearDR`): ``fit(X, y=None, sample_weight=None)``."""

    def fit(self, X, y=None, sample_weight=None):
        """Fit on the rows X (and labels y where the method reads them); returns self.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            The rows (a Dask array or memmap is read in one pass of chunks, without weights).
        y : array of shape (n_samples,), optional
            Class labels, for the supervised methods.
        sample_weight : array of shape (n_samples,), optional
            Frequency weights w_i ≥ 0: every statistic is that of the rows repeated by their
            weights — count Σ w_i, mean x̄ = Σ w_i x_i / Σ w_i, scatter
            Σ w_i (x_i − x̄)(x_i − x̄)ᵀ, per class the same
            (:func:`~ldr.data.statistics.chunk_moments`) — so that a sample of integer
            weight w counts as w copies of its row."""
        return self._fit_weighted(X, y, sample_weight)
