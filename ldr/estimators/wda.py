"""Wasserstein discriminant analysis as scikit-learn estimators.

:class:`WassersteinDA` fits :class:`ldr.objectives.WDA` with the SCF iteration on its
ratio-trace pencil (Liu et al., Algorithm 1) or any other solver on its trace-ratio cost.
The ratio-trace problem has several fixed points, some holding a signal and a noise
direction, and which one SCF reaches depends on the start.  The regularized-FDA start alone
(the previous default) reached such a poor fixed point — 10-NN accuracy ≈ 0.62 instead of
0.98 — on 41 of 120 problems (40 draws of POT's example data × reg 0.1, 1, 5): FDA sees
only class means, which coincide there.  The whole-space pencil (``WDA.whole_space_pencil``:
transport plans in the original metric) did so on 2 of the 120 (reg 0.1), and SCF then
crawled for hundreds of iterations.  The default, ``start="auto"``, is continuation in reg
(``WDA.pencil0``, SCF's own start: the fixed point of the problem with 10 × reg, reached from
the whole-space pencil), which reached the discriminative fixed point on all 120, and faster.
On ``benchmarks/bench_wda_defaults.py``'s 60 further problems (never used to choose it) its
10-NN accuracy is ≥ 0.95 on 59 — 0.948 on the 60th (reg 5), where every start reaches the
same ratio-trace fixed point — at 0.19–0.98× the FDA start's median time (two runs).
``start="best"`` runs SCF from the continuation, whole-space and FDA starts and ``n_starts``
seeded random starts and keeps the answer with the larger ratio trace.
A trace-ratio solver (``solver="trust-region"`` or ``"gradient"``) runs after SCF from each
start (the chain SCF → solver): from a random or FDA start it can end at a local maximum of
the trace ratio far below the best one.

:class:`WDAClustering` is the paper's Algorithm 2: alternate k-means in the projected space
and WDA-SCF on the resulting labels until the subspace stops moving.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.decomposition import PCA as SkPCA
from sklearn.utils.validation import check_is_fitted

from ldr.data import arrays
from ldr.data.rows import map_rows
from ldr.data.validation import check_labels, is_lazy, refuse_lazy, span_basis
from ldr.driver import initial_point, solve
from ldr.eigen import top_generalized
from ldr.errors import ParameterError
from ldr.estimators._base import (
    FLOAT_DTYPES,
    OutputMixin,
    as_output,
    cast_fitted,
    check_n_components,
    converged_alternation,
    deprecated_attribute,
    output_dtype,
    preserve_float32,
    reraise_interrupt,
    seed_of,
    sign_rule,
    solver_options,
    warn_if_unconverged,
)
from ldr.estimators._namespace import (
    answer_in,
    namespace_of,
    on_host,
    project_in,
    to_namespace,
    to_numpy,
)
from ldr.estimators._output import validate_data
from ldr.estimators.span import check_span_components
from ldr.estimators._wda_batch import (  # noqa: F401  (constants re-exported)
    AUTO_BATCH,
    BATCH_STOP,
    BATCH_XTOL,
    EXACT_MAX_CLASS,
    batch_stop,
    batching,
    continuation_start,
)
from ldr.estimators._wda_cluster import (
    alternate,
    final_labels,
    min_cluster_size,
    warn_stopped,
    warn_tiny,
)
from ldr.estimators._wda_steps import (
    _class_scatters,
    _full_data_check,
    _host_mean,
    _start_array,
    _validate_in,
)
from ldr.manifolds import Geometry
from ldr.objectives.wda import WDA
from ldr.problem import Problem
from ldr.solvers.scf import SCF


class _WDABase(OutputMixin, TransformerMixin, BaseEstimator):
    P_ = deprecated_attribute("M_", "P_")

    @property
    def _solver_defaults(self) -> dict:
        """SCF converges on its fixed-point residual, xtol 1e-6; on a mini-batch objective
        :data:`~ldr.estimators._wda_batch.BATCH_STOP` unless solver_params sets a rule."""
        return batch_stop(self) if getattr(self, "batch_size_", None) else {"xtol": 1e-6}

    def _validate_X(self, X, y=None):
        """``validate_data`` keeping float32: (X as float64, y, the output dtype)."""
        refuse_lazy(X, "X", type(self).__name__, pairwise=True)
        X, y = to_numpy(X), to_numpy(y)  # a tensor under array_api_dispatch too (WDAClustering)
        if y is None:
            X = validate_data(self, X, dtype=FLOAT_DTYPES, ensure_min_samples=2)
        else:
            X, y = validate_data(self, X, y, dtype=FLOAT_DTYPES, ensure_min_samples=2)
        self.n_components_ = check_n_components(self.n_components, X.shape[1],
                                                self._natural_n_components(X.shape[1]))
        return np.asarray(X, dtype=np.float64), y, output_dtype(X)

    def _natural_n_components(self, n_features: int) -> int | None:
        """``n_components=None``: n_features − 1 (None here), unless overridden."""
        return None

    def _span(self, X, y=None):
        """The subspace to fit in when the within-class scatter is singular (``subspace_``;
        None when it is not): the span of the data — directions without any variance
        dropped — and, if S_w is still singular there (along some directions every class is
        a single point and the WDA ratio is unbounded: fewer samples than features), the top
        m principal directions of the data, m = the rank of S_w (Fisherfaces' PCA to
        n − n_classes dimensions; where S_w is still singular on them, the span of S_w).
        Without labels (clustering) only the span of the data."""
        if y is None:
            Xc = X - X.mean(axis=0)
            U = span_basis(Xc.T @ Xc / len(X), "X")
        else:
            classes, codes = check_labels(y, X.shape[0], "y")
            Sw, Sb = _class_scatters(X, codes, len(classes))  # X's namespace: on its device
            if span_basis(Sw) is None:
                return None
            U = span_basis(Sw + Sb, "X")
            U = np.eye(X.shape[1]) if U is None else U
            V = span_basis(U.T @ Sw @ U)
            if V is not None:
                _, P = np.linalg.eigh(U.T @ (Sw + Sb) @ U)
                P = P[:, ::-1][:, :V.shape[1]]          # the top m principal directions
                U = U @ (P if span_basis(P.T @ U.T @ Sw @ U @ P) is None else V)
        if U is not None:
            self.n_components_ = check_span_components(
                self.n_components, U.shape[1], X.shape[1],
                self._natural_n_components(X.shape[1]))
        return U

    def _objective(self, X, y, normalize_at=None):
        return WDA(X, y, self.n_components_, reg=self.reg, sinkhorn_iter=self.sinkhorn_iter,
                   eps=self.eps, normalize_at=normalize_at, **self._batching(y))

    def _batching(self, y) -> dict:
        """The objective's mini-batch keywords (:func:`ldr.estimators._wda_batch.batching`)."""
        return batching(self, y)

    def _solve(self, obj, M0):
        res = solve(obj, self.solver, M0, **solver_options(self))
        reraise_interrupt(res)
        return res

    def transform(self, X):
        """Project the centered data: ``(X − mean_) M_`` (in float64; float32 for float32 X)."""
        check_is_fitted(self, "M_")
        if is_lazy(X):  # lazy, block by block
            return map_rows(X, self.transform, self.n_features_in_, self.M_.shape[1])
        space = namespace_of(X, fitted=self) if self._array_api_support else None
        if space is not None:  # in X's namespace, on its device (ldr.estimators._namespace)
            return project_in(self, X, *space)
        X = validate_data(self, to_numpy(X), reset=False, dtype=FLOAT_DTYPES)
        return as_output((np.asarray(X, dtype=np.float64) - self.mean_) @ self.M_,
                         output_dtype(X))

    #: answers in the input's array namespace under array_api_dispatch (WassersteinDA fits
    #: there, WDAClustering on the host: ldr.estimators._namespace)
    _array_api_support = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = self._array_api_support
        return tags

    def _scale(self, Z, xp, device):  # project_in's hook (PCA whitens there): the identity
        return Z


