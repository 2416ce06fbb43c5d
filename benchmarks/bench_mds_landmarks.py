"""Benchmark: where MDS's default switches from the exact stress to landmarks, and the error.

Run from the checkout root, under the shared lock (timings must not overlap)::

    flock /tmp/ldr-bench.lock .venv/bin/python benchmarks/bench_mds_landmarks.py \\
        > benchmarks/results/bench_mds_landmarks.txt

What is measured.  ``ldr.estimators.MDS(2)`` fitted exactly (``landmarks=None``) and with m
landmarks (``landmarks=m``), on

* ``swissroll``: scikit-learn's ``make_swiss_roll(n, noise=0.5, random_state=0)`` (3
  coordinates) with 17 standard-normal noise columns (seed 1): d = 20;
* ``digits``: scikit-learn's bundled digits table (1797 × 64), the first n rows of a seeded
  permutation (only up to its 1797 rows).

Each fit runs in its own child process (``--child``) with BLAS pinned to one thread
(threadpoolctl, and ``OMP/OPENBLAS_NUM_THREADS=1``), so its peak resident memory
(``VmHWM``) is its own; "beyond data" is that peak less the child's resident memory once its
data were made (imports included).  Time: the exact fit's median over ``--repeats`` runs
(one run past ``--repeat-max-n`` rows, where a run takes minutes); a landmark row's median
over its ``--seeds`` landmark draws (``random_state`` 0, 1, …; all draws of a row in one
child, whose peak is theirs).

The error of a landmark answer M_m against the exact answer M_ex at the same n, both read by
the exact objective: the largest principal angle, ``sin_largest_angle(M_m, M_ex)``, and the
relative excess of the exact Kruskal stress-1, (stress(M_m) − stress(M_ex)) / stress(M_ex)
(positive: the landmark answer keeps the distances worse); median and largest over the
draws.  The last table says what ``MDS()`` (``landmarks="auto"``) does at each n.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import run_child as common_run_child  # noqa: E402
from _common import status_mb  # noqa: E402


def make_data(name: str, n: int) -> np.ndarray:
    if name == "swissroll":
        from sklearn.datasets import make_swiss_roll

        roll, _ = make_swiss_roll(n, noise=0.5, random_state=0)
        noise = np.random.default_rng(1).standard_normal((n, 17))
        return np.hstack([roll, noise])
    if name == "digits":
        from sklearn.datasets import load_digits

        X = load_digits().data.astype(float)
        if n > len(X):
            raise SystemExit(f"digits has {len(X)} rows, asked for {n}")
        return X[np.random.default_rng(0).permutation(len(X))[:n]]
    raise SystemExit(f"unknown data {name!r}")



def child(name: str, n: int, landmarks: int | None, seeds: list[int], repeats: int) -> dict:
    """One configuration in this process: its fits' times and answers (one per landmark draw
    ``seeds``, each run ``repeats`` times), the JSON row."""
    from threadpoolctl import threadpool_limits

    import ldr.estimators as est

    X = make_data(name, n)
    est.MDS(2).get_params()            # the imports before the baseline
    base = status_mb("VmRSS")
    fits = []
    with threadpool_limits(1):
        for seed in seeds:
            times = []
            for _ in range(repeats):
                model = est.MDS(2, landmarks=landmarks, random_state=seed)
                start = time.perf_counter()
                model.fit(X)
                times.append(time.perf_counter() - start)
            fits.append({"seed": seed, "times": times, "n_iter": int(model.n_iter_),
                         "converged": bool(model.result_.converged),
                         "stress_own": float(model.stress_),
                         "M": np.asarray(model.M_).tolist()})
    return {"data": name, "n": n, "m": landmarks, "fits": fits,
            "peak_mb": status_mb("VmHWM"), "base_mb": base}


def run_child(name, n, landmarks, seeds, repeats) -> dict:
    return common_run_child(__file__, name, n, landmarks if landmarks is not None else 0,
                            ",".join(map(str, seeds)), repeats)


def without_points(row: dict) -> dict:
    return {**row, "fits": [{k: v for k, v in f.items() if k != "M"} for f in row["fits"]]}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["swissroll", "digits"])
    p.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4096, 8192],
                   help="rows of swissroll (digits: those up to 1797, and 1797)")
    p.add_argument("--m", type=int, nargs="+", default=[250, 500, 1000],
                   help="candidate numbers of landmarks")
    p.add_argument("--seeds", type=int, default=5, help="landmark draws per (n, m)")
    p.add_argument("--repeats", type=int, default=3, help="runs of an exact fit")
    p.add_argument("--repeat-max-n", type=int, default=2000,
                   help="one exact run beyond this many rows")
    p.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        name, n, m, seed, repeats = args.child
        print(json.dumps(child(name, int(n), int(m) or None,
                               [int(v) for v in seed.split(",")], int(repeats))))
        return

    from _common import print_header, print_table

    import ldr
    from ldr.estimators import mds as mds_estimator
    from ldr.objectives import MDS

    command = "python benchmarks/bench_mds_landmarks.py " + " ".join(sys.argv[1:])
    print_header("MDS: exact stress against landmarks, around the default's switch", [
        f"command: {command.strip()} (under flock /tmp/ldr-bench.lock)",
        f"data {args.data}, n {args.n}, candidate m {args.m}, {args.seeds} landmark draws, "
        f"exact fits: median of {args.repeats} runs up to n = {args.repeat_max_n}, one beyond; "
        "r = 2; one fit per child process, BLAS on one thread",
        "swissroll: make_swiss_roll(n, noise=0.5, random_state=0) and 17 standard-normal "
        "columns (seed 1), d = 20; digits: scikit-learn's bundled table (1797 × 64), the first "
        "n rows of a seeded permutation",
        f"the switch: EXACT_MAX_SAMPLES = {mds_estimator.EXACT_MAX_SAMPLES} (= STORE_MAX, the "
        "rows up to which the exact objective stores its n×n dissimilarities, 128 MiB; past "
        "it every evaluation recomputes them by blocks of rows)",
        "error: the exact stress-1 at each answer (ldr.objectives.MDS, all n² pairs); "
        "excess = (stress(landmark answer) − stress(exact answer)) / stress(exact answer); "
        "sin = sin of the largest principal angle between the two subspaces"])
    rows, switch = [], []
    worst = {m: [] for m in args.m}        # (excess, sin, data, n) of every draw, per m
    at_switch = {}                         # (data, m) → (landmark time, exact time)
    wall = time.perf_counter()
    for name in args.data:
        ns = args.n if name != "digits" else sorted({n for n in args.n if n < 1797} | {1797})
        for n in ns:
            X = make_data(name, n)
            exact_obj = MDS(X, 2)
            reps = args.repeats if n <= args.repeat_max_n else 1
            ex = run_child(name, n, None, [0], reps)
            M_ex = np.asarray(ex["fits"][0]["M"])
            s_ex = exact_obj.stress(M_ex)
            rows.append([name, n, "exact", f"{statistics.median(ex['fits'][0]['times']):.2f} s",
                         f"{ex['peak_mb']:.0f} MB", f"{ex['peak_mb'] - ex['base_mb']:.0f} MB",
                         f"{ex['fits'][0]['n_iter']}", f"{s_ex:.5f}", "", "", "", ""])
            print(json.dumps({**without_points(ex), "exact_stress": s_ex}), flush=True)
            for m in args.m:
                if m >= n:
                    continue
                run = run_child(name, n, m, list(range(args.seeds)), 1)
                excess, sines, stresses = [], [], []
                for fit in run["fits"]:
                    M = np.asarray(fit["M"])
                    stresses.append(exact_obj.stress(M))
                    excess.append((stresses[-1] - s_ex) / s_ex)
                    sines.append(float(ldr.manifolds.sin_largest_angle(M, M_ex)))
                worst[m] += [(e, a, name, n) for e, a in zip(excess, sines)]
                t_lm = statistics.median(f["times"][0] for f in run["fits"])
                if n == mds_estimator.EXACT_MAX_SAMPLES:
                    at_switch[(name, m)] = (t_lm, statistics.median(ex["fits"][0]["times"]))
                print(json.dumps({**without_points(run), "exact_stress": stresses,
                                  "excess": excess, "sin": sines}), flush=True)
                rows.append([name, n, f"m = {m}",
                             f"{statistics.median(f['times'][0] for f in run['fits']):.2f} s",
                             f"{run['peak_mb']:.0f} MB",
                             f"{run['peak_mb'] - run['base_mb']:.0f} MB",
                             "/".join(str(f["n_iter"]) for f in run["fits"]),
                             f"{statistics.median(stresses):.5f}",
                             f"{statistics.median(excess):+.2%}", f"{max(excess):+.2%}",
                             f"{statistics.median(sines):.3f}", f"{max(sines):.3f}"])
            chosen = mds_estimator.auto_landmarks(n)
            switch.append([name, n, "exact" if chosen is None else f"m = {chosen}"])
            del exact_obj
    print()
    print_table(["data", "n", "fit", "time", "peak RSS", "beyond data", "iterations",
                 "exact stress-1", "excess (median)", "excess (max)", "sin (median)",
                 "sin (max)"], rows, left=3)
    print()
    print(f"MDS() (landmarks=\"auto\"): exact up to EXACT_MAX_SAMPLES = "
          f"{mds_estimator.EXACT_MAX_SAMPLES} rows, else auto_landmarks(n) landmarks")
    print_table(["data", "n", "the default's fit"], switch, left=3)
    print()
    print("per candidate m, over every data set, n and draw above: the largest excess and "
          "sin (and where), and at n = EXACT_MAX_SAMPLES the landmark fit's median time "
          "against the exact fit's")
    summary = []
    for m, draws in worst.items():
        if not draws:
            continue
        e = max(draws)
        a = max(draws, key=lambda t: t[1])
        times = "; ".join(f"{data}: {t:.2f} s vs {t_ex:.2f} s ({t_ex / t:.1f}× faster)"
                          for (data, mm), (t, t_ex) in at_switch.items() if mm == m)
        summary.append([f"m = {m}", f"{e[0]:+.2%} ({e[2]}, n = {e[3]})",
                        f"{a[1]:.3f} ({a[2]}, n = {a[3]})", times or "—"])
    print_table(["landmarks", "largest excess", "largest sin", "time at the switch"],
                summary)
    print(f"\nwall time of the whole run: {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
