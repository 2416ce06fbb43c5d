"""Distance metric learning estimators: :class:`NCA` and :class:`LargeMarginDML`.

Both learn a linear map L ∈ R^{r×d} (``components_``, scikit-learn's
``NeighborhoodComponentsAnalysis`` layout) and transform by ``X @ components_.T``; the
objectives, their units and their start are documented in :mod:`ldr.objectives.dml`.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from ldr.data.validation import is_lazy, refuse_lazy
from ldr.driver import solve
from ldr.errors import ParameterError
from ldr.estimators._base import (
    FitData,
    LinearDR,
    check_int_components,
    solver_options,
    warn_if_unconverged,
)
from ldr.estimators._dml_solvers import _Annealed, _Onward, _Polish, _Ray, _Rescue, _Route, _Settle
from ldr.estimators._namespace import to_numpy
from ldr.objectives.dml import NCA as NCAObjective
from ldr.objectives.dml import LargeMarginDML as LargeMarginObjective
from ldr.result import Result, Trace, summed_counts
from ldr.solvers import LBFGS, Adam

__all__ = ["LargeMarginDML", "NCA"]

_STRING_STARTS = ("auto", "lda", "pca", "identity", "random")

#: the stochastic route past ``stochastic_above`` samples (the class docstrings): mini-batch,
#: candidate set (K neighbours in the embedding + m sampled columns, objectives/_candidates.py),
#: sampled start, epochs
STOCHASTIC = {"batch_size": 256, "neighbours": 32, "sample": 512, "start_terms": 4096,
              "max_epochs": 20, "decay": 1.0}
#: samples beyond which ``solver=None`` takes that route
STOCHASTIC_ABOVE = 20_000
#: NCA's default solver (``solver=None``, at most ``stochastic_above`` samples): L-BFGS whose
#: steps are at most NCA_MAX_STEP · ‖M‖ long, so that the map's scale grows by at most 3% an
#: iteration.  NCA's softmax has no temperature but that scale: a run that lets it grow fast
#: (L-BFGS's own cap, 0.25) freezes the neighbour structure early and stops near the
#: leave-one-out 1-NN count of a poor map (anes96/PID: 401 against scikit-learn's 411.3).
#: Chosen on the development tables (benchmarks/bench_dml.py; max_step 0.02, 0.03, 0.05, 0.1:
#: the largest smallest margin over scikit-learn's objective), checked on the others
NCA_MAX_STEP = 0.03
#: ... and once the leave-one-out 1-NN hits of the embedding (which sample's nearest other
#: sample is of its class) have not changed for NCA_QUIET steps in a row, the cap doubles with
#: every further such step (back to NCA_MAX_STEP at the first step that changes them)
NCA_QUIET = 5
#: ... where a step counts as leaving them unchanged ("calm") when it changes the hits of at
#: most NCA_CALM_SHARE · n samples (none below 100 samples; the saturation stop below still
#: needs steps that change none).  Chosen on the development tables (0.01, 0.02, 0.05: all at
#: or above scikit-learn's objective there, 0.05 and 0.02 with the fewest iterations); the
#: held-out tables rejected 0.05 (spector, modechoice, anes96/vote below it) and 0.02
#: (anes96/vote); docs/real_data.rst, "third change"
NCA_CALM_SHARE = 0.01
#: the saturation stop: after 2 · NCA_QUIET steps that change no hit (the structure
#: has survived NCA_QUIET steps of the growing cap) — or at once where every sample is a hit
#: (Σ_i p_i → n, its global supremum, along the ray) — once the soft count is that close to a
#: count of decided samples, Σ_i min(p_i, 1 − p_i) ≤ NCA_SATURATED, the run scales the map up
#: along its ray (×2 while Σ_i p_i rises) and stops (``_Annealed``)
NCA_SATURATED = 0.5
#: where the annealing L-BFGS stops on the plateau rule above 1e3 · tol · scale (not a
#: critical point: benchmark tables with many duplicate rows of different classes, randhie
#: and fair), the trust region goes on for at most this much work (iterations plus
#: Hessian-vector products, each about one evaluation): randhie/health's plateau stop
#: (gradient norm 0.62 against 0.045) converges in 7 iterations and 33 products, +9 s on 25 s
NCA_RESCUE_WORK = 40
#: ... then, after the limit along the ray (``_Ray``), L-BFGS past the plateau rule's stall
#: for at most this many iterations (``_Settle``; fair/rate_marriage at full rank: 8)
NCA_SETTLE_STEPS = 100
#: NCA's exact default runs scikit-learn's optimizer first (``_Route``: scipy's L-BFGS-B,
#: scikit-learn's tol 1e-5) and then the annealing, both from the start, and keeps the better
NCA_ROUTE_TOL = 1e-5
#: ... and where the driver does not count the route's end converged (scipy stops on one
#: iteration's relative reduction), L-BFGS goes on from there, with the annealing's step cap,
#: for at most this many iterations (``_Onward``): the route's end was not converged on 17
#: of 28 runs (14 tables, r = 2 and full rank), and 10 of them converge within it
#: (``benchmarks/results/nca_onward_probe.txt``).  Both routes then end with a last rescue
#: stage, ``_Ray``: the map doubled while Σ_i p_i rises, kept where its gradient norm is
#: lower too (the NCA docstring, "The limit along the ray")
NCA_ONWARD_STEPS = 50
#: the exact L-BFGS polish after the stochastic stage gets POLISH_PAIRS / n² iterations (an
#: exact evaluation is n² pairs, ~2.6e-8 s each on one core): 40 at n = 10⁴, none at 10⁵
POLISH_PAIRS = 4e9


class _MetricLearner(LinearDR):
    """fit(X, y) → the objective's minimizer as ``components_`` (r×d, not orthonormal)."""

    #: epochs of the stochastic route (None: ``STOCHASTIC["max_epochs"]``)
    _max_epochs: int | None = None
    #: the exact route's L-BFGS step cap (None: the objective's default solver as it is)
    _max_step: float | None = None
    #: with a cap: the quiet steps after which it grows (_Annealed; 0: a fixed cap)
    _quiet: int = 0

    _pairwise_memory = True  # every evaluation forms n×n arrays

    def _start_spec(self):
        """``start``, or the deprecated ``init`` when it was given (with a FutureWarning)."""
        if isinstance(self.init, str) and self.init == "deprecated":
            return self.start
        warnings.warn(f"{type(self).__name__}(init=...) is deprecated since ldr 0.2 and will be "
                      "removed in the next release; pass start=... (the same values)",
                      FutureWarning, stacklevel=4)
        return self.init

    def _objective_spec(self):
        cls, params = super()._objective_spec()
        start = self.__dict__.get("_resolved_start", params.pop("start", None))
        params.pop("start", None)
        # "random" and arrays are starts, not heuristics: the objective builds "auto"'s
        params["init"] = start if isinstance(start, str) and start != "random" else "auto"
        return cls, params

    # --- the fit template's hooks (ldr.estimators._base) ------------------------------------
    def _prepare(self, X, y) -> FitData:
        for arr, name in ((X, "X"), (y, "y")):
            if is_lazy(arr):  # every evaluation forms n×n arrays: state the memory needed
                refuse_lazy(arr, name, type(self).__name__, pairwise=True)
        start = self._resolved_start = self._start_spec()
        if isinstance(start, str) and start not in _STRING_STARTS:
            raise ParameterError("start", f"expected one of {_STRING_STARTS} or an array of "
                                 f"shape (n_components, n_features), got {start!r}")
        data = super()._prepare(X, y)
        check_classification_targets(data.y)  # a continuous y would make each sample a class
        return data

    def _n_components(self, data: FitData) -> int:
        d = data.n_features
        return check_int_components(d if self.n_components is None else self.n_components, d,
                                    "n_features")

    def _start(self, obj):
        start = self._resolved_start
        if isinstance(start, str):
            return "random" if start == "random" else "heuristic"
        L = np.asarray(start, dtype=float)
        if L.ndim != 2 or L.shape != (obj.r, obj.shape[0]) or not np.all(np.isfinite(L)):
            raise ParameterError("start", f"an array must be finite with shape (n_components, "
                                 f"n_features) = {(obj.r, obj.shape[0])} (scikit-learn's "
                                 f"components_ layout), got shape {L.shape}")
        return obj.point(L)

    def _warm_point(self, obj):
        # the previous map L on the new data's scale (M = c·Lᵀ with c the data's RMS scale)
        L = np.asarray(to_numpy(self.components_), dtype=float)  # (a tensor: _namespace)
        return obj.point(L) if L.shape == (obj.r, obj.shape[0]) else L.T  # .T: refused

    def _make_objective(self, data: FitData, r: int):
        obj = super()._make_objective(data, r)
        above = self.stochastic_above
        if isinstance(above, bool) or not isinstance(above, (int, np.integer)) or above < 1:
            raise ParameterError("stochastic_above", f"must be a positive integer (a number of "
                                 f"samples), got {above!r}")
        self.stochastic_ = self.solver is None and obj.n_samples > above
        exact = self.solver is None and not self.stochastic_ and self._max_step is not None
        self._two_routes = exact and bool(self._quiet)   # the annealing: _solve adds the route
        if exact:
            obj.default_solver = (
                [_Annealed(obj.nearest_hits, obj.undecided, self._max_step, self._quiet,
                           NCA_SATURATED, NCA_CALM_SHARE), _Rescue(NCA_RESCUE_WORK),
                 _Ray(), _Settle(NCA_SETTLE_STEPS, self._max_step)]
                if self._two_routes else LBFGS(max_step=self._max_step))
        if self.stochastic_:   # the route of the class docstring: Adam on sampled batches
            seed = int(np.random.default_rng(self.random_state if isinstance(
                self.random_state, (int, np.integer)) else 0).integers(2**31))
            opts = STOCHASTIC
            obj.sample_batches(opts["sample"], opts["neighbours"], seed)
            steps = int(POLISH_PAIRS / float(obj.n_samples) ** 2)
            obj.default_solver = [Adam(batch_size=opts["batch_size"], random_state=seed,
                                       start_terms=opts["start_terms"],
                                       max_epochs=self._max_epochs or opts["max_epochs"],
                                       decay=opts["decay"])] + \
                ([_Polish(steps, self._max_step or 0.25)] if steps > 0 else [])
        return obj

    def _solve(self, obj, M0, warm):
        """NCA's exact default: two routes from the same start — scikit-learn's optimizer
        (``_Route``) and then the annealing chain — and the better end (the NCA docstring)."""
        if not self._two_routes or warm is not None:
            return super()._solve(obj, M0, warm)
        opts = solver_options(self)
        if isinstance(M0, str) and M0 == "heuristic":   # one start for both routes
            M0 = obj.heuristic()
        first = _Route(obj.unit_, NCA_ROUTE_TOL)
        route = solve(obj, [first, _Onward(NCA_ONWARD_STEPS, self._max_step), _Ray()],
                      start=M0, **opts)
        if route.interrupted:   # Ctrl-C in the first route: no second one
            warn_if_unconverged(self, route, "fit again to run both routes", stacklevel=5)
            return route
        rest = dict(opts)
        if rest.get("max_iter") is not None:   # a budget the user set bounds both routes
            rest["max_iter"] = max(int(rest["max_iter"]) - route.n_iter, 0)
        if "max_time" in rest:
            rest["max_time"] = max(float(rest["max_time"]) - route.time, 0.0)
        for stage in obj.default_solver:   # a converged route higher than the annealing's
            if isinstance(stage, _Settle):  # stall: no L-BFGS past it, which only certifies
                stage.rival = route.cost if route.converged else None
        annealed = solve(obj, None, M0, **rest)
        path = getattr(first, "path_", [])   # scipy's clocks, the last one at its stage's end
        if path:
            ended = [row["time"] for row in route.trace if row["stage"] == 0][-1]
            path = [(ended - (path[-1][0] - clock), cost) for clock, cost in path]
        res = _better_of(route, annealed, path)
        warn_if_unconverged(self, res, "raise max_iter (or max_time through solver_params), "
                            "or loosen tol", stacklevel=5)
        return res

    def _finalize(self, obj, M, data: FitData):
        self.classes_ = obj.classes_
        return M

    def _components(self, obj, M):
        return obj.components(M)

    def _linear_map(self):
        """``(0, Lᵀ)``: ``transform(X) == X @ components_.T``, computed in X's namespace under
        ``array_api_dispatch`` (:func:`ldr.estimators._namespace.transform_in`)."""
        return np.zeros(self.n_features_in_), self.components_.T

    def transform(self, X) -> np.ndarray:
        """``X @ components_.T`` (uncentered, as scikit-learn's NCA)."""
        return super().transform(X)