class WassersteinDA(_WDABase):
    """Wasserstein discriminant analysis (ratio trace by SCF by default).

    Parameters
    ----------
    n_components : int or None, default None
        p, 1 <= p < n_features; None: the number of columns of an array ``start`` (POT's
        ``P0``), else n_features − 1, the natural maximum (at p = n_features the trace ratio
        is a constant).
    reg : entropic regularization > 0, as POT's ``reg`` (K = exp(−M/reg))
    solver : "scf" (default), "trust-region" (trace-ratio cost), a Solver or a chain
    start : {"auto", "continuation", "whole-space", "fda", "best"} or array (n_features, p)
        "auto" (default) = "continuation" (SCF's own start, ``WDA.pencil0``); "whole-space"
        (the whole-space pencil's eigenvectors) or "fda" (regularized FDA): those starts;
        "best": all three plus ``n_starts`` seeded random starts, keeping the best answer
        (by the ratio trace for SCF, by the trace ratio for other solvers); an array: POT's
        ``P0``.  **Note:** the array need not have orthonormal columns — the start used is
        the orthonormal basis nearest to it (the polar factor UVᵀ of P0 = USVᵀ, which spans
        the same subspace, :func:`ldr.solve` with ``orthonormalize=True``); the cost depends
        on the span only, so this is the start the array means.  Linearly dependent columns
        are a ValueError.
    normalize : bool, default False
        POT's ``normalize`` (``ot.dr.wda(..., P0, normalize=True)``): each pair of classes'
        entropic regularization becomes reg × the mean squared distance between their
        samples projected by ``start`` (the array as given), fixed for the run
        (:class:`ldr.objectives.WDA`, ``normalize_at``).  Needs an array ``start`` (POT
        ignores ``normalize`` without ``P0``; here that is a ValueError).
    batch_size : "auto" (default), None or int >= 2
        None: exact plans between whole classes (products by row blocks past the memory
        budget, :class:`ldr.objectives.WDA`).  An integer: mini-batch OT (Fatras et al.
        2020; POT issue #665) — each pair of classes' plan is the mean of ``n_batches`` plans
        between random batches of that many rows per class, drawn once from ``random_state``
        per class (batch j of a class is the same in all its pairs, so C_b and C_w see the
        same rows), so SCF and every solver see one fixed smooth objective.  "auto": exact
        while the largest class has at most ``EXACT_MAX_CLASS`` = 3000 rows, else
        ``AUTO_BATCH`` = 500 rows per batch; SCF (and the coarse problem of its start) then
        stops at xtol 1e-3 or when the trace ratio moved by ≤ 0.1% over 5 iterations
        (``_wda_batch.BATCH_STOP``; solver_params' xtol/ftol replace it).  At 70 000 × 784
        (``benchmarks/results/bench_wda_scale.txt``) that is 69 s, 1.3 GB, 10-NN 0.27 —
        exact WDA on 5000 rows: 0.22 (batches drawn per pair, before: 0.11).  After a
        mini-batch fit ``full_data_`` holds the full-data trace ratio at the answer (up to
        8000 rows in the largest class) and ``result_.reason`` says that convergence refers
        to the mini-batch objective.
    n_batches : int, default 2
        Batches per class in mini-batch mode.
    scf_first : bool
        With a solver other than "scf", first take each start to SCF's fixed point (the chain
        ["scf", solver]); default True.
    n_starts, random_state : for ``start="best"`` (deterministic given random_state)
    sinkhorn_iter, eps : see :class:`ldr.objectives.WDA`
    tol, max_iter : the gradient tolerance (``gtol`` of :func:`ldr.solve`, for a trace-ratio
        solver; SCF computes no gradient) and the iteration budget per solver stage
    solver_params : dict, optional
        The other options of :func:`ldr.solve`; by default ``{"xtol": 1e-6}``, the
        subspace-change tolerance on which SCF's fixed-point iteration converges.  (Before
        ldr 0.2, ``tol`` was this tolerance.)

    **Singular S_w** (constant or collinear features, fewer samples than features): the
    objective (:class:`ldr.objectives.WDA`) refuses it, as its trace ratio is 0/0 or
    unbounded there; the estimator fits in a subspace (``subspace_``, d×k, orthonormal) and
    maps the answer back.  First the span of the data (directions without any variance
    dropped: nothing is lost); if S_w is still singular there — along some directions every
    class is a single point — the top n_samples − n_classes principal directions within it
    (Fisherfaces' PCA step; the span of S_w where even they leave S_w singular).  WDA has no
    shrinkage to fall back on; on seven tables with n < d (``benchmarks/bench_singular.py``,
    1-NN accuracy in the projection) the principal directions did better than the span of
    S_w — which drops exactly the directions where classes differ — on six, by up to 0.19.

    Attributes
    ----------
    M_ (n_features, p; ``P_`` is its deprecated alias), components_ (M_ᵀ), n_components_,
    mean_, result_, ratio_ (trace ratio at M_), n_iter_, pair_reg_ (each pair of classes'
    regularization, by class codes: ``reg`` unless ``normalize``); M_, components_ and mean_
    are float32 for float32 X (SCF and the Sinkhorn iterations run in float64);
    batch_size_ (None: exact plans, else rows per class and batch), full_data_ (None for an
    exact fit; else a dict: ``batch_ratio``, ``full_ratio``, ``relative_gap``, ``note``),
    subspace_ (n_features, k) or None: the subspace the fit ran in when S_w is singular
    (above; ``results_``, ``result_`` and ``pair_reg_`` are in its coordinates, ``M_`` is
    mapped back), None otherwise

    **Array API** (scikit-learn's ``array_api_dispatch``; :mod:`ldr.estimators._namespace`): a
    PyTorch tensor (CPU or GPU) or array-api-strict X is fitted in its namespace, on its device
    — plans, SCF, its starts and a trust-region polish; only the labels, d×d and d×p arrays
    reach the host — and ``M_``, ``components_``, ``mean_`` and ``transform`` answer there, as
    NumPy's to rounding (float64; float32 X: float32 answers).  ``M_`` takes scikit-learn's
    sign rule (each column's largest entry positive), so every namespace gives the same M_.

    Examples
    --------
    >>> import ldr
    >>> X, y = ldr.datasets.make_wda(300, seed=0)
    >>> est = WassersteinDA(n_components=2, reg=1.0).fit(X, y)
    >>> est.transform(X).shape
    (300, 2)
    """

    def __init__(self, n_components=None, *, reg=1.0, solver="scf", start="auto",
                 scf_first=True, n_starts=5, sinkhorn_iter=10, eps=1e-8, tol=1e-8,
                 max_iter=1000, solver_params=None, random_state=0, normalize=False,
                 batch_size="auto", n_batches=2):
        self.n_components, self.reg, self.solver, self.start = n_components, reg, solver, start
        self.scf_first, self.n_starts = scf_first, n_starts
        self.sinkhorn_iter, self.eps = sinkhorn_iter, eps
        self.tol, self.max_iter, self.random_state = tol, max_iter, random_state
        self.solver_params, self.normalize = solver_params, normalize
        self.batch_size, self.n_batches = batch_size, n_batches

    _array_api_support = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.array_api_support = self._array_api_support
        return tags

    def _natural_n_components(self, n_features: int) -> int | None:
        """``n_components=None`` with an array ``start``: its number of columns (POT's p is
        P0's); else n_features − 1."""
        start = self.start
        if not isinstance(start, str) and np.ndim(start) == 2:
            return int(np.shape(start)[1])
        return None

    def _starts(self, obj, U=None) -> list:
        problem = Problem(obj)
        P0 = _start_array(self.start, (self.n_features_in_, obj.shape[1]))
        if P0 is not None:  # orthonormalized by ldr.solve (orthonormalize=True)
            P0 = P0 if U is None else U.T @ P0  # the start's shadow in the span
            return [problem.manifold.validate_point(P0, "start", orthonormalize=True)]
        spectral = {
            "continuation": lambda: (initial_point(problem, None, solver=SCF()) if obj.exact
                                     else continuation_start(obj, batch_stop(self))),
            "whole-space": lambda: top_generalized(*obj.whole_space_pencil(),
                                                   obj.shape[1])[0],
            "fda": obj.heuristic}
        spectral["auto"] = spectral["continuation"]
        if self.start in spectral:
            return [spectral[self.start]()]
        if self.start != "best":
            raise ParameterError("start", f"expected 'auto', 'continuation', 'whole-space', 'fda', "
                             f"'best' or an array, got {self.start!r}")
        rng = np.random.default_rng(seed_of(self.random_state))
        return ([spectral[k]() for k in ("continuation", "whole-space", "fda")]
                + [problem.manifold.random_point(rng) for _ in range(self.n_starts)])

    def _solve(self, obj, M0):
        solver = self.solver
        if self.scf_first and solver != "scf" and isinstance(solver, str):
            solver = ["scf", solver]
        res = solve(obj, solver, M0, **solver_options(self))
        reraise_interrupt(res)
        return res

    def fit(self, X, y):
        if y is None:
            raise ParameterError("y", f"{type(self).__name__} requires y to be passed, but the "
                                      "target y is None: WDA separates labelled classes")
        space = namespace_of(X)  # array_api_dispatch: fit on X's device (ldr.estimators._namespace)
        X, y, dtype = self._validate_X(X, y) if space is None else _validate_in(self, X, y,
                                                                                 space[0])
        if not isinstance(self.normalize, (bool, np.bool_)):
            raise ParameterError("normalize", f"expected True or False, got {self.normalize!r}")
        normalize_at = None
        if self.normalize:
            normalize_at = _start_array(self.start, (X.shape[1], self.n_components_))
            if normalize_at is None:
                raise ValueError("normalize=True scales each pair's reg by the mean squared "
                                 "distance at the start matrix (POT's P0), but start is "
                                 f"{self.start!r}: pass start=<array of shape "
                                 f"({X.shape[1]}, {self.n_components_})> or normalize=False")
        U = self.subspace_ = self._span(X, y)
        if U is not None and normalize_at is not None:
            normalize_at = U.T @ normalize_at
        obj = self._objective(X if U is None else X @ arrays.like(U, X), y, normalize_at)
        results = [self._solve(obj, M0) for M0 in self._starts(obj, U)]
        # SCF solves the ratio trace: rank its answers by that; other solvers by the ratio
        score = obj.ratio_trace if self.solver == "scf" else obj.ratio
        best = max(results, key=lambda res: score(res.M))
        warn_if_unconverged(self, best, "raise max_iter or loosen tol", stacklevel=3)
        self.results_ = results
        M = arrays.to_host(best.M)  # d×p (and the mean: d) from X's device, if there
        # scikit-learn's sign rule: the same M_ whichever namespace's eigensolver SCF used
        self.result_, self.M_ = best, sign_rule(M if U is None else U @ M)
        self.components_ = self.M_.T
        self.mean_, self.classes_ = _host_mean(X), obj.classes_
        self.ratio_, self.n_iter_ = obj.ratio(best.M), best.n_iter
        self.pair_reg_ = obj.pair_reg
        self.full_data_ = _full_data_check(obj, best)
        cast_fitted(self, dtype)  # float32 in, float32 out (ldr.estimators._output)
        if space is not None:  # M_, components_, mean_, ... in X's namespace, on its device
            to_namespace(self, *space)
        return self


