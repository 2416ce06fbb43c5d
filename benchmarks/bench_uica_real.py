"""Benchmark: ``UndercompleteICA()`` against scikit-learn's ``FastICA()`` at their defaults on
real tables — bench_real's (the classification tables it runs UICA on) and fresh ones that no
default of either was chosen on.

Run from the checkout root, under the benchmark lock on a shared machine::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_uica_real.py
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_uica_real.py --fresh

Both on standardized features (as bench_real), ``n_components=None`` (square ICA on the
rank of the data), FastICA with ``random_state=0``.  Per table: the median wall time of
``--repeats`` fits of each (alternated, BLAS on one thread), their ratio, ldr's iterations
and whether FastICA warned that it did not converge (its own tolerance, 1e-4 on the change
of the unmixing, is far looser than ldr's gradient tolerance).

Fresh tables: statsmodels' macrodata (first differences) and elnino (series, not
classification tables), statecrime, scotland, cpunish, longley, all 20 190 rows of randhie
(bench_real subsamples 3000) and scikit-learn's diabetes features.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from ldr.estimators import UndercompleteICA

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -P` leaves it out
import _common  # noqa: E402
import _tables  # noqa: E402


def fresh_tables() -> list[tuple[str, np.ndarray]]:
    import statsmodels.api as sm
    from sklearn.datasets import load_diabetes

    def sm_numeric(name, drop=()):
        df = getattr(sm.datasets, name).load_pandas().data.drop(columns=list(drop))
        return df.select_dtypes("number").dropna().to_numpy(float)

    macro = sm_numeric("macrodata", ("year", "quarter"))
    return [("macrodata/changes", np.diff(macro, axis=0)),
            ("elnino", sm_numeric("elnino", ("YEAR",))),
            ("statecrime", sm_numeric("statecrime")),
            ("scotland", sm_numeric("scotland")),
            ("cpunish", sm_numeric("cpunish")),
            ("longley", sm_numeric("longley")),
            ("randhie (all rows)", sm_numeric("randhie")),
            ("diabetes", load_diabetes().data.astype(float))]


def bench_tables() -> list[tuple[str, np.ndarray]]:
    return [(t.name, t.X) for t in _tables.classification_tables()]


def _time(fit, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fit()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fresh", action="store_true", help="the fresh tables instead")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--tables", help="comma-separated names")
    args = p.parse_args(argv)
    tables = fresh_tables() if args.fresh else bench_tables()
    if args.tables:
        keep = set(args.tables.split(","))
        tables = [t for t in tables if t[0] in keep]
    rows, ratios = [], []
    with _common.single_threaded():
        _common.print_header("UndercompleteICA() vs FastICA() on real tables", [
            f"{'fresh' if args.fresh else 'bench_real'} tables, standardized; median of "
            f"{args.repeats} fits each, BLAS 1 thread"])
        for name, X in tables:
            X = StandardScaler().fit_transform(X)

            def ldr_fit(X=X):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always", ConvergenceWarning)
                    est = UndercompleteICA().fit(X)
                return est, bool(w)

            def sk_fit(X=X):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always", ConvergenceWarning)
                    est = FastICA(random_state=0).fit(X)
                return est, bool(w)

            t_ldr, (est, warned) = _time(ldr_fit, args.repeats)
            t_sk, (sk, sk_warned) = _time(sk_fit, args.repeats)
            ratios.append(t_ldr / t_sk)
            rows.append([name, f"{X.shape[0]}×{X.shape[1]}", _common.fmt_time(t_ldr),
                         _common.fmt_time(t_sk), _common.fmt_ratio(t_ldr / t_sk),
                         str(est.n_iter_), "no" if warned else "yes", str(sk.n_iter_),
                         "no" if sk_warned else "yes"])
            print(f"  {name}: {rows[-1][4]}", file=sys.stderr)
    _common.print_table(["table", "n×d", "ldr", "FastICA", "ratio", "ldr iters", "ldr conv",
                         "FastICA iters", "FastICA conv"], rows)
    print(f"\nmedian ratio {statistics.median(ratios):.2f} over {len(ratios)} tables; "
          f"{sum(r <= 3 for r in ratios)} of them at most 3×")


if __name__ == "__main__":
    main()
