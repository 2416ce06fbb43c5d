"""The stochastic routes' epochs: NCA's and LargeMarginDML's sampled batches at n rows.

The estimators' stochastic route (``ldr.solvers.routes.stochastic_then_polish``: Riemannian
Adam on batches of candidate sets, ``objectives/candidates.py``) spends nearly all of a
large fit in its epochs.  This script times that stage alone, for a few epochs, so that two
checkouts can be compared on the same machine in one session (run it in each, in turn):
the objective at its defaults on ``benchmarks/bench_pairwise_scale.py``'s classification
table (d = 50, 10 classes, r = 2, seed 0), its batches sampled as the estimator samples them
(seed 0), then Adam from the objective's heuristic start for ``--epochs`` epochs (the
route's own Adam, its refresh of the candidates' neighbours included).  BLAS on one thread.

Prints one JSON line: the seconds to build the objective, to run the epochs, and the last
epoch's estimated cost (the same at two checkouts that compute the same batches)::

    python -P benchmarks/bench_stochastic_epochs.py --method nca --n 1000000 --epochs 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", choices=["nca", "lmnn"], default="nca")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_pairwise_scale import make_data

    import ldr
    from ldr.objectives import NCA, LargeMarginDML
    from ldr.solvers import routes

    X, y = make_data("classification", args.n)
    with threadpool_limits(1):
        start = time.perf_counter()
        cls = NCA if args.method == "nca" else LargeMarginDML
        obj = cls(X, y, 2)
        obj.sample_batches(seed=0)
        built = time.perf_counter()
        adam = routes.stochastic_then_polish(obj.n_samples, max_epochs=args.epochs)[0]
        res = ldr.solve(obj, adam, start="heuristic")
        done = time.perf_counter()
    print(json.dumps({"method": args.method, "n": args.n, "epochs": args.epochs,
                      "build_s": round(built - start, 2), "epochs_s": round(done - built, 2),
                      "cost": res.cost, "commit": _commit()}))


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).resolve().parent,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    main()
