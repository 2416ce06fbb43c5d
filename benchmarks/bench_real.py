"""Every estimator at its defaults on real tables nobody tuned it to.

For each estimator of ``ldr.estimators`` and each suitable table of ``_tables.py``
(scikit-learn's and statsmodels' bundled datasets: classification tables for the supervised
and unsupervised methods, multivariate series for MAF/SFA, two-view tables for CCA), on
standardized features:

* **finished** within its budget (a fit that runs over is stopped and counted): ``--budget``
  seconds, or ``--relative-budget`` (3) times the counterpart's fit on the same table where
  that is longer — a table on which scikit-learn's own fit needs 150 s (NCA on fair) does
  not fail ldr's fit at 60 s, one on which it needs 4 s still does.  The counterpart is
  fitted first, within ``--counterpart-budget`` seconds (300) — except one built from ldr's
  fit (``counterpart_sees_fit``: WDAClustering's alternation), after it, ldr's budget then
  ``--budget``;
* **converged** without a ``ConvergenceWarning``;
* **fit time** (median of repeats for fits under a second, one BLAS thread) and its **ratio**
  to the counterpart a user would otherwise pick, measured in the same run: scikit-learn's
  ``PCA``, ``LinearDiscriminantAnalysis``, ``NeighborhoodComponentsAnalysis``,
  ``FactorAnalysis``, ``FastICA``, ``CCA``, ``PLSRegression``, ``SpectralClustering``;
  POT's ``ot.dr.wda`` (where installed), for WDAClustering the KMeans ↔ ``ot.dr.wda``
  alternation (``_wda_kmeans.py``; plain ``KMeans`` beside it, ``Spec.also``) and
  metric-learn's ``LMNN`` (where installed);
* the **objective** where both optimize one (NCA's Σ p_i; LDA's trace ratio; PCA's variance);
* **3-NN accuracy**, 5-fold stratified cross-validation of StandardScaler → method → 3-NN
  (supervised and unsupervised projections), or the adjusted Rand index of the clustering
  estimators' labels against the classes.

Tables are in two sets (``_tables.DEVELOPMENT``: defaults may be chosen there; the others,
marked *, which are not all unseen: ``_tables.py``); the summary reports both.  Held-out
figures come from ``held_out.py``'s sealed list, not from these tables.  Methods with a
documented size limit run on a seeded
stratified subsample of a larger table (``LIMITS``), said so in the row; ``--max-rows``
subsamples every table so (a quicker cross-validation of a slow method on a large table).

    python -P benchmarks/bench_real.py                      # everything (over two hours:
                                                            # NCA on fair, with the CV, 52 min)
    python -P benchmarks/bench_real.py --only NCA,PCA --tables iris,anes96/PID
    python -P benchmarks/bench_real.py --no-cv              # fits and ratios only
    python -P benchmarks/bench_real.py --no-cv --save t.jsonl   # rows kept for --report
    python -P benchmarks/bench_real.py --report t.jsonl --scores cv.jsonl   # merged tables

Timings must not overlap other measurements: on a shared machine run it under a lock
(``flock /tmp/ldr-bench.lock python -P benchmarks/bench_real.py``).
"""

from __future__ import annotations

