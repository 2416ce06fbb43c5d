"""Wasserstein discriminant analysis as scikit-learn estimators.

:class:`WassersteinDA` fits :class:`ldr.objectives.WDA`: by default the self-consistent field
(SCF) iteration on its ratio-trace pencil (Liu et al., Algorithm 1), or any other solver on
its trace-ratio cost (Flamary et al.).  :class:`WDAClustering` is Liu et al.'s Algorithm 2:
k-means in the projected space and WDA-SCF on the resulting labels, alternated until the
subspace stops moving (:mod:`ldr.estimators.wda_alternation`).  Mini-batch transport for
large classes: :mod:`ldr.estimators.wda_minibatch`.

References
----------
R. Flamary, M. Cuturi, N. Courty and A. Rakotomamonjy, "Wasserstein discriminant analysis",
Machine Learning 107, 2018.  H. Liu, Y. Cai, Y.-L. Chen and P. Li, "Ratio trace formulation
of Wasserstein discriminant analysis", NeurIPS 2020.  P. N. Belhumeur, J. P. Hespanha and
D. J. Kriegman, "Eigenfaces vs. Fisherfaces", IEEE TPAMI 19, 1997.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
from sklearn.base import ClusterMixin

from ldr.core.eigen import top_generalized
from ldr.core.errors import ParameterError
from ldr.core.problem import Problem
from ldr.core.result import Result
from ldr.data import arrays
from ldr.data.rows import as_dask_array, moments, take_rows
from ldr.data.validation import (
    check_data,
    check_labels,
    is_lazy,
    nullity,
    span_basis,
    validate_data,
)
from ldr.driver.loop import initial_point
from ldr.estimators.base import (
    AffineMap,
    FitData,
    LinearDR,
    WeightedFit,
    check_n_components,
    deprecated_attribute,
    random_seed,
    sign_rule,
)
from ldr.estimators.progress import solve_shown
from ldr.estimators.span import check_span_components, reduce_rows
from ldr.estimators.wda_alternation import (
    alternate,
    alternation_result,
    final_labels,
    min_cluster_size,
    null_space_result,
    ordered_null_space,
    projected,
    warn_stopped,
    warn_tiny,
    warn_unconverged,
)
from ldr.estimators.wda_minibatch import (
    EXACT_MAX_CLASS,
    FULL_CHECK_MAX_CLASS,
    batch_options,
    batch_stop,
    continuation_start,
    full_data_check,
)
from ldr.manifolds import Grassmann
from ldr.objectives.transport import class_scatters
from ldr.objectives.wda import WDA
from ldr.solvers.scf import SCF

__all__ = ["WDAClustering", "WDAEstimator", "WassersteinDA", "discriminant_span",
           "null_directions", "start_matrix", "within_null_space"]


#: the names ``start`` accepts (the class docstring's "Starts")
STARTS = ("auto", "continuation", "whole-space", "fda", "best")


def within_null_space(Sw, Sb) -> tuple | None:
    """None where S_w is non-singular; else ``(U, whole, UᵀS_wU, m)``: the span of the data
    (the non-null eigenvectors U of S_w + S_b; ``whole``: it is the whole space, U = I), S_w
    on it and m, its nullity there (the directions along which every class is a point)."""
    if span_basis(Sw) is None:
        return None
    U = span_basis(Sw + Sb, "X")
    whole = U is None
    U = np.eye(Sw.shape[0]) if whole else U
    Swu = U.T @ Sw @ U
    return U, whole, Swu, nullity(Swu)


def discriminant_span(X, codes: np.ndarray, n_classes: int, r: int | None = None,
                      scatters: tuple | None = None) -> np.ndarray | None:
    """The subspace (d×k, orthonormal) a WDA fit of ``r`` components works in when the
    within-class scatter S_w of the rows X is singular; None when the whole space will do.

    First the span of the data, the non-null eigenvectors U of S_w + S_b (directions without
    any variance carry no information).  On it, let m be the number of directions with no
    within-class spread (the nullity of UᵀS_wU).  While m < r the trace ratio is bounded
    (:class:`ldr.objectives.WDA`, "A singular within-class scatter") and the fit runs on U,
    keeping those directions: along them every class is a point, the most discriminative
    directions there are.  With m ≥ r and fewer samples than that span needs (n − n_classes
    < k) the ratio is unbounded on them and the fit runs on the top n − n_classes principal
    directions within U (the PCA step of Belhumeur et al.'s Fisherfaces), or on the span of
    S_w where even those leave S_w singular; with enough samples :func:`null_directions`
    answers instead.  ``r`` None: the natural maximum, k − 1 for a span of dimension k;
    ``scatters``: (S_w, S_b) when already computed
    (:func:`~ldr.objectives.transport.class_scatters`)."""
    Sw, Sb = class_scatters(X, codes, n_classes) if scatters is None else scatters
    found = within_null_space(Sw, Sb)
    if found is None:
        return None
    U, whole, Swu, m = found
    if m == 0 or m < (U.shape[1] - 1 if r is None else r) or m == U.shape[1]:
        return None if whole else U  # (m = k: no spread at all; the objective says so)
    V = span_basis(Swu)
    _, P = np.linalg.eigh(U.T @ (Sw + Sb) @ U)
    P = P[:, ::-1][:, :V.shape[1]]  # the top principal directions, as many as rank(S_w)
    return U @ (P if span_basis(P.T @ Swu @ P) is None else V)


def null_directions(X, codes: np.ndarray, n_classes: int, r: int | None = None,
                    scatters: tuple | None = None) -> np.ndarray | None:
    """The directions (d×m, orthonormal) along which every class is a single point, ordered
    by between-class scatter, largest first — where they decide a WDA fit of ``r``
    components; None where they do not.

    They decide it when the data hold at least r of them (within the span of the data, of
    dimension k; ``r`` None: k − 1) and enough samples that no principal-component step
    would remove them (n − n_classes ≥ k: the singularity is the data's, a feature constant
    within each class, not the sample size's): the trace ratio is then unbounded on every
    r-dimensional subspace of them that S_b sees, and the fit keeps the r with the largest
    between-class scatter (the null-space rule of Chen, Liao, Ko, Lin & Yu, "A new LDA-based
    face recognition system which can solve the small sample size problem", Pattern
    Recognition 33, 2000)."""
    Sw, Sb = class_scatters(X, codes, n_classes) if scatters is None else scatters
    found = within_null_space(Sw, Sb)
    if found is None:
        return None
    U, _, Swu, m = found
    k = U.shape[1]
    if m == 0 or m == k or m < (k - 1 if r is None else r) or X.shape[0] - n_classes < k:
        return None
    return U @ ordered_null_space(span_basis(Swu), U.T @ Sb @ U)  # k × m within the span


def start_matrix(start, shape: tuple) -> np.ndarray | None:
    """An array ``start`` (POT's ``P0``; of any namespace, copied to NumPy) as given,
    checked to be finite and of ``shape``; None for a named start."""
    if isinstance(start, str):
        return None
    try:
        P0 = np.array(arrays.to_host(start), dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError("start", f"expected a name or a numeric array, got "
                             f"{start!r} ({exc})") from None
    if P0.shape != shape or not np.all(np.isfinite(P0)):
        raise ParameterError("start", f"expected a finite array of shape {shape} "
                             f"(n_features, n_components), got shape {P0.shape}")
    return P0


class WDAEstimator(LinearDR):
    """What :class:`~ldr.estimators.WassersteinDA` and :class:`~ldr.estimators.WDAClustering`
    share: WDA's objective and its parameters, mini-batch transport and the stopping rule of
    SCF on it, ``n_components`` (None: the method's natural maximum, within the span of the
    data where the fit reduces to it) and the deprecated names ``eps`` (now ``ridge``) and
    ``P_`` (now ``M_``)."""

    _objective_class = WDA
    _pairwise_memory = True

    P_ = deprecated_attribute("M_", "P_")

    @property
    def _solver_defaults(self) -> dict:
        """SCF converges on its fixed-point residual, xtol 1e-6; on a mini-batch objective
        (``batch_size_``) :data:`~ldr.estimators.wda_minibatch.BATCH_STOP` unless
        ``solver_params`` sets a rule of its own."""
        if getattr(self, "batch_size_", None):
            return batch_stop(self.solver_params)
        return {"xtol": 1e-6}

    def _ridge(self) -> float:
        """``ridge`` (or the former ``eps``), checked: a number >= 0."""
        value, name = self._renamed("ridge", "eps")
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not value >= 0:
            raise ParameterError(name, f"must be a number >= 0 (the pencil's C_w + εI uses "
                                 f"ε = {name} · tr(C_w)/d), got {value!r}")
        return float(value)

    def _requested_components(self) -> int | None:
        """p as asked (``n_components``, or an array start's columns), None for the natural
        maximum; read before the span is chosen (:func:`discriminant_span`)."""
        if self.n_components is not None:
            return self.n_components if isinstance(self.n_components, numbers.Integral) \
                else None  # a bad value is reported by the pipeline's check
        return self._natural_n_components(0)

    def _natural_n_components(self, n_features: int) -> int | None:
        """``n_components=None``: n_features − 1 (None here), unless a subclass says
        otherwise."""
        return None

    def _n_components(self, data: FitData) -> int:
        d = self.n_features_in_
        default = self._natural_n_components(d)
        if data.basis is not None:
            return check_span_components(self.n_components, data.n_features, d, default)
        return check_n_components(self.n_components, d, default)

    def _solver_chain(self):
        """The solver (or chain) each WDA solve runs."""
        return self.solver

    def _solve_from(self, obj: WDA, start) -> Result:
        """One :func:`ldr.solve` of ``obj`` from ``start`` with the estimator's solver and
        settings, without a warning (the caller judges the answers); Ctrl-C stops the fit."""
        res = solve_shown(type(self).__name__, self.verbose, obj, self._solver_chain(), start,
                          self._solve_options())
        if res.interrupted:
            raise KeyboardInterrupt(res.reason)
        return res


class WassersteinDA(WeightedFit, WDAEstimator):
    """Wasserstein discriminant analysis: the subspace whose projected classes are far apart
    in regularized Wasserstein distance and close within (Flamary et al.), by the ratio trace
    and SCF (Liu et al.) by default.

    With T^{c,c'}(P) the entropic transport plan between classes c and c′ in the projection
    P (K = exp(−D/reg), D the projected squared distances), C_b and C_w the between- and
    within-class sums of the pairs' transported scatters, WDA maximizes the trace ratio

        J(P) = tr(PᵀC_b(P)P) / tr(PᵀC_w(P)P)                        (Liu et al., Eq. 3)

    over orthonormal P; its ratio-trace form tr((PᵀC_bP)(PᵀC_wP)⁻¹) (Eq. 4) has as fixed
    points the nonlinear eigenproblem C_b(P)P = C_w(P)PΛ (Eq. 5), which SCF solves
    (Algorithm 1) on the pencil (C_b, C_w + εI), ε = ``ridge`` · tr(C_w)/d.

    **Starts.**  The ratio-trace problem has several fixed points, some holding a signal and
    a noise direction, and which one SCF reaches depends on the start.  The default is
    continuation in reg (``start="auto"``, SCF's own start, :meth:`ldr.objectives.WDA.pencil0`):
    the pencil at the fixed point of the smoother problem with 10 × reg, reached from the
    whole-space pencil (transport plans in the original metric).  The regularized-FDA start
    sees only the class means and can miss classes that share their mean.  ``start="best"``
    runs SCF from the continuation, whole-space and FDA starts and ``n_starts`` seeded
    random starts and keeps the answer with the largest ratio trace (the trace ratio for
    another solver).  A trace-ratio solver (``solver="trust-region"`` or ``"gradient"``)
    runs after SCF from each start (the chain SCF → solver, ``scf_first``): from a random or
    FDA start alone it can end at a local maximum of the trace ratio far below the best one.

    **Singular S_w** (a feature constant within each class, collinear features, fewer
    samples than features): directions along which every class is a single point.  The fit
    runs in the span of the data (``subspace_``; :func:`~ldr.estimators.wda.discriminant_span`).
    While fewer than p directions of that span lack within-class spread, the trace ratio is
    bounded and WDA is fitted there as it is, keeping those directions — they separate the
    classes best, and a rule that set them aside would drop the answer with the singularity
    (:class:`ldr.objectives.WDA`).  With p or more, the ratio is unbounded on them: where the
    samples suffice to span the data (n_samples − n_classes ≥ its dimension; a feature
    constant within each class), ``M_`` holds the p of them with the largest between-class
    scatter (:func:`~ldr.estimators.wda.null_directions`; ``result_.solver`` is
    "null-space", ``ratio_`` and ``-cost_`` are infinite); with fewer samples than features
    the fit runs on the top n_samples − n_classes principal directions within the span
    (Fisherfaces' PCA step; the span of S_w where even they leave S_w singular).

    Parameters
    ----------
    n_components : int or None, default None
        p, 1 <= p < n_features; None: the number of columns of an array ``start`` (POT's
        ``P0``), else n_features − 1, the natural maximum (at p = n_features the trace ratio
        is a constant).
    reg : float > 0 or "auto", default "auto"
        The entropic regularization, as POT's ``reg`` (K = exp(−D/reg)), in squared-distance
        units; a number is used as given.  "auto": the within-class spread in a
        p-dimensional projection, reg = (p/d) · 2 tr(S_w) — the mean squared distance
        between two samples of one class, expected in a random p-dimensional projection
        (:class:`ldr.objectives.WDA`) — so that the
        fit follows the data's units (``fit(c·X)`` gives the subspace of ``fit(X)``); with
        ``normalize``, 1 (POT's default factor).  ``reg_`` holds the value used.
    sinkhorn_iter : int, default 10
        Sinkhorn iterations per plan (POT's ``k``).
    ridge : float >= 0, default 1e-8
        The pencil's C_w + εI uses ε = ridge · tr(C_w)/d (relative, so scale-free).
    normalize : bool, default False
        POT's ``normalize`` (``ot.dr.wda(..., P0, normalize=True)``): each pair of classes'
        regularization becomes reg × the mean squared distance between their samples
        projected by ``start`` (the array as given), fixed for the run
        (:class:`ldr.objectives.WDA`, ``normalize_at``).  Needs an array ``start``.
    batch_size : "auto", None or int >= 2, default "auto"
        None: exact plans between whole classes (products by row blocks past the memory
        budget).  An integer: mini-batch transport (Fatras et al. 2020) — each pair of
        classes' plan is the mean of ``n_batches`` plans between batches of that many rows
        per class, drawn once from ``random_state`` per class (batch j of a class is the same
        in all its pairs), so that every solver sees one fixed smooth objective; SCF then
        stops at :data:`~ldr.estimators.wda_minibatch.BATCH_STOP` (``solver_params``' xtol,
        ftol or fwindow replace it).  "auto": exact while the largest class has at most
        :data:`~ldr.estimators.wda_minibatch.EXACT_MAX_CLASS` rows, else
        :data:`~ldr.estimators.wda_minibatch.AUTO_BATCH` rows per batch
        (:mod:`ldr.estimators.wda_minibatch`); exact with ``sample_weight``.  With mini-batches
        a Dask array or ``np.memmap`` X is read over its chunks: one pass for the means and
        scatters, then the batches' rows gathered (:class:`ldr.objectives.WDA`), while the
        largest class has more than
        :data:`~ldr.estimators.wda_minibatch.FULL_CHECK_MAX_CLASS` rows (below, X is read
        whole and the full-data check runs).
    n_batches : int, default 2
        Batches per class in mini-batch mode.
    n_starts : int, default 5
        The random starts of ``start="best"``.
    scf_first : bool, default True
        With a solver other than "scf", first take each start to SCF's fixed point (the
        chain ["scf", solver]).
    solver : str, Solver or list of them, default "scf"
        "scf" (the ratio trace), "trust-region" or "gradient" (the trace ratio), a Solver or
        a chain (:func:`ldr.solve`).
    start : {"auto", "continuation", "whole-space", "fda", "best"} or array, default "auto"
        "auto" = "continuation" (above); "whole-space" (the whole-space pencil's top
        generalized eigenvectors) or "fda" (regularized FDA): those starts; "best" (above);
        an array (n_features, p): POT's ``P0``.  The array need not have orthonormal
        columns: the start is the orthonormal basis nearest to it (the polar factor UVᵀ of
        P0 = USVᵀ, which spans the same subspace; :func:`ldr.solve` with
        ``orthonormalize=True``), which the cost, a function of the span, cannot tell from
        P0.  Linearly dependent columns are a ValueError.
    tol : float or None, default None
        The gradient tolerance of :func:`ldr.solve` (for a trace-ratio solver; SCF computes
        no gradient and stops on xtol); None: the precision's default.
    max_iter : int, default 1000
        The iterations of each start's run, every solver stage counted.
    solver_params : dict, optional
        The other options of :func:`ldr.solve`; by default ``{"xtol": 1e-6}``, the subspace
        change on which SCF's fixed-point iteration converges.
    random_state : int, RandomState, Generator or None, default 0
        Seeds the random starts of "best" and the mini-batches.
    eps : deprecated
        The former name of ``ridge``; warns, removed in the next release.

    verbose : int, default 0
        0: silent; 1 or more: a progress line per solver iteration on standard output
        (:mod:`ldr.estimators.progress`).

    Attributes
    ----------
    M_, components_, map_, n_components_, cost_, n_iter_, result_, objective_, mean_ :
        see :class:`~ldr.estimators.LinearDR` (``M_`` with scikit-learn's sign rule, each
        column's largest entry positive, so that every namespace gives the same ``M_``;
        ``P_`` is its deprecated alias)
    results_ : list of ldr.Result
        Each start's run (``result_`` is the one kept).
    ratio_ : float
        The trace ratio at ``M_``.
    classes_ : (n_classes,) the class labels
    reg_ : float
        The regularization used (``reg``, or the value of "auto"); NaN for the null-space
        answer, which makes no plans.
    pair_reg_ : dict
        Each pair of classes' regularization, by class codes: ``reg_`` unless ``normalize``.
    batch_size_ : int or None
        Rows per class and batch; None: exact plans.
    full_data_ : dict or None
        None for an exact fit; after a mini-batch fit
        (:func:`~ldr.estimators.wda_minibatch.full_data_check`) ``batch_ratio``,
        ``full_ratio`` (the full-data trace ratio at the answer), ``relative_gap`` and
        ``note``, also appended to ``result_.reason`` (convergence refers to the mini-batch
        objective).
    subspace_ : (n_features, k) or None
        The subspace the fit ran in when S_w is singular (``results_``, ``result_``,
        ``objective_`` and ``pair_reg_`` are in its coordinates, ``M_`` is mapped back);
        None otherwise.

    Under scikit-learn's ``array_api_dispatch`` a PyTorch tensor (CPU or GPU) or an
    array-api-strict X is fitted in its namespace, on its device — plans, SCF, its starts and
    a trust-region polish; only the labels and the d×d and d×p arrays reach the host — and
    the fitted arrays and ``transform`` answer there.  The fit runs in float64; float32 X
    gives float32 fitted arrays and outputs.

    References
    ----------
    R. Flamary, M. Cuturi, N. Courty and A. Rakotomamonjy, "Wasserstein discriminant
    analysis", Machine Learning 107, 2018.  H. Liu, Y. Cai, Y.-L. Chen and P. Li, "Ratio
    trace formulation of Wasserstein discriminant analysis", NeurIPS 2020.  K. Fatras,
    Y. Zine, R. Flamary, R. Gribonval and N. Courty, "Learning with minibatch Wasserstein",
    AISTATS 2020.

    Examples
    --------
    >>> import ldr
    >>> X, y = ldr.datasets.make_wda(300, seed=0)
    >>> est = WassersteinDA(n_components=2).fit(X, y)
    >>> est.transform(X).shape
    (300, 2)
    """

    _computes_in_namespace = True

    def __init__(self, n_components=None, *, reg="auto", sinkhorn_iter=10, ridge=1e-8,
                 normalize=False, batch_size="auto", n_batches=2, n_starts=5, scf_first=True,
                 solver="scf", start="auto", tol=None, max_iter=1000, solver_params=None, verbose=0,
                 random_state=0, eps="deprecated"):
        self.n_components = n_components
        self.reg = reg
        self.sinkhorn_iter = sinkhorn_iter
        self.ridge = ridge
        self.normalize = normalize
        self.batch_size = batch_size
        self.n_batches = n_batches
        self.n_starts = n_starts
        self.scf_first = scf_first
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.eps = eps

    def _requires_y(self) -> bool:
        return True

    def _reads_chunks(self) -> bool:
        """A Dask array or memmap stays out of memory with mini-batches (``batch_size``
        "auto" or an integer): the objective reads the means and scatters over its chunks
        and gathers the batches' rows."""
        return self.batch_size is not None

    def _validate_with_y(self, X, y, dtypes) -> tuple:
        X, y = validate_data(self, X, y, dtype=dtypes, ensure_min_samples=2)
        return X, arrays.to_host(y)

    def _read_lazy(self, data: FitData) -> tuple | None:
        """A lazy X: the labels read into memory and, while the largest class has at most
        ``FULL_CHECK_MAX_CLASS`` rows, X read whole (then None); else Fisher's scatters by
        one pass over the chunks (its :class:`~ldr.data.statistics.Moments` kept for the
        objective)."""
        y = np.asarray(data.y.compute()) if is_lazy(data.y) else np.asarray(data.y)
        _, codes = check_labels(y, data.X.shape[0], "y")
        data.y = y
        if np.bincount(codes).max() <= FULL_CHECK_MAX_CLASS:
            data.X = check_data(take_rows(data.X, np.arange(data.X.shape[0])), "X")
            data.lazy = False
            return None
        stats = moments(data.X, codes, name="X").on_host()
        data.mean = np.asarray(stats.shift + stats.offset, dtype=float)
        data.derived["statistics"] = stats
        return stats.class_scatter()[:2]

    # --- the pipeline's hooks (ldr.estimators.base) -----------------------------------------
    def _prepare(self, data: FitData) -> None:
        """The objective's parameters, the span to fit in where S_w is singular
        (``subspace_``; the class docstring's "Singular S_w") and mini-batch mode
        (``batch_size_``)."""
        if not isinstance(self.normalize, (bool, np.bool_)):
            raise ParameterError("normalize", f"expected True or False, got {self.normalize!r}")
        data.params.update(reg=self.reg, sinkhorn_iter=self.sinkhorn_iter, ridge=self._ridge())
        scatters = self._read_lazy(data) if data.lazy else None
        classes, codes = check_labels(data.y, data.X.shape[0], "y")
        w = data.weights
        if scatters is None:
            scatters = class_scatters(data.X, codes, len(classes), weights=w)
        r = self._requested_components()
        data.derived["classes"] = classes
        data.derived["null"] = null_directions(data.X, codes, len(classes), r, scatters)
        U = self.subspace_ = None if data.derived["null"] is not None else \
            discriminant_span(data.X, codes, len(classes), r, scatters)
        if not data.lazy and (data.derived["null"] is not None or U is not None):
            # no objective holds the mean (a lazy X's is the chunks': _read_lazy)
            xp = arrays.namespace(data.X)
            mean = (xp.mean(data.X, axis=0) if w is None
                    else arrays.like(w / w.sum(), data.X) @ data.X)
            data.mean = np.asarray(arrays.to_host(mean), dtype=float)
        if U is not None:
            data.basis = U
            data.X = as_dask_array(data.X, "X") @ U if data.lazy \
                else data.X @ arrays.like(U, data.X)
        elif data.lazy:  # the objective reads the pass made here, not a second one
            data.params["statistics"] = data.derived["statistics"]
        if w is not None:
            data.params["sample_weight"] = w
        batch = batch_options(None if w is not None and self.batch_size == "auto"
                              else self.batch_size, self.n_batches, self.random_state, data.y)
        self.batch_size_ = batch.get("batch_size")
        data.params.update(batch)

    def _natural_n_components(self, n_features: int) -> int | None:
        """``n_components=None`` with an array ``start``: its number of columns (POT's p is
        P0's); else n_features − 1."""
        if not isinstance(self.start, str) and np.ndim(self.start) == 2:
            return int(np.shape(self.start)[1])
        return None

    def _check_start(self) -> None:
        if isinstance(self.start, str) and self.start not in STARTS:
            raise ParameterError("start", f"expected {', '.join(map(repr, STARTS))} or an "
                                 f"array, got {self.start!r}")

    def _closed_form(self, data: FitData, r: int) -> Result:
        """The null-space answer where at least ``n_components`` directions have no
        within-class spread (:func:`null_directions`; the class docstring's "Singular S_w")."""
        N = data.derived["null"]
        return null_space_result(
            N[:, :r], f"every class is a single point along {N.shape[1]} directions, at least "
                      f"n_components = {r}: the trace ratio is unbounded there; the directions "
                      "with the largest between-class scatter")

    def _objective(self, data: FitData, r: int) -> WDA | None:
        """The WDA objective, or None (then :meth:`_closed_form`) where at least
        ``n_components`` directions have no within-class spread."""
        N = data.derived.get("null")
        if N is not None:
            if r > N.shape[1]:
                raise ParameterError(
                    "n_components", f"the data have {N.shape[1]} directions with no "
                    f"within-class spread, fewer than n_components = {r} in a span of the data "
                    f"that allows no more; pass n_components <= {N.shape[1]}")
            return None
        normalize_at = None
        if self.normalize:
            normalize_at = start_matrix(self.start, (self.n_features_in_, r))
            if normalize_at is None:
                raise ParameterError(
                    "normalize", f"normalize=True scales each pair's reg by the mean squared "
                    f"distance at the start matrix (POT's P0), but start is {self.start!r}: "
                    f"pass start=<array of shape ({self.n_features_in_}, {r})> or "
                    "normalize=False")
            if data.basis is not None:
                normalize_at = data.basis.T @ normalize_at
        return WDA(data.X, data.y, r, normalize_at=normalize_at, **data.params)

    def _solver_chain(self):
        """``solver``, after SCF from each start when ``scf_first`` and it is another
        solver's name."""
        if self.scf_first and self.solver != "scf" and isinstance(self.solver, str):
            return ["scf", self.solver]
        return self.solver

    def _starts(self, obj: WDA, data: FitData) -> list:
        """The start points ``start`` names (the class docstring's "Starts")."""
        problem = Problem(obj)
        P0 = start_matrix(self.start, (self.n_features_in_, obj.shape[1]))
        if P0 is not None:  # orthonormalized: the polar factor, same span
            P0 = P0 if data.basis is None else data.basis.T @ P0  # its shadow in the span
            return [problem.manifold.validate_point(P0, "start", orthonormalize=True)]
        spectral = {
            "continuation": lambda: (initial_point(problem, None, solver=SCF()) if obj.exact
                                     else continuation_start(obj, batch_stop(self.solver_params))),
            "whole-space": lambda: top_generalized(*obj.whole_space_pencil(),
                                                   obj.shape[1])[0],
            "fda": obj.heuristic}
        spectral["auto"] = spectral["continuation"]
        if self.start in spectral:
            return [spectral[self.start]()]
        if self.start != "best":
            raise ParameterError("start", f"expected {', '.join(map(repr, STARTS))} or an "
                                 f"array, got {self.start!r}")
        rng = np.random.default_rng(random_seed(self.random_state))
        named = [spectral[k]() for k in ("continuation", "whole-space", "fda")]
        return named + [problem.manifold.random_point(rng) for _ in range(self.n_starts)]

    def _solve(self, obj: WDA, data: FitData) -> Result:
        """SCF (or the solver chain) from each start; the answer with the largest ratio
        trace kept (the trace ratio for another solver), a ConvergenceWarning when it did
        not converge."""
        results = [self._solve_from(obj, start) for start in self._starts(obj, data)]
        score = obj.ratio_trace if self.solver == "scf" else obj.ratio
        best = max(results, key=lambda res: score(res.M))
        self._warn_unconverged(best, "raise max_iter or loosen tol")
        data.derived["results"] = results
        return best

    def _finish(self, data: FitData, obj: WDA, result: Result):
        """scikit-learn's sign rule on ``M_`` (on the original features), the trace ratio,
        the pairs' regularizations and, after a mini-batch fit, the full-data check."""
        M = np.asarray(arrays.to_host(result.M), dtype=float)  # d×p from X's device
        if obj is None:  # the null-space answer: the ratio is unbounded, no plans were made
            self.results_ = [result]
            self.ratio_ = np.inf
            self.classes_ = data.derived["classes"]
            self.pair_reg_ = {}
            self.reg_ = np.nan
            self.full_data_ = None
            return sign_rule(M)
        U = data.basis
        M = sign_rule(M) if U is None else U.T @ sign_rule(U @ M)
        self.results_ = data.derived["results"]
        self.ratio_ = float(obj.ratio(result.M))
        self.classes_ = obj.classes_
        self.pair_reg_ = obj.pair_reg
        self.reg_ = obj.reg
        self.full_data_ = full_data_check(obj, result)
        return M


class WDAClustering(ClusterMixin, WDAEstimator):
    """Iterative WDA clustering (Liu et al., Algorithm 2): k-means in the projected space and
    WDA-SCF on its clusters, alternated (:mod:`ldr.estimators.wda_alternation`).

    From P₀ (``start``: the top principal directions), repeat: k-means on XP → labels (after
    the first round started from the previous labels' centroids); P ← WDA-SCF on those
    labels from P; stop when sin θ(P_k, P_{k+1}) <= ``outer_tol`` or after ``max_outer``
    rounds.  A k-means cluster of a single sample joins the nearest cluster for the WDA step,
    which needs two samples per class.  Where the within-cluster scatter is singular (k-means
    split along a direction in which every cluster is one point, such as a binary feature)
    WDA keeps those directions while they are fewer than p, and P is the top p of them
    otherwise (``n_null_directions_``; the rule of :class:`WassersteinDA`'s "Singular S_w").

    **Tiny clusters.**  A cluster is tiny below n_min = ``min_cluster_size`` samples, by
    default max(p + 1, ⌈0.03·n/k⌉), at most n/(2k)
    (:func:`~ldr.estimators.wda_alternation.min_cluster_size`).  WDA at a reg small against
    the projected squared distances favours directions that isolate a few samples (each
    cluster's entropic plan onto itself is nearly the identity, its cost nearly zero), and
    neither the trace ratio nor k-means' cost flags the collapse that follows.  At the first
    round t >= 2 whose k-means labels have more tiny clusters than round t − 1's, with
    ``adapt_reg`` and reg < s, the within-cluster spread of round t − 1's clusters in the
    subspace k-means found them in (s = (2/n) Σ_c Σ_{i∈c} ‖Pᵀ(x_i − x̄_c)‖², each cluster's
    cost onto itself under the uniform plan), reg becomes s (``reg_``) and that WDA step is
    made again; otherwise the guard stops the alternation and returns that subspace
    (``stopped_at_`` = t, ``converged_`` False, a ConvergenceWarning).  ``labels_`` is
    k-means in ``M_`` (10 starts; from the alternation's last clusters where that has fewer
    tiny clusters); tiny clusters there (``tiny_clusters_``) raise a ConvergenceWarning and
    set ``degenerate_`` unless k-means on the data (full space, 10 starts) makes each of
    them too, the same samples: then they are the data's outliers, not the alternation's
    doing.

    Parameters
    ----------
    n_components : int or None, default None
        p, 1 <= p < n_features; None: n_clusters − 1 (at most n_features − 1), the
        directions k cluster means span (LDA's C − 1; Ding and Li's LDA-k-means).
    n_clusters : int >= 2, default 3
    reg, sinkhorn_iter, ridge : as :class:`WassersteinDA`
        ``reg`` is the first round's; a collapse may raise it (``adapt_reg``).  "auto"
        (default): WassersteinDA's rule on the first round's clusters, (p/d) · 2 tr(S_w),
        so that the fit follows the data's units.
    batch_size, n_batches : as :class:`WassersteinDA`, for each WDA step on that round's
        clusters ("auto": exact plans while the largest cluster has at most
        :data:`~ldr.estimators.wda_minibatch.EXACT_MAX_CLASS` rows, mini-batches beyond).
        With mini-batches ("auto" or an integer) a Dask array or ``np.memmap`` X of more
        than n_clusters · ``EXACT_MAX_CLASS`` rows is read over its chunks: each round
        projects it (one pass) and takes its cluster scatters (one pass), and each WDA step
        reads the means and scatters again (one pass) and gathers its batches' rows; only the
        labels and the projected rows (n × p) are held.  A smaller one is read whole.
    max_outer : int, default 20
        The alternation's budget of rounds.
    outer_tol : float, default 1e-6
        The alternation stops when sin θ(P_k, P_{k+1}) <= outer_tol.
    min_cluster_size : "auto" or int >= 1, default "auto"
        n_min above; 1 turns the guard and the warning off.
    adapt_reg : bool, default True
        On a collapse, raise reg to the within-cluster spread (above) instead of stopping.
    solver : as :class:`WassersteinDA`, default "scf"
        The solver of each WDA step.
    start : "pca" or array (n_features, p), default "pca"
        The first subspace, where the first k-means runs: the top principal directions, or
        the orthonormal basis nearest to the array.
    tol, max_iter, solver_params : as :class:`WassersteinDA`, for each WDA step
    random_state : int, RandomState, Generator or None, default 0
        Seeds k-means and the mini-batches.
    eps : deprecated
        The former name of ``ridge``; warns, removed in the next release.

    verbose : int, default 0
        0: silent; 1 or more: a progress line per solver iteration on standard output
        (:mod:`ldr.estimators.progress`).

    Attributes
    ----------
    M_, components_, map_, n_components_, mean_ : see :class:`~ldr.estimators.LinearDR`
        (``M_`` with scikit-learn's sign rule, each column's largest entry positive; ``P_``
        is ``M_``'s deprecated alias)
    labels_ : (n_samples,) the clusters
    result_ : ldr.Result
        The alternation's record: ``M`` (its subspace), ``n_iter`` (its rounds),
        ``converged`` (``converged_``), ``reason``, ``cost`` (that of the WDA step that gave
        ``M_`` on its clusters; NaN when ``M_`` is the start) and ``trace`` (``history_``).
    step_result_ : ldr.Result or None
        The WDA step that gave ``M_``; None when ``M_`` is the start.
    cost_, n_iter_ : ``result_``'s cost and rounds
    objective_ : None
        Each WDA step has its own objective, on that round's clusters.
    history_ : list of dict
        One row per round: ``ratio``, ``p_change``, ``smallest_cluster``,
        ``tiny_clusters``, ``reg``, ``reg_raised``, ``scf_converged``, ``null_directions``.
    n_outer_ : int
        The rounds run.
    converged_ : bool
    reg_ : float
        The last step's reg: ``reg`` unless raised.
    subspace_ : (n_features, k) or None
        The span of the data where its covariance is singular (the alternation runs on its
        coordinates); None otherwise.
    n_null_directions_ : int
        Of the step that gave ``M_`` (above; 0 normally).
    min_cluster_size_ : int
        n_min.
    stopped_at_ : int or None
        The round the guard stopped, else None.
    tiny_clusters_ : array of int
        ``labels_``' clusters below n_min.
    degenerate_ : bool or None
        Some of them are not clusters of k-means on the data (the warning); None where X
        was read over its chunks and the comparison, which needs X in memory, did not run.
    batch_size_ : int or None
        The last step's rows per class and batch; None: exact plans.

    Under scikit-learn's ``array_api_dispatch`` X of another namespace is fitted there, on
    its device: each round's projection, its k-means (:mod:`ldr.estimators.kmeans`: the same
    algorithm as scikit-learn's, written against the array API), the cluster scatters and
    the WDA step; only the labels (n integers), the d × p subspaces, d × d scatters and
    scalars cross to the host.  The fitted arrays, ``labels_`` and ``transform`` answer in
    X's namespace.

    References
    ----------
    H. Liu, Y. Cai, Y.-L. Chen and P. Li, "Ratio trace formulation of Wasserstein
    discriminant analysis", NeurIPS 2020 (Algorithm 2).  C. Ding and T. Li, "Adaptive
    dimension reduction using discriminant analysis and K-means clustering", ICML 2007.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # ClusterMixin declares none; transform keeps float32 as the base's does
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def __init__(self, n_components=None, *, n_clusters=3, reg="auto", sinkhorn_iter=10,
                 ridge=1e-8, batch_size="auto", n_batches=2, max_outer=20, outer_tol=1e-6,
                 min_cluster_size="auto", adapt_reg=True, solver="scf", start="pca", tol=None,
                 max_iter=1000, solver_params=None, verbose=0, random_state=0, eps="deprecated"):
        self.n_components = n_components
        self.n_clusters = n_clusters
        self.reg = reg
        self.sinkhorn_iter = sinkhorn_iter
        self.ridge = ridge
        self.batch_size = batch_size
        self.n_batches = n_batches
        self.max_outer = max_outer
        self.outer_tol = outer_tol
        self.min_cluster_size = min_cluster_size
        self.adapt_reg = adapt_reg
        self.solver = solver
        self.start = start
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.eps = eps

    _computes_in_namespace = True

    def _requires_y(self) -> bool:
        return False

    def _reads_chunks(self) -> bool:
        """A Dask array or memmap stays out of memory with mini-batches (``batch_size``
        "auto" or an integer): each round projects it and takes its cluster scatters over its
        chunks, and each WDA step gathers its batches' rows."""
        return self.batch_size is not None

    # --- the pipeline's hooks (ldr.estimators.base) -----------------------------------------
    def _prepare(self, data: FitData) -> None:
        """The WDA steps' parameters, the rows' moments (one pass: the mean and the PCA
        start) and, where the covariance is singular, the span of the data
        (``subspace_``).  A Dask array or memmap of at most n_clusters ·
        :data:`~ldr.estimators.wda_minibatch.EXACT_MAX_CLASS` rows, where every WDA step
        may take exact plans, is read into memory; beyond, some cluster is larger and each
        step takes mini-batches from the chunks."""
        data.params.update(sinkhorn_iter=self.sinkhorn_iter, ridge=self._ridge())
        k = self.n_clusters
        if data.lazy and isinstance(k, numbers.Integral) \
                and data.X.shape[0] <= k * EXACT_MAX_CLASS:
            data.X = check_data(take_rows(data.X, np.arange(data.X.shape[0])), "X")
            data.lazy = False
        self.subspace_ = reduce_rows(data, 0.0, None, rows=True)
        data.mean = np.asarray(data.stats.mean, dtype=float)

    def _natural_n_components(self, n_features: int) -> int | None:
        """``n_components=None``: n_clusters − 1 (at most n_features − 1), the directions k
        cluster means span — as LDA's C − 1 and Ding and Li's LDA-k-means alternation."""
        k = self.n_clusters
        if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 2:
            return int(min(k - 1, n_features - 1))
        return None  # n_clusters is refused next (_n_components)

    def _n_components(self, data: FitData) -> int:
        """p (above), then ``n_clusters`` checked: an integer in [2, n_samples)."""
        r = super()._n_components(data)
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) \
                or not 2 <= k < data.X.shape[0]:
            raise ParameterError("n_clusters", f"must be an integer in [2, n_samples), "
                                 f"got {k!r}")
        return r

    def _fit_point(self, data: FitData, r: int) -> tuple:
        """The alternation (:func:`~ldr.estimators.wda_alternation.alternate`) from
        ``start``; its record is the Result."""
        began = time.perf_counter()
        n_min = self.min_cluster_size_ = min_cluster_size(
            self.min_cluster_size, data.X.shape[0], self.n_clusters, r)
        def solve_step(X, labels, q, reg, start):
            return self._wda_step(X, labels, q, reg, start, data.params)

        # data.X's mean (in the span's coordinates where the fit reduced to it)
        data.derived["shift"] = data.mean if data.basis is None else data.mean @ data.basis
        run = alternate(self, data.X, self._first_subspace(data, r), n_min, solve_step,
                        data.derived["shift"])
        # scikit-learn's sign rule (on the original features), as WassersteinDA's M_: every
        # namespace gives the same matrix
        U = data.basis
        run["P"] = sign_rule(run["P"]) if U is None else U.T @ sign_rule(U @ run["P"])
        data.derived["run"] = run
        return None, alternation_result(run, self.outer_tol, time.perf_counter() - began)

    def _wda_step(self, X, labels, q: int, reg: float, start, params: dict) -> Result:
        """WDA-SCF on the clusters ``labels`` of the rows X from ``start`` (the objective's
        keywords ``params``, mini-batches as ``batch_size`` decides for these clusters:
        ``batch_size_``)."""
        batch = batch_options(self.batch_size, self.n_batches, self.random_state, labels)
        self.batch_size_ = batch.get("batch_size")
        return self._solve_from(WDA(X, labels, q, reg=reg, **params, **batch), start)

    def _first_subspace(self, data: FitData, r: int) -> np.ndarray:
        """``start``: the top principal directions ("pca") or the orthonormal basis nearest
        to an array (in the coordinates of the span when the fit reduced to it)."""
        if isinstance(self.start, str):
            if self.start != "pca":
                raise ParameterError("start", f"expected 'pca' or an array, got {self.start!r}")
            C = data.stats.covariance()  # the top principal directions, from the moments
            if data.basis is not None:
                C = data.basis.T @ C @ data.basis
            return np.linalg.eigh(C)[1][:, ::-1][:, :r]
        P = start_matrix(self.start, (self.n_features_in_, r))
        P = P if data.basis is None else data.basis.T @ P
        return Grassmann(*P.shape).validate_point(P, "start", orthonormalize=True)

    def _finish(self, data: FitData, obj, result: Result):
        """``labels_`` (k-means in the subspace), the alternation's record and its warnings:
        the guard's stop, max_outer without convergence, a degenerate partition."""
        run = data.derived["run"]
        n_min = self.min_cluster_size_
        P = run["P"]
        self.step_result_ = run["result"]
        self.n_null_directions_ = run["null"]
        self.labels_ = final_labels(projected(data.X, data.derived["shift"], P), run["labels"],
                                    self.n_clusters, self.random_state, n_min)
        self.history_ = run["history"]
        self.n_outer_ = run["rounds"]
        self.stopped_at_ = run["stopped"]
        self.reg_ = run["reg"]
        self.converged_ = result.converged
        if self.stopped_at_ is not None:
            warn_stopped(self, run, n_min)
        else:
            warn_unconverged(self, run)
        self.tiny_clusters_, self.degenerate_ = warn_tiny(
            self, self.labels_, None if data.lazy else data.X, n_min)
        return P

    def _affine_map(self, data: FitData, obj, M) -> AffineMap:
        """``transform(X) = (X − mean_) M_``."""
        A = M if data.basis is None else data.basis @ M
        return AffineMap(np.asarray(data.mean, dtype=float), A)

