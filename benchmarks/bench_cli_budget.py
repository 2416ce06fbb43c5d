"""Benchmark: how long ``ldr compare`` takes with its default solvers and starts, per method
and dataset, with no time budget — what the command line's default budget was chosen on.

Run from the checkout root (BLAS threads as the command line has them; on a shared machine
under the benchmark lock)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_cli_budget.py
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_cli_budget.py --check

The default set is **chosen on**: scikit-learn's bundled iris, wine and breast_cancer (every
method).  ``--check`` runs what the default was **not** chosen on: statsmodels' anes96 (944
rows, 10 features, label ``vote``), its spector (32 rows) and fair (6,366 rows, label
``occupation``, 6 classes) subsampled to 1,000 rows, and scikit-learn's digits (1,797 × 64)
for the chunked methods and the in-memory ones that take seconds there.

Per comparison (every solver the command line picks, 3 seeded random starts, each run capped
at ``--cap`` seconds, 120 by default, so that an unbounded method such as NCA on a separable
table ends): the whole ``ldr compare`` wall time (loading, runs and certificates), its
slowest run, and how many runs a budget stopped (the cap, or ``max_iter``).  The command
line's default, a budget shared by the runs of one comparison
(``ldr.cli.budget.TIME_BUDGET``), cuts a comparison when its total exceeds it: the last column
says whether it would.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time

import numpy as np


def _tables(check: bool, folder: pathlib.Path) -> list[tuple[str, str, str | None]]:
    """``(name, --data, --label-column)`` of each dataset."""
    if not check:
        return [(n, n, None) for n in ("iris", "wine", "breast_cancer")]
    import statsmodels.api as sm

    out = []
    anes = sm.datasets.anes96.load_pandas().data
    anes.drop(columns=["popul"]).to_csv(folder / "anes96.csv", index=False)
    out.append(("anes96", str(folder / "anes96.csv"), "vote"))
    spector = sm.datasets.spector.load_pandas().data
    spector.to_csv(folder / "spector.csv", index=False)
    out.append(("spector", str(folder / "spector.csv"), "GRADE"))
    fair = sm.datasets.fair.load_pandas().data.sample(1000, random_state=0)
    fair.to_csv(folder / "fair1000.csv", index=False)
    out.append(("fair[1000]", str(folder / "fair1000.csv"), "occupation"))
    out.append(("digits", "digits", None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="the data not chosen on")
    parser.add_argument("--cap", type=float, default=120.0, help="seconds per run")
    parser.add_argument("--methods", default="", help="comma-separated (default: all)")
    args = parser.parse_args()
    from ldr.cli import budget as cli_budget
    from ldr.cli import commands as cli
    from ldr.driver import registry

    methods = args.methods.split(",") if args.methods else registry.names()
    print(f"{'data':<14} {'method':<6} {'runs':>4} {'total [s]':>9} {'slowest':>8} "
          f"{'budget':>6}  cut by the {cli_budget.TIME_BUDGET:g} s default?")
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        for name, data, label in _tables(args.check, folder):
            for method in methods:
                if name == "digits" and method in ("nca", "lmnn", "ksdr", "mds", "wda",
                                                   "hsic", "lpp", "npe"):
                    continue  # minutes each: out of this benchmark's scope
                out = folder / "out.json"
                argv = ["compare", "--method", method, "--data", data, "--max-time",
                        str(args.cap), "--json", str(out), "--no-legend"]
                if label is not None:
                    argv += ["--label-column", label]
                t0 = time.perf_counter()
                stdout, sys.stdout = sys.stdout, open("/dev/null", "w")  # noqa: SIM115
                stderr, sys.stderr = sys.stderr, open("/dev/null", "w")  # noqa: SIM115
                try:
                    status = cli.main(argv)
                finally:
                    sys.stdout.close(), sys.stderr.close()
                    sys.stdout, sys.stderr = stdout, stderr
                total = time.perf_counter() - t0
                if status != 0:
                    print(f"{name:<14} {method:<6} error (exit status {status})")
                    continue
                runs = json.loads(out.read_text())["runs"]
                times = np.array([r["time"] for r in runs])
                capped = sum(r["verdict"] == "budget" for r in runs)
                cut = "yes" if total > cli_budget.TIME_BUDGET else "no"
                print(f"{name:<14} {method:<6} {len(runs):>4} {total:>9.2f} "
                      f"{times.max():>8.2f} {capped:>6}  {cut}", flush=True)


if __name__ == "__main__":
    main()
