"""Benchmark: NCA and large-margin DML at their defaults against the tools a user would pick —
scikit-learn's NeighborhoodComponentsAnalysis and metric-learn's LMNN — on real tables.

Run from the checkout root, under the bench lock (as every timing)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_dml.py
    .venv/bin/python -P benchmarks/bench_dml.py --tables iris,wine --no-lmnn   # a quick look

The tables are the classification tables of ``_tables.py`` (scikit-learn's bundled iris,
wine, breast_cancer and digits; statsmodels' anes96, fair, grunfeld, modechoice, randhie,
star98, ccard and spector, each with the class column ``_tables.py`` documents), every one
standardized (StandardScaler) and embedded in r = ``--components`` (default 2) dimensions
(``--components 0``: full rank, ``n_components=None`` for both tools, as bench_real runs).
``_tables.DEVELOPMENT`` marks the tables on which NCA's defaults were chosen ("dev"); the
others were only checked ("held out").

1. **NCA**, both estimators at their defaults on the whole standardized table: scikit-learn's
   ``NeighborhoodComponentsAnalysis(r)`` (init "auto", L-BFGS-B, tol 1e-5, max_iter 50) and
   ldr's ``NCA(r)`` (the same start; L-BFGS with the strong Wolfe line search, stopped by the
   gradient rule or the relative-progress rule, ``ldr.solvers.routes.exact_nca``).
   Reported: each one's wall time (median of ``--repeats`` fits, interleaved; one fit
   on tables over 3000 rows), their ratio ldr ÷ scikit-learn, scikit-learn's objective
   Σ_i p_i on the training data at each answer (the same function, tests/test_dml.py),
   whether ldr's fit converged (``result_.converged``), whether ldr's objective reaches
   scikit-learn's (f_ldr ≥ f_sk (1 − 1e-6)) and **when** it did: ldr's fit time but the
   iterations after the first that reached it (from ``result_.trace``; NCA's supremum lies
   at ‖L‖ → ∞ — the time to reach the other tool's objective is the comparison of the two
   optimizers, the whole fit's time that of the two defaults; both are printed), and the
   3-NN accuracy of StandardScaler → NCA → 3-NN, stratified 5-fold cross-validation
   repeated 3 times (once on tables over 1000 rows), the same folds for both.
2. **Large-margin DML**: metric-learn's ``LMNN(n_neighbors=3)`` (its defaults: gradient
   descent, up to 1000 iterations) against ldr's ``LargeMarginDML(r)`` (k = 3, L-BFGS).  The
   objectives differ (metric-learn's hinge, ldr's Huberized one and its weighting), so only
   time (one metric-learn fit, the median of ``--repeats`` ldr fits) and 3-NN accuracy (5-fold,
   once; metric-learn's only where one of its fits takes under ``--ml-cv-limit`` seconds) are
   compared.  Tables over ``--lmnn-max-n`` rows are left out: metric-learn took 280 s on
   anes96 (944 rows).  metric-learn 0.7 calls scikit-learn's ``check_array`` with the
   ``force_all_finite`` keyword that scikit-learn 1.8 removed;
   :func:`_common.metric_learn_lmnn` renames it (``ensure_all_finite``) for the run.

BLAS is pinned to one thread for the whole run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neighbors import NeighborhoodComponentsAnalysis as SkNCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import ldr.estimators as est
from ldr.objectives import NCA

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -P` leaves it out
import _common as common  # noqa: E402
import _tables  # noqa: E402

REACHED = 1e-6  # f_ldr ≥ f_sk (1 − REACHED) counts as reaching scikit-learn's objective


def _fit_time(make, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = make().fit(X, y)
    return time.perf_counter() - start, model


def _knn(make, X, y, repeats: int) -> float:
    """Mean 3-NN accuracy of StandardScaler → make() → 3-NN, stratified 5-fold CV."""
    cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=repeats, random_state=0)
    pipe = make_pipeline(StandardScaler(), make(), KNeighborsClassifier(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return float(np.mean(cross_val_score(pipe, X, y, cv=cv)))


def reach_time(seconds: float, model, f_target: float) -> float:
    """Seconds into ``model``'s fit (wall time ``seconds``) at which its run first reached
    the objective ``f_target`` (within REACHED): the whole fit but the iterations after that
    one (set-up and the result's assembly included); inf if it never did."""
    trace = model.result_.trace
    cost, at = trace["cost"], trace["time"]
    hit = np.flatnonzero(-cost >= f_target * (1 - REACHED))
    if hit.size == 0:
        return math.inf
    return seconds - (model.result_.time - float(at[hit[0]]))


def _rows(L: np.ndarray, r: int) -> np.ndarray:
    """L with zero rows below it up to r: at full rank scikit-learn's LDA start returns as many
    rows as the data's rank (grunfeld: 3 of 4), and zero rows leave Σ_i p_i unchanged."""
    return np.vstack([L, np.zeros((r - L.shape[0], L.shape[1]))])


def nca_row(t, r: int | None, repeats: int, knn: bool) -> dict:
    X, y = StandardScaler().fit_transform(t.X), t.y
    n = X.shape[0]
    repeats = 1 if n > 3000 else repeats
    makers = {"sk": lambda: SkNCA(r), "ldr": lambda: est.NCA(r)}
    times = {key: [] for key in makers}
    models, ldr_fits = {}, []
    for _ in range(repeats):  # interleaved, so that a busy spell hits both
        for key, make in makers.items():
            seconds, models[key] = _fit_time(make, X, y)
            times[key].append(seconds)
            if key == "ldr":
                ldr_fits.append((seconds, models[key]))
    obj = NCA(X, y, r or X.shape[1])
    f_sk = obj.objective_value(obj.point(_rows(models["sk"].components_, obj.r)))
    f_ldr = obj.objective_value(obj.point(_rows(models["ldr"].components_, obj.r)))
    row = {"table": t.name, "shape": t.shape, "dev": t.name in _tables.DEVELOPMENT,
           "t_sk": common.median(times["sk"]), "t_ldr": common.median(times["ldr"]),
           "t_reach": common.median([reach_time(s, m, f_sk) for s, m in ldr_fits]),
           "f_sk": f_sk, "f_ldr": f_ldr, "reached": f_ldr >= f_sk * (1 - REACHED),
           "sk_iter": models["sk"].n_iter_, "ldr_iter": models["ldr"].n_iter_,
           "ldr_stop": models["ldr"].result_.reason,
           "converged": models["ldr"].result_.converged, "acc_sk": math.nan,
           "acc_ldr": math.nan}
    if knn:
        cv_repeats = 1 if n > 1000 else 3
        for key in makers:
            row[f"acc_{key}"] = _knn(makers[key], t.X, y, cv_repeats)
    return row


def lmnn_row(t, r: int | None, repeats: int, knn: bool, ml_cv_limit: float) -> dict:
    LMNN = common.metric_learn_lmnn()
    X, y = StandardScaler().fit_transform(t.X), t.y
    ldr_times = [_fit_time(lambda: est.LargeMarginDML(r), X, y)[0] for _ in range(repeats)]
    row = {"table": t.name, "shape": t.shape, "dev": t.name in _tables.DEVELOPMENT,
           "t_ml": math.nan, "t_ldr": common.median(ldr_times), "acc_ml": math.nan,
           "acc_ldr": math.nan}
    if LMNN is not None:
        row["t_ml"] = _fit_time(lambda: LMNN(n_neighbors=3, n_components=r, random_state=0),
                                X, y)[0]
    if knn:
        row["acc_ldr"] = _knn(lambda: est.LargeMarginDML(r), t.X, y, 1)
        if LMNN is not None and row["t_ml"] < ml_cv_limit:
            row["acc_ml"] = _knn(lambda: LMNN(n_neighbors=3, n_components=r, random_state=0),
                                 t.X, y, 1)
    return row


def _acc(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3f}"


def print_nca(rows: list[dict]) -> None:
    table = [[row["table"] + ("" if row["dev"] else " *"), row["shape"],
              common.fmt_time(row["t_sk"]), common.fmt_time(row["t_ldr"]),
              common.fmt_ratio(row["t_ldr"] / row["t_sk"]),
              common.fmt_time(row["t_reach"]), common.fmt_ratio(row["t_reach"] / row["t_sk"]),
              f"{row['f_sk']:.3f} ({row['sk_iter']})", f"{row['f_ldr']:.3f} ({row['ldr_iter']})",
              "yes" if row["converged"] else "NO", "yes" if row["reached"] else "NO",
              _acc(row["acc_sk"]), _acc(row["acc_ldr"])]
             for row in rows]
    common.print_table(["table", "n×d, classes", "sklearn", "ldr", "ratio", "ldr at f_sk",
                        "ratio", "f sklearn (it)", "f ldr (it)", "ldr conv", "f_ldr ≥ f_sk",
                        "3-NN sklearn", "3-NN ldr"], table)
    print("  * held out: NCA's defaults were not chosen on this table")
    print("  ldr at f_sk: when ldr's run first reached scikit-learn's objective (its whole fit "
          "but the iterations after that one), ratio ÷ scikit-learn's fit")
    for label, keep in (("dev", True), ("held out", False)):
        part = [row for row in rows if row["dev"] == keep]
        if not part:
            continue
        ratios = [row["t_ldr"] / row["t_sk"] for row in part]
        reach = [row["t_reach"] / row["t_sk"] for row in part]
        diffs = [100 * (row["acc_ldr"] - row["acc_sk"]) for row in part
                 if not math.isnan(row["acc_ldr"])]
        print(f"  {label}: {len(part)} tables, time ratio median {common.median(ratios):.2f} "
              f"(max {max(ratios):.2f}), at scikit-learn's objective median "
              f"{common.median(reach):.2f} (max {max(reach):.2f}), ldr's objective reaches "
              f"scikit-learn's on "
              f"{sum(row['reached'] for row in part)}/{len(part)}, converged on "
              f"{sum(row['converged'] for row in part)}/{len(part)}"
              + (f", 3-NN accuracy ldr − sklearn {np.mean(diffs):+.2f} points on average "
                 f"({min(diffs):+.1f} to {max(diffs):+.1f})" if diffs else ""))
    for row in rows:
        print(f"  {row['table']}: ldr stopped: {row['ldr_stop']}")


def print_lmnn(rows: list[dict]) -> None:
    table = [[row["table"] + ("" if row["dev"] else " *"), row["shape"],
              common.fmt_time(row["t_ml"]), common.fmt_time(row["t_ldr"]),
              common.fmt_ratio(row["t_ldr"] / row["t_ml"]), _acc(row["acc_ml"]),
              _acc(row["acc_ldr"])] for row in rows]
    common.print_table(["table", "n×d, classes", "metric-learn", "ldr", "ratio",
                        "3-NN metric-learn", "3-NN ldr"], table)
    ratios = [row["t_ldr"] / row["t_ml"] for row in rows if math.isfinite(row["t_ml"])]
    if ratios:
        print(f"  time ratio ldr ÷ metric-learn: median {common.median(ratios):.3f}, "
              f"max {max(ratios):.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="", help="comma-separated names (default: all)")
    parser.add_argument("--components", type=int, default=2,
                        help="r; 0: full rank (n_components=None, each table's d)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-knn", action="store_true", help="skip the 3-NN accuracy")
    parser.add_argument("--no-nca", action="store_true")
    parser.add_argument("--no-lmnn", action="store_true")
    parser.add_argument("--lmnn-max-n", type=int, default=600)
    parser.add_argument("--ml-cv-limit", type=float, default=30.0)
    args = parser.parse_args(argv)
    tables = _tables.classification_tables()
    if args.tables:
        wanted = args.tables.split(",")
        tables = [t for t in tables if t.name in wanted]
    r = args.components or None   # None: full rank, both tools' default
    with common.single_threaded():
        common.print_header("NCA and large-margin DML at their defaults",
                            [f"r = {r or 'd (full rank)'}, repeats = {args.repeats} "
                             "(interleaved; 1 over 3000 rows), standardized tables, one BLAS "
                             "thread"])
        if not args.no_nca:
            print(f"1. NCA: scikit-learn's NeighborhoodComponentsAnalysis({r}) vs ldr's "
                  f"NCA({r})")
            rows = []
            for t in tables:
                rows.append(nca_row(t, r, args.repeats, not args.no_knn))
                print(f"  done {t.name}", flush=True)
            print_nca(rows)
            print()
        if not args.no_lmnn:
            print(f"2. large-margin DML: metric-learn's LMNN(n_neighbors=3) vs ldr's "
                  f"LargeMarginDML({r}) (tables up to {args.lmnn_max_n} rows)")
            rows = []
            for t in tables:
                if t.X.shape[0] <= args.lmnn_max_n:
                    rows.append(lmnn_row(t, r, args.repeats, not args.no_knn,
                                         args.ml_cv_limit))
                    print(f"  done {t.name}", flush=True)
            print_lmnn(rows)


if __name__ == "__main__":
    main()
