"""Distance metric learning estimators: :class:`NCA` and :class:`LargeMarginDML`.

Both learn a linear map L ∈ R^{r×d} (``components_``, scikit-learn's
``NeighborhoodComponentsAnalysis`` layout) and transform by ``X @ components_.T``; the
objectives are documented in :mod:`ldr.objectives.nca` and :mod:`ldr.objectives.lmnn`, their
units and start in :mod:`ldr.objectives.dml`, the default routes in
:mod:`ldr.solvers.routes`.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import take_rows
from ldr.data.validation import check_data, is_lazy
from ldr.driver import registry
from ldr.estimators.base import FitData, LinearDR, check_int_components, random_seed
from ldr.objectives.lmnn import LargeMarginDML as LargeMarginObjective
from ldr.objectives.nca import NCA as NCAObjective
from ldr.solvers import routes

__all__ = ["LargeMarginDML", "NCA"]

#: the names ``start`` takes (scikit-learn's ``init`` rule, and a random point)
STRING_STARTS = ("auto", "lda", "pca", "identity", "random")

#: samples beyond which ``solver=None`` takes the stochastic route: an exact evaluation of
#: either objective is n² pairs (4·10⁸ at 2·10⁴ samples, seconds on one core, and a fit takes
#: tens to hundreds of them), while an epoch of the stochastic route is O(n) pairs
STOCHASTIC_ABOVE = 20_000


class MetricLearner(LinearDR):
    """fit(X, y) → the objective's minimizer as ``components_`` (r×d, not orthonormal): what
    NCA and LargeMarginDML share."""

    #: Adam's epochs on the stochastic route: 20 passes over the samples, a budget of
    #: 20·n·(K + m) candidate pairs (``ldr.objectives.dml``, sample_batches)
    _max_epochs = 20
    #: the objective's parameters, each ``(new name, former name)`` (the former warns)
    _parameters: tuple[tuple[str, str | None], ...] = ()
    _pairwise_memory = True  # every evaluation forms n×n arrays
    #: rows of another namespace are fitted there (the strips, the sampled batches, the
    #: target neighbours and the solvers: ``objectives/nca.py``, ``objectives/lmnn.py``)
    _computes_in_namespace = True

    def _requires_y(self) -> bool:
        return True

    def _reads_chunks(self) -> bool:
        """A Dask array or memmap stays out of memory where the objective reads chunks and
        the fit takes the stochastic route (:meth:`_prepare`)."""
        return self._objective_class.reads_chunks and self.solver is None

    # --- the pipeline's hooks (ldr.estimators.base) -------------------------------------
    def _prepare(self, data: FitData) -> None:
        """The objective's parameters (their former names warn), the start checked, the
        labels checked as classes (a continuous y would make each sample a class).  A Dask
        array or memmap of at most ``stochastic_above`` rows, where the route is exact, is
        read into memory; beyond, the stochastic route reads it a chunk at a time."""
        above = self._stochastic_above()
        if data.lazy:
            data.y = np.asarray(data.y.compute()) if is_lazy(data.y) else np.asarray(data.y)
            if data.X.shape[0] <= above:   # unknown chunk sizes (NaN): the objective says so
                data.X = check_data(take_rows(data.X, np.arange(data.X.shape[0])), "X")
                data.lazy = False
        for new, old in self._parameters:
            data.params[new] = self._renamed(new, old)[0] if old else getattr(self, new)
        start = self._renamed("start", "init")[0]
        if isinstance(start, str) and start not in STRING_STARTS:
            raise ParameterError("start", f"expected one of {STRING_STARTS} or an array of "
                                 f"shape (n_components, n_features), got {start!r}")
        data.derived["start"] = start
        # "random" and arrays are starts, not heuristics: the objective builds "auto"'s
        data.params["start"] = start if isinstance(start, str) and start != "random" else "auto"
        check_classification_targets(data.y)

    def _stochastic_above(self) -> int:
        above = self.stochastic_above
        if isinstance(above, bool) or not isinstance(above, (int, np.integer)) or above < 1:
            raise ParameterError("stochastic_above", f"must be a positive integer (a number of "
                                 f"samples), got {above!r}")
        return int(above)

    def _n_components(self, data: FitData) -> int:
        d = data.n_features
        return check_int_components(d if self.n_components is None else self.n_components, d,
                                    "n_features")

    def _objective(self, data: FitData, r: int):
        """The objective, with its default route: the exact one at most ``stochastic_above``
        samples, else Adam on sampled batches then a bounded exact polish."""
        try:
            obj = registry.build(self._objective_class, data.X, data.y, r, **data.params)
        except ParameterError as exc:
            raise (exc.renamed("n_components") if exc.param == "r" else exc) from None
        self.stochastic_ = self.solver is None and obj.n_samples > self.stochastic_above
        if self.stochastic_:
            seed = int(np.random.default_rng(random_seed(self.random_state) or 0)
                       .integers(2**31))
            obj.sample_batches(seed=seed)
            obj.default_solver = routes.stochastic_then_polish(
                obj.n_samples, max_epochs=self._max_epochs, seed=seed)
        elif self.solver is None and (route := self._exact_route()) is not None:
            obj.default_solver = route
        return obj

    def _exact_route(self):
        """The default solver at most ``stochastic_above`` samples (None: the objective's)."""
        return None

    def _start(self, obj, data: FitData):
        start = data.derived["start"]
        if isinstance(start, str):
            return "random" if start == "random" else "heuristic"
        L = np.asarray(arrays.to_host(start), dtype=float)
        if L.ndim != 2 or L.shape != (obj.r, obj.shape[0]) or not np.all(np.isfinite(L)):
            raise ParameterError("start", f"an array must be finite with shape (n_components, "
                                 f"n_features) = {(obj.r, obj.shape[0])} (scikit-learn's "
                                 f"components_ layout), got shape {L.shape}")
        return obj.point(L)

    def _warm_point(self, obj):
        # the previous map L on the new data's scale (M = c·Lᵀ with c the data's RMS scale)
        L = np.asarray(arrays.to_host(self.components_), dtype=float)
        return obj.point(L) if L.shape == (obj.r, obj.shape[0]) else L.T  # .T: refused

    def _finish(self, data: FitData, obj, result):
        self.classes_ = obj.classes_
        obj.release_batches()
        return result.M

    def _components(self, data: FitData, obj, M):
        return obj.components(M)


class NCA(MetricLearner):
    """Neighbourhood components analysis (Goldberger et al. 2004) on R^{d×r}.

    Maximizes the expected number of leave-one-out 1-NN successes under a stochastic
    neighbour rule (Goldberger et al. 2004, Eqs. 1–3),

        p_ij = exp(−‖L(x_i − x_j)‖²) / Σ_{k≠i} exp(−‖L(x_i − x_k)‖²),   p_ii = 0,
        f(L) = Σ_i p_i,   p_i = Σ_{j: y_j = y_i} p_ij,

    over L ∈ R^{r×d} (:class:`ldr.objectives.NCA`): scikit-learn's
    ``NeighborhoodComponentsAnalysis`` objective, layout, start (``start="auto"``) and
    transform.

    **Default route** (``solver=None``).  L-BFGS with the strong Wolfe line search — the
    acceptance rule of scipy's L-BFGS-B, which scikit-learn runs — from scikit-learn's start,
    until the gradient rule holds (:func:`ldr.solvers.routes.exact_nca`).  The scale of L is
    the softmax's only temperature, and on separable data the supremum of f lies at
    ‖L‖ → ∞; along such a map's ray the gradient vanishes exponentially, so the gradient
    rule ends the climb there too, a few iterations after scikit-learn's relative-progress
    stop would (``solver_params={"ftol": 1e-5, "fwindow": 5}`` adds that stop, which counts
    as converged only where the gradient meets ``tol`` · scale as well).
    Past ``stochastic_above`` samples: Riemannian Adam on mini-batches whose softmax runs over
    sampled candidate sets, then a bounded exact L-BFGS polish
    (:func:`ldr.solvers.routes.stochastic_then_polish`); only an exact gradient certifies
    that route (the driver's full check after the Adam stage, then the polish's own).  Past
    10⁵ samples one exact evaluation (n² pairs) is beyond the route's check budget
    (:data:`ldr.solvers.routes.CHECK_PAIRS`): the answer is then returned unchecked, not
    converged, and ``result_.reason`` and the warning say so.

    **Rows out of memory.**  A Dask array or ``np.memmap`` of more than
    ``stochastic_above`` samples is fitted from its chunks by the stochastic route
    (:class:`ldr.objectives.candidates.ChunkCandidates`): one pass for the mean, the scale
    and the LDA start (from the class scatters), then one pass an epoch, each batch's terms
    from one chunk — its neighbours searched among that chunk's rows, its sampled columns
    drawn from a uniform pool of all rows; a smaller one is read into memory.  The client
    holds a chunk, the pool and the labels, never X.

    **Rows on a device.**  Under scikit-learn's ``array_api_dispatch`` a PyTorch tensor (on a
    GPU or not), a CuPy or an array-api-strict array is fitted wholly in its namespace: the
    softmax by strips of rows against all rows at every n (:class:`ldr.objectives.NCA`), the
    sampled batches' candidate rows, their neighbours in the embedding (exact, by strips,
    :func:`ldr.objectives.neighbors.strip_search`) and the solvers' iterates there; only the
    labels, the d×d class scatters (the start: scikit-learn's ``"auto"`` rule from them, its
    maps up to the signs of their rows), each batch's indices, neighbour lists and column
    weights, and the scalars the stopping rules read cross to the host.  The candidates'
    neighbours are then found by brute force, O(n²·r) at each refresh (NumPy rows take
    scipy's k-d tree in the embedding's r dimensions).

    Parameters
    ----------
    n_components : int or None, default None
        r, 1 <= r <= n_features; None: n_features (a full-rank metric), as scikit-learn.
    start : {"auto", "lda", "pca", "identity", "random"} or array (n_components, n_features)
        The start: scikit-learn's ``init`` rule and names
        (:meth:`ldr.objectives.NCA.heuristic`): ``"auto"`` takes PCA and the identity in
        units of the data's scale (the start of c·X is the start of X), the names asked for
        are scikit-learn's maps (``"identity"``: ``transform(X)`` is X before any
        iteration); a random point seeded by ``random_state``; or a map L in
        scikit-learn's ``components_`` layout.
    solver : str, Solver, list of them or None, default None
        Any solver or chain :func:`ldr.solve` accepts; None: the default route (above).
    tol : float, default 1e-6
        The gradient tolerance, relative to the problem's gradient scale.
    max_iter : int, default 1000
        The iterations of the whole fit (:class:`~ldr.estimators.LinearDR`).
    solver_params : dict, optional
        The other options of :func:`ldr.solve` (``ftol``, ``fwindow``, ``xtol``, ``max_time``,
        ...).
    random_state : int, RandomState or None, default 0
        Seeds ``start="random"`` and the stochastic route's batches.
    warm_start : bool, default False
        As scikit-learn's: when fitted before, the next ``fit`` starts from the learned map
        ``components_`` (``start`` ignored) and continues ``result_``'s trace.
    stochastic_above : int, default 20000
        With ``solver=None``, more samples than this take the stochastic route; an explicit
        ``solver`` always runs as given.
    init : deprecated
        The former name of ``start`` (scikit-learn's); warns, removed in the next release.

    verbose : int, default 0
        0: silent; 1 or more: a progress line per solver iteration on standard output
        (:mod:`ldr.estimators.progress`).

    Attributes
    ----------
    components_ : (n_components, n_features)
        L, the learned map: ``transform(X) == X @ components_.T``.
    M_ : (n_features, n_components)
        ldr's point, ``c · components_.T`` with c the data's RMS scale (``objective_.unit_``).
    objective_value_ : float
        Σ_i p_i on the training data (scikit-learn's objective; −cost_: an estimate where the
        stochastic route's end was not checked).
    stochastic_ : bool
        Whether the fit took the stochastic route.
    map_, n_components_, cost_, n_iter_, result_, objective_, classes_, n_features_in_ :
        see :class:`~ldr.estimators.LinearDR`

    References
    ----------
    J. Goldberger, S. T. Roweis, G. E. Hinton, R. Salakhutdinov (2004), "Neighbourhood
    components analysis", NIPS 17, 513–520; J. Nocedal, S. J. Wright (2006), *Numerical
    Optimization*, 2nd ed., §3.1 (the Wolfe conditions), §7.2 (L-BFGS).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_iris(return_X_y=True)
    >>> pipe = make_pipeline(StandardScaler(), NCA(2), KNeighborsClassifier(3)).fit(X, y)
    >>> pipe[1].components_.shape, bool(pipe.score(X, y) > 0.95)
    ((2, 4), True)
    """

    _objective_class = NCAObjective

    def __init__(self, n_components=None, *, start="auto", solver=None, tol=1e-6,
                 max_iter=1000, solver_params=None, verbose=0, random_state=0, warm_start=False,
                 stochastic_above=STOCHASTIC_ABOVE, init="deprecated"):
        self.n_components = n_components
        self.start = start
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.stochastic_above = stochastic_above
        self.init = init

    def _exact_route(self):
        return routes.exact_nca()

    def _remedy(self, obj, res) -> str:
        """After a relative-progress stop (``solver_params``' ftol): Σ_i p_i ≤ n, and on
        (nearly) separable classes it nears n only as ‖L‖ → ∞."""
        if not res.reason.startswith("stalled: relative cost change"):
            return super()._remedy(obj, res)
        return (f"the relative-progress stop ended the climb (Σ p_i = {-res.cost:.6g} of at "
                f"most n = {obj.n_terms}) before the gradient met tol · scale; without ftol "
                "the climb goes on to the gradient rule")

    def _finish(self, data: FitData, obj, result):
        self.objective_value_ = -float(result.cost)
        return super()._finish(data, obj, result)


class LargeMarginDML(MetricLearner):
    """Large-margin distance metric learning (LMNN's objective; Weinberger & Saul 2009, the
    survey's Eq. 27) on R^{d×r}.

    Minimizes

        f(L) = Σ_i Σ_{j∈η(i)} ( ‖L(x_i − x_j)‖²
               + λ Σ_{ℓ: y_ℓ≠y_i} h(1 + ‖L(x_i − x_j)‖² − ‖L(x_i − x_ℓ)‖²) )

    with η(i) the ``n_neighbors`` target neighbours of x_i (its nearest classmates in the input
    space, fixed before the optimization), λ = ``impostor_weight`` and h the hinge [·]_+
    smoothed quadratically over a band of width δ = ``smoothing``
    (:class:`ldr.objectives.LargeMarginDML`).

    **Default route** (``solver=None``).  L-BFGS, then the trust region where L-BFGS ends
    without meeting the gradient rule (the objective's ``default_solver``): the cost has a
    minimizer, L-BFGS is the cheap climb towards it and the trust region's second-order
    steps certify it where L-BFGS stalls.  Past ``stochastic_above`` samples: Riemannian Adam
    on mini-batches whose impostors are sampled candidate sets (an unbiased estimate of each
    term), then a bounded exact L-BFGS polish
    (:func:`ldr.solvers.routes.stochastic_then_polish`); past 10⁵ samples its end is not
    checked by an exact evaluation (n² pairs, :data:`ldr.solvers.routes.CHECK_PAIRS`) and is
    reported not converged, saying so.

    **Rows out of memory.**  A Dask array or ``np.memmap`` of more than
    ``stochastic_above`` samples is fitted from its chunks as :class:`NCA`'s are; the target
    neighbours are searched in one more pass, each row's among its chunk's classmates
    (:func:`ldr.objectives.lmnn.chunk_targets`), and their recall against the exact search
    over all rows is measured in that pass (``target_recall_``, ``approximation_``).  Smaller
    chunks make nearer targets rarer: the recall is about a chunk's share of a class's rows.
    The client holds a chunk, the pool, the labels and the n×k targets.

    **Rows on a device.**  As :class:`NCA`'s: the target neighbours searched class by class
    on the device (exact: ``"approximate"`` is refused there), the impostor strips, the
    sampled batches and the solvers in the input's namespace.

    Parameters
    ----------
    n_components : int or None, default None
        r, 1 <= r <= n_features; None: n_features.
    n_neighbors : int, default 3
        Target neighbours per sample (scikit-learn's name for the k of k-NN).
    impostor_weight : float > 0, default 1
        λ, the weight of the margin (impostor) term.
    smoothing : float > 0, default 0.5
        δ, the width of the hinge's quadratic smoothing (the margin is 1).
    neighbors : {"auto", "exact", "approximate"}, default "auto"
        The target neighbours' search, class by class: "auto" is exact while the exact
        search's pairs Σ_c n_c² are at most 10¹⁰ (as one set of 10⁵ rows) and NN-descent
        beyond, seeded by ``random_state``, its recall measured
        (:class:`ldr.objectives.LargeMarginDML`).  Rows read a chunk at a time take the rule
        within each chunk; "exact" (over all rows) needs them in memory.  Rows of another
        namespace are searched exactly on their device at any n ("approximate" is refused).
    tol : float, default 1e-6
        The gradient tolerance, relative to the problem's gradient scale.
    start, solver, max_iter, solver_params, verbose, random_state, warm_start,
    stochastic_above, init :
        As :class:`NCA` (the same start rule; ``solver_params`` without defaults: the cost
        has a minimizer and the fit converges by the gradient rule).
    k : deprecated
        The former name of ``n_neighbors``; warns, removed in the next release.
    lam : deprecated
        The former name of ``impostor_weight``; warns, removed in the next release.

    Attributes
    ----------
    components_ : (n_components, n_features)
        L: ``transform(X) == X @ components_.T``.
    M_, n_components_, cost_, n_iter_, result_, objective_, classes_, n_features_in_,
    stochastic_ :
        see :class:`NCA`
    target_recall_ : float or None
        With approximate target neighbours, the share of the exact ones found (measured on a
        sample of each class's rows, weighted by class size); None for exact search.
    approximation_ : str or None
        None for exact target neighbours; else a sentence naming the approximation and its
        recall.

    References
    ----------
    K. Q. Weinberger, L. K. Saul (2009), "Distance metric learning for large margin nearest
    neighbor classification", JMLR 10, 207–244; J. P. Cunningham, Z. Ghahramani (2015),
    "Linear dimensionality reduction: survey, insights, and generalizations", JMLR 16,
    2859–2900, Eq. 27.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> pipe = make_pipeline(StandardScaler(), LargeMarginDML(2), KNeighborsClassifier(3))
    >>> bool(pipe.fit(X, y).score(X, y) > 0.95)
    True
    """

    _objective_class = LargeMarginObjective
    #: an epoch costs about twice NCA's (each sampled impostor enters n_neighbors target
    #: slots): 10 epochs are the work of NCA's 20
    _max_epochs = 10
    _parameters = (("n_neighbors", "k"), ("impostor_weight", "lam"), ("smoothing", None),
                   ("neighbors", None))

    def __init__(self, n_components=None, *, n_neighbors=3, impostor_weight=1.0,
                 smoothing=0.5, neighbors="auto", start="auto", solver=None, tol=1e-6,
                 max_iter=1000, solver_params=None, verbose=0, random_state=0,
                 warm_start=False, stochastic_above=STOCHASTIC_ABOVE, k="deprecated",
                 lam="deprecated", init="deprecated"):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.impostor_weight = impostor_weight
        self.smoothing = smoothing
        self.neighbors = neighbors
        self.start = start
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.solver_params = solver_params
        self.verbose = verbose
        self.random_state = random_state
        self.warm_start = warm_start
        self.stochastic_above = stochastic_above
        self.k = k
        self.lam = lam
        self.init = init

    def _prepare(self, data: FitData) -> None:
        super()._prepare(data)
        data.params["random_state"] = random_seed(self.random_state)

    def _finish(self, data: FitData, obj, result):
        self.target_recall_ = obj.target_recall_
        self.approximation_ = None
        if obj.target_recall_ is not None:
            self.approximation_ = (
                f"approximate target neighbours ({obj.n_neighbors} per sample, "
                f"{obj.target_search_}): they hold {obj.target_recall_:.1%} of the exact "
                f"ones, measured on a sample of rows")
        return super()._finish(data, obj, result)
