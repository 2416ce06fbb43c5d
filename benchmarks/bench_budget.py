"""Benchmark: a smaller budget never costs more (issue 25 item 4) — ``SupervisedHSIC(9)``
with its default budget against ``max_iter=3``, at n = 4000, 16 000 and 32 000.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_budget.py            # ~5 min
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_budget.py --quick    # n = 4000
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_budget.py --sizes 32000

What is measured.  Data: ``make_classification(n, 32 features, 12 informative, 0 redundant,
10 classes, one cluster per class, random_state=0)`` (``bench_hsic_scale.py``'s), q = 9, the
estimator's defaults otherwise (Gaussian kernel, σ the median distance, the default solver
``["ism", "trust-region"]``).  Each fit runs in a fresh child process with BLAS pinned to one
thread (threadpoolctl): its ``fit`` wall time and CPU time (``time.process_time``, which
other processes on a shared machine inflate far less than the wall clock; medians over
``--repeats`` fits at n = 4000, one fit above) and its peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of the child, the data included).  Rows:

* ``default`` — ``SupervisedHSIC(9)``: max_iter left at its default, a per-stage cap;
* ``max_iter=3`` — a budget set by the user: it bounds the whole W-step (ISM's iterations and
  the trust region's Hessian-vector products together); ISM reaching it ends the chain;

The ratio columns are the fit's time over the default fit's at the same n (≤ 1 is the
target).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common

Q = 9


def dataset(n: int):
    from sklearn.datasets import make_classification

    return make_classification(n, 32, n_informative=12, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=0)


def child(n: int, config: str, repeats: int) -> dict:
    import warnings

    from ldr.estimators import SupervisedHSIC

    X, y = dataset(n)
    times, cpus, res = [], [], None
    for _ in range(repeats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = {} if config == "default" else {"max_iter": 3}
            t0, c0 = time.perf_counter(), time.process_time()
            est = SupervisedHSIC(Q, **kw).fit(X, y)
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            res = est.result_
    return {"time": common.median(times), "times": times, "cpu": common.median(cpus),
            "n_iter": res.n_iter,
            "counts": dict(res.counts), "converged": bool(res.converged),
            "stages": [(s.solver, s.n_iter) for s in res.stages], "reason": res.reason[:90],
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def run_child(*args, timeout=1800) -> dict:
    cmd = [sys.executable, "-P", str(Path(__file__).resolve()), "--child", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 4000 only")
    parser.add_argument("--repeats", type=int, default=3, help="fits per row at n = 4000")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4000, 16000, 32000],
                        help="the n to run (each its own locked run keeps a run short)")
    parser.add_argument("--configs", nargs="+", default=None,
                        help="rows to run (default: all)")
    args = parser.parse_args()
    common.print_header("A smaller budget never costs more: SupervisedHSIC(9), default vs "
                        "max_iter=3", ["fit time (median at n = 4000, one fit above) and peak "
                                       "RSS of a fresh child process; BLAS on 1 thread"])
    sizes = [4000] if args.quick else args.sizes
    rows = []
    for n in sizes:
        reps = args.repeats if n <= 4000 else 1
        configs = ["default", "max_iter=3"]
        configs = [c for c in configs if args.configs is None or c in args.configs]
        base = None
        for config in configs:
            r = run_child(n, config, reps)
            if "error" in r:
                rows.append([n, config, "error: " + r["error"][:60], "", "", "", "", "", "",
                             ""])
                continue
            base = (r["time"], r["cpu"]) if config == "default" else base
            sys.stdout.flush()
            work = ", ".join(f"{k} {v}" for k, v in sorted(r["counts"].items()))
            rows.append([n, config, common.fmt_time(r["time"]),
                         common.fmt_ratio(r["time"] / base[0]) if base else "",
                         common.fmt_time(r["cpu"]),
                         common.fmt_ratio(r["cpu"] / base[1]) if base else "",
                         f"{r['peak_gb']:.2f}", " → ".join(f"{s} {k}" for s, k in r["stages"]),
                         work, r["converged"]])
            print(json.dumps({"n": n, "config": config, **r}), file=sys.stderr)
    common.print_table(["n", "fit", "time", "÷ default", "CPU time", "÷ default", "peak GB",
                        "stages (iterations)", "oracle calls", "converged"], rows)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        a = sys.argv[2:]
        with common.single_threaded():
            print(json.dumps(child(int(a[0]), a[1], int(a[2]))))
    else:
        main()