import argparse
import math
import signal
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import ldr.estimators as est

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -P` leaves it out
import _common  # noqa: E402
import _tables  # noqa: E402
import _wda_kmeans  # noqa: E402
from _real_report import Run, _load, _save, report  # noqa: E402

#: documented size limits: the method runs on a stratified subsample of this many rows
LIMITS = {"KernelSDR": 1000, "MDS": 2000, "UnsupervisedHSIC": 1500, "SemiSupervisedHSIC": 1500,
          "KDAC": 1500, "WDAClustering": 3000}


@dataclass
class Spec:
    """One estimator in the benchmark: which tables, how to fit it, its counterpart."""

    name: str
    kinds: tuple[str, ...]
    make: Callable  # (table) -> estimator at its defaults
    counterpart: Callable | None = None  # (table) -> (label, estimator) or None
    # the counterpart is set from ldr's fit: counterpart(table, fitted model or None)
    counterpart_sees_fit: bool = False
    also: Callable | None = None  # a second counterpart, as counterpart: its own columns
    score: str = "knn"  # "knn", "ari" (clustering) or "none"
    value: Callable | None = None  # (fitted, table, Xs) -> objective value, to compare
    supervised: bool = True


def _n_classes(t):
    return len(np.unique(t.y))


# --- counterparts -----------------------------------------------------------------------------
def _sk(name, kw):
    def make(t):
        import sklearn.cluster as cl
        import sklearn.cross_decomposition as cd
        import sklearn.decomposition as de
        import sklearn.discriminant_analysis as da
        import sklearn.neighbors as ne

        for module in (de, da, ne, cd, cl):
            if hasattr(module, name):
                return f"sklearn {name}", getattr(module, name)(**kw(t) if callable(kw) else kw)
        raise KeyError(name)
    return make


def _pot_wda(t):
    try:
        import ot.dr  # noqa: F401
    except ImportError:
        return None

    class PotWDA:
        def __init__(self, r):
            self.r = r

        def fit(self, X, y):
            from ot.dr import wda

            self.P_, self.proj_ = wda(X, y, p=self.r, reg=1.0, k=10, maxiter=100)
            return self

        def transform(self, X):
            return X @ self.P_

        def get_params(self, deep=True):
            return {"r": self.r}

        def set_params(self, **p):
            self.r = p.get("r", self.r)
            return self

    return "POT wda", PotWDA(t.X.shape[1] - 1)


def _metric_learn_lmnn(t):
    try:
        from metric_learn import LMNN
    except ImportError:
        return None
    return "metric-learn LMNN", LMNN(n_neighbors=3, random_state=0)


# --- objective values -------------------------------------------------------------------------
def _nca_value(fitted, t, Xs):
    """scikit-learn's NCA objective Σ_i p_i of the map ``components_`` on the training data."""
    Z = Xs @ fitted.components_.T
    D = np.sum((Z[:, None, :] - Z[None, :, :]) ** 2, axis=-1)
    np.fill_diagonal(D, np.inf)
    P = np.exp(-(D - D.min(axis=1, keepdims=True)))
    P /= P.sum(axis=1, keepdims=True)
    return float(np.sum(P * (t.y[:, None] == t.y[None, :])))


def _lda_ratio(fitted, t, Xs):
    """The trace ratio tr(MᵀS_bM)/tr(MᵀS_wM) of the fitted span (orthonormalized)."""
    from ldr.objectives import LDA

    W = getattr(fitted, "components_", None)
    if W is None or not hasattr(fitted, "components_"):
        W = fitted.scalings_[:, : _n_classes(t) - 1].T
    W = np.atleast_2d(W)
    if W.shape[0] >= Xs.shape[1]:
        return math.nan
    Q = np.linalg.qr(W.T)[0]
    return float(LDA(Xs, t.y, Q.shape[1], shrinkage=1e-9).ratio(Q))


def _pca_variance(fitted, t, Xs):
    return float(np.sum(fitted.explained_variance_[:2]))


SPECS = [
    Spec("PCA", ("classes",), lambda t: est.PCA(), _sk("PCA", {}), supervised=False,
         value=_pca_variance),
    Spec("OrthogonalLDA", ("classes",), lambda t: est.OrthogonalLDA(),
         _sk("LinearDiscriminantAnalysis", {}), value=_lda_ratio),
    Spec("NCA", ("classes",), lambda t: est.NCA(),
         _sk("NeighborhoodComponentsAnalysis", {"random_state": 0}), value=_nca_value),
    Spec("LargeMarginDML", ("classes",), lambda t: est.LargeMarginDML(), _metric_learn_lmnn),
    Spec("WassersteinDA", ("classes",), lambda t: est.WassersteinDA(), _pot_wda),
    Spec("SupervisedHSIC", ("classes",), lambda t: est.SupervisedHSIC()),
    Spec("KernelSDR", ("classes",), lambda t: est.KernelSDR()),
    Spec("ReducedRankRegression", ("classes",), lambda t: est.ReducedRankRegression(),
         _sk("PLSRegression", lambda t: {"n_components": min(_n_classes(t), t.X.shape[1])})),
    Spec("MDS", ("classes",), lambda t: est.MDS(), supervised=False),
    Spec("LPP", ("classes",), lambda t: est.LPP(), supervised=False),
    Spec("NPE", ("classes",), lambda t: est.NPE(), supervised=False),
    Spec("PPCA", ("classes",), lambda t: est.PPCA(), _sk("PCA", {}), supervised=False),
    # the other transform (PPCA's docstring: the default was chosen between the two)
    Spec("PPCA(posterior_mean)", ("classes",),
         lambda t: est.PPCA(transform_algorithm="posterior_mean"), _sk("PCA", {}),
         supervised=False),
    Spec("FactorAnalysis", ("classes",), lambda t: est.FactorAnalysis(),
         _sk("FactorAnalysis", {}), supervised=False),
    Spec("UndercompleteICA", ("classes",), lambda t: est.UndercompleteICA(),
         _sk("FastICA", {"random_state": 0}), supervised=False),
    Spec("UnsupervisedHSIC", ("classes",),
         lambda t: est.UnsupervisedHSIC(n_clusters=_n_classes(t)),
         _sk("SpectralClustering", lambda t: {"n_clusters": _n_classes(t), "random_state": 0}),
         score="ari", supervised=False),
    Spec("WDAClustering", ("classes",), lambda t: est.WDAClustering(n_clusters=_n_classes(t)),
         _wda_kmeans.counterpart, counterpart_sees_fit=True, score="ari", supervised=False,
         also=_sk("KMeans", lambda t: {"n_clusters": _n_classes(t), "random_state": 0})),
    Spec("MAF", ("series",), lambda t: est.MAF(), score="none", supervised=False),
    Spec("SFA", ("series",), lambda t: est.SFA(), score="none", supervised=False),
    Spec("CCA", ("two-view",), lambda t: est.CCA(),
         _sk("CCA", lambda t: {"n_components": min(t.X.shape[1], t.y.shape[1])}),
         score="none"),
    Spec("OrthogonalCCA", ("two-view",), lambda t: est.OrthogonalCCA(),
         _sk("CCA", lambda t: {"n_components": min(t.X.shape[1], t.y.shape[1])}),
         score="none"),
]


# --- running one fit --------------------------------------------------------------------------
class _Budget(BaseException):  # not caught by a library's `except Exception`
    pass


def _alarm(signum, frame):
    raise _Budget()


def _fit(make_est, X, y, supervised, budget) -> tuple[Run, object]:
    run = Run()
    signal.signal(signal.SIGALRM, _alarm)
    # re-fired every second past the budget: an exception raised where Python swallows it
    # (a garbage-collection callback, JAX's among them) is raised again at the next tick
    signal.setitimer(signal.ITIMER_REAL, budget, 1.0)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            model = make_est()
            model.fit(X, y) if supervised else model.fit(X)
            run.seconds = time.perf_counter() - start
        if run.seconds > budget:  # the alarm's exception swallowed (pymanopt inside POT)
            raise _Budget()
        run.finished = True
        run.warnings = [str(w.message)[:160] for w in caught
                        if issubclass(w.category, ConvergenceWarning)]
        run.converged = not run.warnings
        result = getattr(model, "result_", None)
        run.reason = str(getattr(result, "reason", "") or "")[:160]
        return run, model
    except _Budget:
        run.error = f"over the {budget:g} s budget"
    except Exception as exc:  # noqa: BLE001 - reported in the table
        run.error = f"{type(exc).__name__}: {str(exc)[:140]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return run, None


def _timed(make_est, X, y, supervised, budget, repeats) -> tuple[Run, object]:
    run, model = _fit(make_est, X, y, supervised, budget)
    if run.finished and run.seconds < 1.0 and repeats > 1:
        times = [run.seconds]
        for _ in range(repeats - 1):
            again, _ = _fit(make_est, X, y, supervised, budget)
            times.append(again.seconds)
        run.seconds = statistics.median(times)
    return run, model


class _OneHotTarget(BaseEstimator, TransformerMixin):
    """A regression onto the classes (RRR, PLS) as a pipeline step: fitted on the one-hot
    target, ``transform`` the X side only (PLS's ``fit_transform`` would return both)."""

    def __init__(self, estimator=None):
        self.estimator = estimator

    def fit(self, X, y):
        classes, codes = np.unique(y, return_inverse=True)
        self.estimator_ = clone(self.estimator).fit(X, np.eye(len(classes))[codes])
        return self

    def transform(self, X):
        Z = self.estimator_.transform(X)
        return Z[0] if isinstance(Z, tuple) else Z


def _cv_score(make_est, t, Xs, spec, folds) -> float:
    if spec.score == "knn":
        step = make_est()
        if spec.name == "ReducedRankRegression":
            step = _OneHotTarget(step)
        pipe = make_pipeline(StandardScaler(), step, KNeighborsClassifier(3))
        cv = StratifiedKFold(folds, shuffle=True, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(np.mean(cross_val_score(pipe, t.X, t.y, cv=cv)))
    return math.nan


def _limit(spec, t, max_rows=None):
    n = LIMITS.get(spec.name)
    if max_rows is not None:
        n = max_rows if n is None else min(n, max_rows)
    if n is None or t.X.shape[0] <= n:
        return t, ""
    X, y = _tables._subsample(t.X, t.y, n)
    return _tables.Table(t.name, t.kind, X, y, t.note), f"{n} of {t.X.shape[0]} rows"


def _budget(args, theirs: Run) -> float:
    """ldr's budget on a table whose counterpart's fit was ``theirs``: ``--budget``, or
    ``--relative-budget`` × the counterpart's time where that is longer, or the counterpart's
    own budget where it ran over that (an error of the counterpart leaves ``--budget``)."""
    if theirs.finished:
        return max(args.budget, args.relative_budget * theirs.seconds)
    if theirs.error.startswith("over the"):
        return max(args.budget, args.counterpart_budget)
    return args.budget


def run_one(spec, t, args) -> dict:
    t, limited = _limit(spec, t, args.max_rows)
    Xs = StandardScaler().fit_transform(t.X)
    ys = StandardScaler().fit_transform(t.y) if t.kind == "two-view" else t.y
    # a one-hot target for RRR and PLS (a regression onto the classes)
    yfit = (np.eye(_n_classes(t))[np.unique(t.y, return_inverse=True)[1]]
            if spec.name == "ReducedRankRegression" else ys)
    supervised = spec.supervised or t.kind == "two-view"
    row = {"method": spec.name, "table": t.name, "shape": t.shape, "note": limited,
           "development": t.name in _tables.DEVELOPMENT}
    budget = args.budget
    first = spec.counterpart is not None and not spec.counterpart_sees_fit
    if first:   # its time sets ldr's budget on this table
        other = spec.counterpart(t)
        if other is not None:
            _counterpart(row, "theirs", other, spec, t, Xs, yfit, supervised, args)
            budget = _budget(args, row["theirs"])
    row["budget"] = budget
    ours, model = _timed(lambda: spec.make(t), Xs, yfit, supervised, budget, args.repeats)
    row["ours"] = ours
    if ours.finished:
        if spec.value is not None:
            ours.value = spec.value(model, t, Xs)
        if spec.score == "ari":
            ours.score = adjusted_rand_score(t.y, model.labels_)
        elif args.cv and t.kind == "classes":
            ours.score = _cv_score(lambda: spec.make(t), t, Xs, spec, args.folds)
    for key, make_other in (("theirs", spec.counterpart), ("also", spec.also)):
        if make_other is None or (key == "theirs" and first):
            continue
        sees = key == "theirs" and spec.counterpart_sees_fit
        other = make_other(t, model) if sees else make_other(t)
        if other is not None:
            _counterpart(row, key, other, spec, t, Xs, yfit, supervised, args)
    return row


def _counterpart(row, key, other, spec, t, Xs, yfit, supervised, args) -> None:
    """Fit one counterpart as ldr's estimator was fitted: ``row[key]`` and its label."""
    label, proto = other

    def fresh():
        try:
            return clone(proto)
        except TypeError:
            return type(proto)(**proto.get_params())
    theirs, fitted = _timed(fresh, Xs, yfit, supervised and spec.score != "ari",
                            args.counterpart_budget, args.repeats)
    theirs.error = theirs.error or ""
    row["counterpart" if key == "theirs" else "also_label"], row[key] = label, theirs
    if theirs.finished:
        if spec.value is not None:
            try:
                theirs.value = spec.value(fitted, t, Xs)
            except Exception:  # noqa: BLE001 - a counterpart without that attribute
                pass
        if spec.score == "ari":
            theirs.score = adjusted_rand_score(t.y, fitted.labels_)
        elif args.cv and t.kind == "classes":
            theirs.score = _cv_score(fresh, t, Xs, spec, args.folds)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", help="comma-separated estimator names")
    p.add_argument("--tables", help="comma-separated table names")
    p.add_argument("--budget", type=float, default=60.0,
                   help="seconds per fit of ldr's estimator (default 60), or --relative-budget "
                        "times the counterpart's fit where that is longer")
    p.add_argument("--relative-budget", type=float, default=3.0,
                   help="ldr's budget on a table as a multiple of the counterpart's fit time "
                        "there, where that exceeds --budget (default 3)")
    p.add_argument("--counterpart-budget", type=float, default=300.0,
                   help="seconds per fit of a counterpart (default 300)")
    p.add_argument("--repeats", type=int, default=3, help="repeats of fits under 1 s")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--no-cv", dest="cv", action="store_false",
                   help="skip the cross-validated scores")
    p.add_argument("--max-rows", type=int, default=None,
                   help="run every method on a seeded stratified subsample of at most this "
                        "many rows of each table (said so in the row's note)")
    p.add_argument("--save", help="append the rows to this JSON-lines file")
    p.add_argument("--report", nargs="+", metavar="FILE",
                   help="print the tables of saved rows (several runs' files merged); no fits")
    p.add_argument("--scores", nargs="+", metavar="FILE",
                   help="with --report: take the scores from these saved rows (a run with "
                        "the cross-validation, e.g. unlocked), the rest from --report's (a "
                        "locked --no-cv run)")
    args = p.parse_args(argv)
    if args.report:
        rows = _load(args.report)
        if args.scores:
            scored = {(r["method"], r["table"]): r for r in _load(args.scores)}
            for r in rows:
                other = scored.get((r["method"], r["table"]))
                for k in ("ours", "theirs", "also"):
                    if other is not None and k in r and k in other:
                        r[k].score = other[k].score
        report(rows)
        return
    only = set(args.only.split(",")) if args.only else None
    wanted = set(args.tables.split(",")) if args.tables else None
    tables = [t for t in _tables.all_tables() if wanted is None or t.name in wanted]
    specs = [s for s in SPECS if only is None or s.name in only]
    rows = []
    with _common.single_threaded():   # the header's BLAS line shows the pinned pools
        _common.print_header("ldr at its defaults on real tables", [
            f"{len(specs)} estimators × their tables ({len(tables)} tables; * not a development "
            f"table, not all unseen: _tables.py); budget per fit {args.budget:g} s or "
            f"{args.relative_budget:g}× the counterpart's, which gets "
            f"{args.counterpart_budget:g} s; standardized features; "
            + (f"{args.folds}-fold 3-NN accuracy" if args.cv else "no cross-validation")])
        for spec in specs:
            for t in tables:
                if t.kind not in spec.kinds:
                    continue
                if t.kind == "classes" and t.X.shape[1] < 2:
                    continue
                row = run_one(spec, t, args)
                rows.append(row)
                o, th = row["ours"], row.get("theirs")
                other = ("" if th is None else
                         f" | {_common.fmt_time(th.seconds):>9s} score {th.score:.4g}")
                print(f"  {spec.name:22s} {t.name:26s} {'ok' if o.finished else 'FAIL':4s} "
                      f"{_common.fmt_time(o.seconds):>9s} score {o.score:.4g}{other} "
                      f"{o.error[:60]}", flush=True)
                if args.save:
                    _save([row], args.save)
    report(rows)


if __name__ == "__main__":
    main()