class NCA(_MetricLearner):
    """Neighbourhood components analysis (Goldberger et al. 2004) by manifold optimization.

    Maximizes scikit-learn's NCA objective Σ_i p_i (the expected number of leave-one-out 1-NN
    successes under the softmax of −‖L(x_i − x_j)‖²) over L ∈ R^{r×d}
    (:class:`ldr.objectives.NCA`).  Same objective, layout, start (``init="auto"``) and
    transform as ``sklearn.neighbors.NeighborhoodComponentsAnalysis``; the default solver is
    L-BFGS on R^{d×r} (:class:`ldr.solvers.LBFGS`) that anneals the softmax: each step at
    most 0.03 · ‖M‖ long while the neighbour structure changes (``NCA_MAX_STEP``; L-BFGS's
    own cap is 0.25), then a longer one, and a saturation stop — run after scikit-learn's
    own optimizer from the same start, the better end kept (**Two routes** below).

    **Why the small steps.**  The softmax's only temperature is the map's scale ‖L‖.  A run
    that lets it grow fast makes the p_ij saturate to 0 or 1 before the neighbour structure
    has settled, and then stops near the leave-one-out 1-NN count of that frozen map.
    Growing it by at most 3% an iteration ends higher: at r = 2 at or above scikit-learn's
    objective on the 12 tables of ``benchmarks/bench_dml.py`` (fair's two left out; the fixed
    cap and the default alike) and on ``make_classification`` draws of 3000 rows (four with
    the fixed cap, three more with the default), where the 0.25 cap was below it on three
    tables (anes96/PID 401 against 411.3) and on both draws it was run on.  It is not a
    guarantee: the objective has many local maxima and which one a run reaches depends on its
    path; on 24 stratified 150- and 250-row subsamples of anes96 and star98 the fixed 0.03
    cap ended below scikit-learn's on 4, the default (which anneals) on 5, those 4 and one
    more (star98, 250 rows: 189 against 193.3), the 0.25 cap on 11; at full rank
    (``n_components=None``) it ends below scikit-learn's on iris (148 against 149), star98
    (233 against 244), ccard (58 against 62) and digits (1778 against 1780), at or above it
    on the other 8 benchmark tables measured there (fair's two were not) — hence the second
    route below, whose end is kept on all four (on digits once L-BFGS went on from it).

    **Where it saves iterations.**  The fixed cap took 20–280 iterations on the benchmark
    tables, up to 4.5× the 0.25 cap's, most of them growing a scale whose neighbour
    structure had settled.  So the solver watches the leave-one-out 1-NN hits of the
    embedding (which samples' nearest other sample is of their class,
    :meth:`ldr.objectives.NCA.nearest_hits`): after ``NCA_QUIET`` = 5 *calm* steps in a
    row — steps that change the hits of at most 1% of the samples (``NCA_CALM_SHARE``;
    none below 100 samples) — the cap doubles with every further calm step, and it is back
    at 0.03 at the first step that changes more.  Counting the 1% as calm took 3–51% fewer
    iterations on 8 of the 12 benchmark tables at r = 2 (anes96/PID 146 against 163, where
    1–3 of 944 hits changed at nearly every step; modechoice 63 against 102; randhie 137
    against 279), as many on wine, spector and ccard (32 and 72 rows: 1% is less than one
    sample), 95 against 86 on star98, and kept the objective at or above scikit-learn's on
    all 12; 2% and 5% were faster still but ended below it on held-out tables.

    **When it stops.**  On data whose classes the map can separate, the supremum of Σ_i p_i
    (n, or the leave-one-out 1-NN count of some map) is approached only as ‖L‖ → ∞: there is
    no maximizer to converge to.  The run stops at the first of (1) the gradient rule,
    ‖grad‖ ≤ ``tol`` · scale (default 1e-6: as the p_ij saturate to 0 or 1 the gradient
    vanishes exponentially); (2) the saturation stop: the hits unchanged for 2 · ``NCA_QUIET``
    steps (none changed) — or every sample a hit, where Σ_i p_i → n along the ray is the
    global supremum (iris: 21 iterations instead of 29; wine 3 instead of 11) — and
    Σ_i min(p_i, 1 − p_i) ≤ ``NCA_SATURATED`` = 0.5 (every sample all but
    decided), when only the scale is left to grow — the map is scaled by the 2^k along its
    ray that maximizes Σ_i p_i (a few cost evaluations), which makes the gradient vanish, so
    ``result_.reason`` is then usually the gradient rule's (``result_.trace``'s last row
    has ``saturated``, the factor; with ``tol=0`` the reason is "saturated: …"); or (3) the
    plateau rule, the objective rising by less than a relative 1e-5 over the last 5
    iterations (``solver_params`` ``ftol=1e-5, fwindow=5``; about 1e-6 of a sample per
    iteration when Σ_i p_i ≈ n).  ``result_.reason`` says which and with what gradient norm;
    saturation and plateau stops count as converged only within 1e3 · tol · scale of a
    critical point, as every cost-change stop (:mod:`ldr.stopping`).  A plateau stop farther
    from one (seen on tables where many rows duplicate rows of another class: randhie,
    fair) is *stalled*, and the trust region goes on from there (a rescue stage, skipped
    after a converged L-BFGS run) for at most ``NCA_RESCUE_WORK`` = 40 iterations plus
    Hessian-vector products, under the same rules (randhie/health's full table converges in
    7 iterations and 33 products, +9 s on 25 s; on 8 stalled subsamples of 150–400 rows of
    randhie and fair, 1 did within the budget, 4 with ten times as much).

    **Two routes.**  Before the annealing, the fit runs scikit-learn's own optimizer from the
    same start — scipy's L-BFGS-B, tol 1e-5 (``NCA_ROUTE_TOL``), no iteration cap but
    ``max_iter`` — on ldr's evaluations, and returns the better end: a converged one before
    one that is not, then the higher Σ_i p_i (the annealing's on a tie).  scipy stops on one
    iteration's relative reduction; where the driver does not count that end converged (no
    plateau of ``fwindow`` iterations, or a gradient above 1e3 · tol · scale), L-BFGS goes on
    from it, with the annealing's step cap, for at most ``NCA_ONWARD_STEPS`` = 50 iterations
    (a rescue stage of the route: digits at full rank, scipy's end 1779.99 with gradient norm
    0.15 against 0.13, converges 14 iterations on at 1782.0).  ``result_`` is the
    kept run's Result (its stages and reason, which ends by naming the route kept and the
    other's cost), with both runs' iterations, time and trace (the route's rows first,
    ``stage`` −1, one per scipy iteration) and ``result_.routes``, the two Results.  The
    route reaches scikit-learn's value at 0.37–0.81 of scikit-learn's time on the benchmark
    tables (the same path until rounding makes the two part), so the fit passes it early;
    the annealing then usually ends higher (under ``warm_start`` only the annealing runs, from
    the previous answer).  Where the route's end is kept: at full rank on
    iris (149 against the annealing's 148), star98 (244.0 against 233.0) and ccard (62
    against 58), digits (1782.0 against 1778.0) and where the annealing stalls
    (fair/religious: 2324.7 against 2275.6).  Chosen on fair/religious and the full-rank
    tables; checked on 27 stratified subsamples of 150–400 rows of randhie and fair (at or
    above scikit-learn's on 25, converged on 24; without the L-BFGS after the route 20 and
    22, as with the annealing alone followed by the route only after a stall) and 20
    integer-valued ``make_classification`` draws (at or above on 19, converged on 19; 18 and
    18 without it, 15 and 18 with the annealing alone).

    **The limit along the ray.**  Each route ends with one more rescue stage (``_Ray``):
    where its run has not converged, the map is doubled while Σ_i p_i rises, and the
    doubled map is kept if its gradient norm is lower too; the driver's gradient rule then
    decides whether it is converged.  On integer-valued survey tables (fair) the runs stall
    at a large scale where nearly every p_ij is 0 or 1 except between samples tied for every
    map — duplicate rows, and samples whose nearest neighbours are copies of one row — whose
    p_i stays fractional (Σ_i min(p_i, 1 − p_i) ≈ 560 of 6366) although they contribute no
    gradient, so the annealing's saturation test never fires; the gradient left comes from a few
    near-ties that one doubling decides (fair/religious, r = 2: gradient norm 0.95 → 1.2e-7,
    Σ_i p_i 2324.7011 → 2324.7066; at full rank 2322.79, converged).  Where doubling lowers
    Σ_i p_i (fair/rate_marriage at full rank) the stage keeps the point: there Σ_i p_i is a
    staircase of near-ties, and the annealing route's last rescue (``_Settle``) runs L-BFGS
    on past the plateau rule's stall until that rule fires within 1e3 · tol · scale, the
    driver's usual "converged" for a cost-change stop (8 iterations there).
    Where the run ends is path dependent: two solvers (or scikit-learn's L-BFGS-B with
    another BLAS thread count) stop at different counts on the same data;
    ``benchmarks/bench_dml.py`` measures how often ldr's is at least scikit-learn's.

    **Large n** (more than ``stochastic_above`` samples, ``solver=None``).  An exact
    evaluation is n² pairs (about 4 minutes at n = 10⁵ on one core), so the fit runs
    Riemannian Adam (:class:`ldr.solvers.Adam`) on mini-batches of samples, each sample's
    softmax over a candidate set — its 32 nearest samples in the current embedding, exact,
    and 512 columns drawn uniformly, weighted n/512 (Eq. S3 of ``objectives/_nca.py``) —
    from a start estimated on 4096 samples, for at most 20 epochs; then the driver evaluates
    the full cost and gradient once, and only that check can make the run converged
    (``result_.converged``, ``result_.reason`` "stochastic run ended …; full gradient ‖g‖
    = … above tol …").  ``stochastic_`` says which route ran; the constants are
    ``ldr.estimators.dml.STOCHASTIC``.

    Parameters
    ----------
    n_components : int or None, default None
        r, 1 <= r <= n_features; None: n_features (a full-rank metric), as scikit-learn.
    start : {"auto", "lda", "pca", "identity", "random"} or array (n_components, n_features)
        The start: scikit-learn's ``init`` rule and names
        (:meth:`ldr.objectives.NCA.heuristic`; PCA and the identity in units of the data's
        scale), a random point seeded by ``random_state``, or a map L in scikit-learn's
        ``components_`` layout.
    solver : str, Solver, list of them or None, default None
        None: the annealing L-BFGS ("Why the small steps", "Where it saves iterations"),
        then the trust region where it stalled ("When it stops");
        ``LBFGS(max_step=0.03)`` the fixed cap (the default before 2026-11-26); "lbfgs" runs
        L-BFGS with its own cap, 0.25 · ‖M‖ (a lower objective on most benchmark tables).
    tol : float, default 1e-6
        The gradient tolerance, relative to the problem's gradient scale ("When it stops").
    max_iter, solver_params : see :class:`~ldr.estimators.LinearDR`
        ``solver_params`` defaults to ``{"ftol": 1e-5, "fwindow": 5}`` (the plateau rule;
        ``{"ftol": 0}`` turns it off); what it holds replaces those keys.
    random_state : int, RandomState or None, default 0
        Seeds ``start="random"``.
    warm_start : bool, default False
        As scikit-learn's: when fitted before, the next ``fit`` starts from the learned map
        ``components_`` (``start`` ignored) and continues ``result_``'s trace.
    stochastic_above : int, default 20000
        With ``solver=None``, more samples than this take the stochastic route ("Large n");
        an explicit ``solver`` always runs as given.
    init : deprecated
        The former name of ``start`` (scikit-learn's); warns, removed in the next release.

    Attributes
    ----------
    components_ : (n_components, n_features)
        L, the learned map: ``transform(X) == X @ components_.T``.
    M_ : (n_features, n_components)
        ldr's point, ``c · components_.T`` with c the data's RMS scale (``objective_.unit_``).
    objective_value_ : float
        Σ_i p_i on the training data (scikit-learn's objective; −cost_).
    stochastic_ : bool
        Whether the fit took the stochastic route ("Large n").
    n_components_, cost_, n_iter_, result_, objective_, classes_, n_features_in_ :
        see :class:`~ldr.estimators.LinearDR`

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
    _objective_args = ("start",)
    _max_step = NCA_MAX_STEP
    _quiet = NCA_QUIET
    _solver_defaults = {"ftol": 1e-5, "fwindow": 5}

    def __init__(self, n_components=None, *, start="auto", solver=None, tol=1e-6,
                 max_iter=1000, solver_params=None, random_state=0, warm_start=False,
                 stochastic_above=STOCHASTIC_ABOVE, init="deprecated"):
        self.stochastic_above = stochastic_above
        self.n_components, self.start, self.solver = n_components, start, solver
        self.tol, self.max_iter, self.warm_start = tol, max_iter, warm_start
        self.solver_params, self.random_state, self.init = solver_params, random_state, init

    def fit(self, X, y=None):
        """Learn the metric from labelled rows (X, y); returns self."""
        super().fit(X, y)
        self.objective_value_ = -self.cost_
        return self


class LargeMarginDML(_MetricLearner):
    """Large-margin distance metric learning (LMNN's objective, survey Eq. 27) on R^{d×r}.

    Minimizes Σ_i Σ_{j∈η(i)} (‖L(x_i − x_j)‖² + λ Σ_{ℓ: z_ℓ≠z_i} h(1 + ‖L(x_i − x_j)‖²
    − ‖L(x_i − x_ℓ)‖²)) with k fixed target neighbours η(i) per sample (nearest classmates in
    the input space) and h the Huberized hinge (:class:`ldr.objectives.LargeMarginDML`).

    Parameters
    ----------
    n_components : int or None, default None
        r, 1 <= r <= n_features; None: n_features.
    k : int, default 3
        Target neighbours per sample.
    lam : float > 0, default 1
        λ, the weight of the margin (impostor) term.
    smoothing : float > 0, default 0.5
        δ, the width of the hinge's quadratic smoothing (the margin is 1).
    tol : float, default 1e-6
        The gradient tolerance, relative to the problem's gradient scale (the cost has a
        minimizer: the fit converges by the gradient rule).
    start, solver, max_iter, solver_params, random_state, warm_start, stochastic_above, init :
        As :class:`NCA` (the same start rule; solver None: "lbfgs" then, where it ends
        uncertified, the trust region (the objective's default), or past
        ``stochastic_above`` samples Adam on batches whose impostors are sampled — each
        sample's 32 nearest in the embedding and 512 uniform columns weighted n/512, an
        unbiased estimate of its term, Eq. M3 of ``objectives/_lmnn.py`` — for at most 10
        epochs, then one exact check; no plateau rule).

    Attributes
    ----------
    components_ : (n_components, n_features)
        L: ``transform(X) == X @ components_.T``.
    M_, n_components_, cost_, n_iter_, result_, objective_, classes_, n_features_in_,
    stochastic_ :
        see :class:`NCA`

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
    #: an LMNN epoch costs about 2× NCA's (k target slots per impostor): 10 epochs keep the
    #: n = 10⁵ fit near NCA's 20 (20 ran past 580 s in bench_pairwise_scale.py)
    _max_epochs = 10
    _objective_args = ("k", "lam", "smoothing", "start")

    def __init__(self, n_components=None, *, k=3, lam=1.0, smoothing=0.5, start="auto",
                 solver=None, tol=1e-6, max_iter=1000, solver_params=None, random_state=0,
                 warm_start=False, stochastic_above=STOCHASTIC_ABOVE, init="deprecated"):
        self.stochastic_above = stochastic_above
        self.n_components, self.k, self.lam, self.smoothing = n_components, k, lam, smoothing
        self.start, self.solver, self.tol, self.max_iter = start, solver, tol, max_iter
        self.solver_params, self.random_state, self.init = solver_params, random_state, init
        self.warm_start = warm_start


def _better_of(route: Result, annealed: Result, path: list) -> Result:
    """The Result of the better end — a converged end before one that is not, then the lower
    cost (the annealing's on a tie) — with both runs' trace (the route's rows first,
    ``stage`` −1, with ``path``: (seconds, cost) after each of scipy's iterations, between its
    first row and the row of scipy's end, before the L-BFGS rows after it; then the
    annealing's, its times and iterations offset), iterations, time and counts, and
    ``routes``: the two Results."""
    better = (not annealed.converged, annealed.cost) > (not route.converged, route.cost)
    keep, other = (route, annealed) if better else (annealed, route)
    rows = [dict(row, stage=-1) for row in route.trace]
    inner = [{"iteration": k + 1, "time": t, "cost": f, "grad_norm": np.nan,
              "change": np.nan, "stage": -1, "route_path": True}
             for k, (t, f) in enumerate(path[:-1])]
    rows = rows[:1] + inner + rows[1:]
    rows += [dict(row, time=row["time"] + route.time, iteration=row["iteration"] + route.n_iter)
             for row in annealed.trace]
    counts = summed_counts(route.counts, annealed.counts)
    names = ("scikit-learn's route", "the annealing")
    which, beside = names if keep is route else names[::-1]
    res = dataclasses.replace(
        keep, trace=Trace(rows), n_iter=route.n_iter + annealed.n_iter,
        time=route.time + annealed.time, counts=counts,
        reason=f"{keep.reason} ({which}: the better of two routes from the start; {beside} "
               f"ended at cost {other.cost:.10g})")
    res.routes = {"route": route, "annealed": annealed}
    return res