class WDAClustering(ClusterMixin, _WDABase):
    """Iterative WDA clustering (Liu et al., Algorithm 2).

    From P₀ (the top principal directions), repeat: k-means on XP → labels (after the first
    round started from the previous labels' centroids); P ← WDA-SCF on those labels from P;
    stop when sin θ(P_k, P_{k+1}) ≤ ``outer_tol`` or after ``max_outer``.  A k-means cluster
    of a single sample joins the nearest cluster for the WDA step, which needs two samples
    per class.  Where the within-cluster scatter is singular (k-means split along a direction
    in which every cluster is one point, such as a binary feature) those directions come
    first in P and WDA fits the rest on the range of the scatter (``n_null_directions_``).

    **Tiny clusters** (``ldr.estimators._wda_cluster``): a cluster is tiny below n_min =
    ``min_cluster_size`` samples, by default max(p + 1, ⌈0.03·n/k⌉), at most n/(2k): in the
    p-dimensional projection a cluster of at most p samples has a singular scatter, and 0.03
    of the mean cluster size was chosen on real tables (``MIN_CLUSTER_SHARE``).  WDA at a reg
    small against the projected distances favours directions that isolate a few samples
    (each cluster's entropic plan onto itself is nearly the identity, its cost nearly zero):
    on standardized digits (rare pixels 16–36 sd out) the next k-means put 1737 of 1797
    samples in one cluster; the trace ratio and k-means' cost cannot flag it (module
    docstring).  At the first round t ≥ 2 whose k-means labels have more tiny clusters than
    round t − 1's, with ``adapt_reg`` and reg < s, the within-cluster spread of round t − 1's
    clusters in the subspace k-means found them in (s = (2/n) Σ_c Σ_{i∈c} ‖Pᵀ(x_i − x̄_c)‖²,
    each cluster's cost onto itself under the uniform plan), reg becomes s (``reg_``) and
    that WDA step is made again; otherwise the guard stops the alternation and returns that
    subspace (``stopped_at_`` = t, ``converged_`` False, a ConvergenceWarning).  Digits:
    s = 26.3, converged in 19 rounds, ARI 0.416 (the guard's stop 0.471; reg 1 unguarded
    0.0003); no other bench_real table collapses, so none changes.
    ``labels_`` is k-means in ``M_`` (10 starts; from the alternation's last clusters where
    that has fewer tiny clusters); tiny clusters there (``tiny_clusters_``) raise a
    ConvergenceWarning and set ``degenerate_`` unless k-means on the data (full space, 10
    starts) makes each of them too, the same samples: the data's outliers (General Motors'
    1953 and 1954 on statsmodels' grunfeld at 11 clusters), not the alternation's doing.

    Parameters
    ----------
    n_components : int or None, default None
        p, 1 <= p < n_features; None: n_clusters − 1 (at most n_features − 1), the
        directions k cluster means span (LDA's C − 1; Ding & Li's LDA-k-means).  Before ldr
        0.3 None meant n_features − 1, as for :class:`WassersteinDA`: on digits (64
        features, 10 clusters) a fit took over 60 s.
    n_clusters : int ≥ 2, default 3
        Keyword-only (the first argument is ``n_components``, as in every estimator).
    start : "pca" (default: the top principal directions) or an array (n_features, p)
        The first subspace, where the first k-means runs.
    reg, solver, sinkhorn_iter, eps, tol, max_iter, solver_params : as WassersteinDA
    batch_size, n_batches : as WassersteinDA, for each WDA step on that round's clusters
        ("auto": exact plans while the largest cluster has at most 3000 rows, mini-batch OT
        beyond — exact plans at n = 10⁵ take hours, ``bench_pairwise_scale_clustering_1e5``)
    max_outer, outer_tol : the alternation's budget and tolerance
    min_cluster_size : "auto" (default) or int >= 1
        n_min above; 1 turns the guard and the warning off.
    adapt_reg : bool, default True
        On a collapse, raise reg to the within-cluster spread (above) instead of stopping.
    random_state : seeds k-means (deterministic given it)

    Attributes
    ----------
    M_ (n_features, p; ``P_`` is its deprecated alias), components_, labels_, mean_,
    result_ (the WDA step that gave M_; None when M_ is the start), history_ (per round:
    ratio, p_change, smallest_cluster, tiny_clusters, reg, reg_raised, ...), n_outer_,
    n_iter_, converged_, reg_ (the last step's: ``reg`` unless raised), subspace_ (the span
    of the data where its covariance is singular: the alternation runs on its coordinates;
    None otherwise), n_null_directions_ (of the step that gave M_, above; 0 normally),
    min_cluster_size_ (n_min), stopped_at_ (the round the guard stopped, else None),
    tiny_clusters_ (labels_' clusters below n_min), degenerate_ (some of them not clusters
    of k-means on the data: the warning), batch_size_ (the last step's: None for exact plans)
    """

    def __init__(self, n_components=None, *, n_clusters=3, reg=1.0, solver="scf",
                 start="pca", sinkhorn_iter=10, eps=1e-8, tol=1e-8, max_iter=1000,
                 solver_params=None, max_outer=20, outer_tol=1e-6, min_cluster_size="auto",
                 random_state=0, batch_size="auto", n_batches=2, adapt_reg=True):
        self.n_clusters, self.n_components, self.reg, self.solver = (
            n_clusters, n_components, reg, solver)
        self.min_cluster_size, self.adapt_reg = min_cluster_size, adapt_reg
        self.start, self.solver_params = start, solver_params
        self.sinkhorn_iter, self.eps, self.tol, self.max_iter = sinkhorn_iter, eps, tol, max_iter
        self.max_outer, self.outer_tol, self.random_state = max_outer, outer_tol, random_state
        self.batch_size, self.n_batches = batch_size, n_batches

    def __sklearn_tags__(self):
        return preserve_float32(super().__sklearn_tags__())

    def fit(self, X, y=None):
        space, X = on_host(X)  # array API input: fitted on the host (k-means), answers there
        X, _, dtype = self._validate_X(X)
        k = self.n_clusters
        if not (isinstance(k, numbers.Integral) and 2 <= k < X.shape[0]):
            raise ParameterError("n_clusters", f"must be an integer in [2, n_samples), got {k!r}")
        n_min = self.min_cluster_size_ = min_cluster_size(self.min_cluster_size, len(X), k,
                                                          self.n_components_)
        self.mean_ = X.mean(axis=0)
        U = self.subspace_ = self._span(X)  # constant or collinear features: their span
        Xs = X if U is None else X @ U
        run = alternate(self, Xs, self._first_subspace(X, U), n_min)
        self.n_null_directions_ = run["null"]
        self.M_ = run["P"] if U is None else U @ run["P"]
        self.components_, self.result_ = self.M_.T, run["result"]
        self.labels_ = final_labels((Xs - Xs.mean(axis=0)) @ run["P"], run["labels"], k,
                                    self.random_state, n_min)
        self.history_, self.n_outer_, self.n_iter_ = run["history"], run["rounds"], run["rounds"]
        self.stopped_at_, self.reg_ = run["stopped"], run["reg"]
        if self.stopped_at_:
            warn_stopped(self, run, n_min)
        self.converged_ = (converged_alternation(self, run["change"], "P")
                           if self.stopped_at_ is None else False)
        self.tiny_clusters_, self.degenerate_ = warn_tiny(self, self.labels_,
                                                          Xs - Xs.mean(axis=0), n_min)
        cast_fitted(self, dtype)  # float32 in, float32 out (ldr.estimators._output)
        return answer_in(self, space)

    def _natural_n_components(self, n_features: int) -> int | None:
        """``n_components=None``: n_clusters − 1 (at most n_features − 1), the directions k
        cluster means span — as LDA's C − 1 and the LDA-k-means alternation of Ding & Li
        (2007); n_features − 1 before ldr 0.3."""
        k = self.n_clusters
        if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 2:
            return int(min(k - 1, n_features - 1))
        return None

    def _first_subspace(self, X, U=None):
        """``start``: the top principal directions ("pca") or an orthonormalized array (in
        the coordinates of the span U when given)."""
        if isinstance(self.start, str):
            if self.start != "pca":
                raise ParameterError("start", f"expected 'pca' or an array, got {self.start!r}")
            P = SkPCA(self.n_components_).fit(X).components_.T
            return P if U is None else U.T @ P
        P = np.asarray(self.start, dtype=float)
        shape = (X.shape[1], self.n_components_)
        if P.shape != shape or not np.all(np.isfinite(P)):
            raise ParameterError("start", f"expected a finite array of shape {shape} "
                                 f"(n_features, n_components), got shape {P.shape}")
        P = P if U is None else U.T @ P
        return Geometry("grassmann", P.shape).validate_point(P, "start", orthonormalize=True)

    def fit_predict(self, X, y=None, **kwargs):
        return self.fit(X, **kwargs).labels_
