"""Benchmark: orthogonal LDA on the survey's generator — gain over the heuristic, ldr vs pymanopt.

Run from the checkout root (or anywhere, by path)::

    .venv/bin/python -P benchmarks/bench_lda.py            # 6 settings × 20 datasets
    .venv/bin/python -P benchmarks/bench_lda.py --quick    # 3 datasets, 200 per class

What is measured.  For d ∈ {10, 50, 100} and r ∈ {2, 4}, on the datasets
``ldr.datasets.make_lda(d, r, n_per_class=1000, seed=s)`` (r + 1 Gaussian classes),
s = 0..19, the objective ``ldr.objectives.LDA(X, y, r)`` (cost f = −tr(MᵀS_bM)/tr(MᵀS_wM) on
the Grassmann manifold) is solved by

* the heuristic: the orthonormalized top-r generalized eigenvectors of (S_b, S_w), value
  f_eig = cost(heuristic());
* ldr's ``"trust-region"`` from ``M0="heuristic"`` and from a seeded random start
  (``seed=1000 + s``); the answer kept is the one with the lower cost;
* pymanopt 2.2.1 ``TrustRegions`` with the autograd backend
  (``pymanopt_problem(obj, backend="autograd")``, verbosity 0) from the heuristic.

Both trust regions stop on the same rule, Riemannian gradient norm ≤ ``--gtol`` (default
1e-8; ldr ``gtol``, pymanopt ``min_gradient_norm``); ldr keeps its other defaults
(xtol = 1e-10, max_iter = 1000), pymanopt its own (max_iterations = 1000).

Reported per (d, r):

* the survey's normalized improvement (Eq. 28) of ldr's answer over the heuristic,
  (ratio_orth − ratio_heur)/|ratio_heur| = −(f_orth − f_eig)/|f_eig|: median, 25th and 75th
  percentiles, and how many datasets end *below* the heuristic (ratio smaller; should be 0);
* how often the random start found a strictly better answer than the heuristic start;
* agreement with pymanopt: the largest, over datasets, |ratio_ldr − ratio_pymanopt|/ratio_ldr
  and the largest sine of the largest principal angle between the two answers
  (``ldr.manifolds.sin_largest_angle``), for ldr's kept answer and for ldr's run from the
  heuristic (the same start as pymanopt);
* time: the heuristic (``heuristic()``, wall), ldr from the heuristic (``Result.time``),
  ldr's two starts together, pymanopt (wall time of ``optimizer.run``), each the median of
  ``--repeats`` runs (default 3) per dataset and then the median over datasets; the median
  and range over datasets of the ratio ldr (heuristic start) ÷ pymanopt, and the median
  iterations of both.  Neither solver's time includes computing the heuristic start.

BLAS is pinned to one thread for the whole run.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pymanopt

import ldr
from ldr.manifolds import sin_largest_angle
from ldr.solvers.pymanopt_adapter import pymanopt_problem

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common

DIMS = (10, 50, 100)
RANKS = (2, 4)


@dataclass
class Outcome:
    """One dataset's results."""

    f_eig: float
    f_heur_start: float  # ldr from the heuristic
    f_rand_start: float  # ldr from the random start
    f_ours: float  # the better of the two
    f_pm: float
    ratio_ours: float
    ratio_pm: float
    sin_kept: float  # sin θ_max between ldr's kept answer and pymanopt's
    sin_same_start: float  # ... between ldr-from-heuristic and pymanopt
    rel_kept: float  # |ratio_ours - ratio_pm| / ratio_ours
    rel_same_start: float
    t_heur: float
    t_ours_h: float
    t_ours_r: float
    t_pm: float
    it_ours_h: int
    it_pm: int
    ours_ok: bool  # both ldr runs converged
    pm_ok: bool  # pymanopt stopped on its gradient norm
    notes: list[str]


def improvement(f: float, f_eig: float) -> float:
    """Survey Eq. 28 with the positive ratio ρ = −f: (ρ − ρ_eig)/|ρ_eig|."""
    return -(f - f_eig) / abs(f_eig)


def one_dataset(d: int, r: int, seed: int, n_per_class: int, gtol: float,
                repeats: int) -> Outcome:
    X, y = ldr.datasets.make_lda(d, r, n_per_class=n_per_class, seed=seed)
    obj = ldr.objectives.LDA(X, y, r)
    notes: list[str] = []

    t_heur, heur = common.median_time(common.timed(obj.heuristic), repeats)
    H = heur[0]
    f_eig = float(obj.cost(H))

    def ours(M0, rseed=None):
        def run():
            res = ldr.solve(obj, "trust-region", start=M0, random_state=rseed, tol=gtol)
            return res.time, res
        return run

    gc.collect()
    t_ours_h, res_h = common.median_time(ours("heuristic"), repeats)
    gc.collect()
    t_ours_r, res_r = common.median_time(ours("random", 1000 + seed), repeats)
    res_h, res_r = res_h[0], res_r[0]
    for label, res in (("heuristic start", res_h), ("random start", res_r)):
        if not res.converged:
            notes.append(f"ldr {label} did not converge: {res.reason}")
    kept = res_h if res_h.cost <= res_r.cost else res_r

    problem = pymanopt_problem(obj, backend="autograd")

    def pm_run():
        optimizer = pymanopt.optimizers.TrustRegions(min_gradient_norm=gtol, verbosity=0)
        start = time.time()
        result = optimizer.run(problem, initial_point=H)
        return time.time() - start, result

    gc.collect()
    t_pm, pm = common.median_time(pm_run, repeats)
    pm = pm[0]
    M_pm = np.asarray(pm.point, dtype=float)
    criterion = str(pm.stopping_criterion).strip()
    pm_ok = "min grad norm" in criterion
    if not pm_ok:
        notes.append(f"pymanopt did not converge: {criterion}")

    ratio_ours, ratio_pm = obj.ratio(kept.M), obj.ratio(M_pm)
    ratio_h = obj.ratio(res_h.M)
    return Outcome(
        f_eig=f_eig, f_heur_start=res_h.cost, f_rand_start=res_r.cost, f_ours=kept.cost,
        f_pm=float(obj.cost(M_pm)), ratio_ours=ratio_ours, ratio_pm=ratio_pm,
        sin_kept=sin_largest_angle(kept.M, M_pm), sin_same_start=sin_largest_angle(res_h.M, M_pm),
        rel_kept=abs(ratio_ours - ratio_pm) / ratio_ours,
        rel_same_start=abs(ratio_h - ratio_pm) / ratio_h,
        t_heur=t_heur, t_ours_h=t_ours_h, t_ours_r=t_ours_r, t_pm=t_pm,
        it_ours_h=res_h.n_iter, it_pm=int(pm.iterations), ours_ok=res_h.converged and
        res_r.converged, pm_ok=pm_ok, notes=notes)


def warm_up(gtol: float) -> None:
    """Untimed first calls into autograd, pymanopt and ldr."""
    X, y = ldr.datasets.make_lda(10, 2, n_per_class=50, seed=12345)
    obj = ldr.objectives.LDA(X, y, 2)
    ldr.solve(obj, "trust-region", start="heuristic", tol=gtol)
    pymanopt.optimizers.TrustRegions(min_gradient_norm=gtol, verbosity=0).run(
        pymanopt_problem(obj, backend="autograd"), initial_point=obj.heuristic())


def benchmark(seeds, n_per_class: int, gtol: float, repeats: int) -> None:
    warm_up(gtol)
    results: dict[tuple[int, int], list[Outcome]] = {}
    for d in DIMS:
        for r in RANKS:
            out = [one_dataset(d, r, s, n_per_class, gtol, repeats) for s in seeds]
            results[d, r] = out
            print(f"  d={d:3d} r={r}: done ({len(out)} datasets; median ldr "
                  f"{common.fmt_time(common.median([o.t_ours_h for o in out]))}, pymanopt "
                  f"{common.fmt_time(common.median([o.t_pm for o in out]))})", flush=True)
    print()
    report(results, seeds)


def report(results, seeds) -> None:
    n = len(seeds)
    rows = []
    for (d, r), out in results.items():
        imp = np.array([improvement(o.f_ours, o.f_eig) for o in out])
        below = sum(o.ratio_ours < -o.f_eig for o in out)
        rand_better = sum(o.f_rand_start < o.f_heur_start - 1e-12 * abs(o.f_heur_start)
                          for o in out)
        p25, p50, p75 = np.percentile(imp, [25, 50, 75])
        rows.append([f"{d}", f"{r}", f"{p50:.4g}", f"{p25:.4g}", f"{p75:.4g}",
                     f"{imp.min():.3g}", f"{below}/{n}", f"{rand_better}/{n}"])
    print("Normalized improvement of ldr's answer over the heuristic, survey Eq. 28, "
          "(ratio_ldr − ratio_heur)/|ratio_heur|:")
    common.print_table(["d", "r", "median", "p25", "p75", "min", "below heuristic",
                        "random start better"], rows, left=0)
    print()

    rows = []
    for (d, r), out in results.items():
        rows.append([f"{d}", f"{r}",
                     f"{max(o.rel_kept for o in out):.1e}",
                     f"{max(o.sin_kept for o in out):.1e}",
                     f"{max(o.rel_same_start for o in out):.1e}",
                     f"{max(o.sin_same_start for o in out):.1e}",
                     f"{sum(o.ours_ok for o in out)}/{n}", f"{sum(o.pm_ok for o in out)}/{n}"])
    print("Agreement with pymanopt TrustRegions (from the heuristic): max over datasets of "
          "|Δratio|/ratio and of sin θ_max between the answers:")
    common.print_table(["d", "r", "kept: |Δratio|/ratio", "kept: sin θ",
                        "heur. start: |Δratio|/ratio", "heur. start: sin θ",
                        "ldr converged", "pymanopt converged"], rows, left=0)
    print()

    rows = []
    for (d, r), out in results.items():
        ratios = [o.t_ours_h / o.t_pm for o in out]
        rows.append([f"{d}", f"{r}",
                     common.fmt_time(common.median([o.t_heur for o in out])),
                     common.fmt_time(common.median([o.t_ours_h for o in out])),
                     common.fmt_time(common.median([o.t_ours_h + o.t_ours_r for o in out])),
                     common.fmt_time(common.median([o.t_pm for o in out])),
                     common.fmt_ratio(common.median(ratios)), common.fmt_range(ratios),
                     f"{common.median([o.it_ours_h for o in out]):g}",
                     f"{common.median([o.it_pm for o in out]):g}"])
    print("Time (median over datasets of the median of repeats); ratio per dataset, "
          "ldr from the heuristic ÷ pymanopt from the heuristic (< 1: ldr faster):")
    common.print_table(["d", "r", "heuristic", "ldr (heur. start)", "ldr (2 starts)",
                        "pymanopt", "median ours ÷ pymanopt", "range", "iters ldr",
                        "iters pymanopt"], rows, left=0)
    print()

    notes = [(d, r, s, note) for (d, r), out in results.items()
             for s, o in zip(seeds, out) for note in o.notes]
    if notes:
        print("Problems:")
        for d, r, s, note in notes:
            print(f"  d={d} r={r} seed={s}: {note}")
    else:
        print("Every ldr and pymanopt run stopped on its gradient-norm criterion.")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 datasets per setting, 200 samples per class, 1 repeat")
    parser.add_argument("--datasets", type=int, default=20, help="datasets per setting (20)")
    parser.add_argument("--n-per-class", type=int, default=None,
                        help="samples per class (1000; 200 with --quick)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs per solver and dataset (3; 1 with --quick)")
    parser.add_argument("--gtol", type=float, default=1e-8,
                        help="gradient-norm stopping threshold for both solvers (1e-8)")
    args = parser.parse_args(argv)
    n_sets = 3 if args.quick else args.datasets
    n_per_class = args.n_per_class or (200 if args.quick else 1000)
    repeats = args.repeats or (1 if args.quick else 3)
    seeds = list(range(n_sets))

    with common.single_threaded():
        common.print_header(
            "Orthogonal LDA benchmark: gain over the heuristic, ldr vs pymanopt trust regions",
            [f"datasets: ldr.datasets.make_lda(d, r, n_per_class={n_per_class}, seed=s), "
             f"d in {DIMS}, r in {RANKS}, s = 0..{n_sets - 1}; objective "
             "ldr.objectives.LDA(X, y, r) (Grassmann)",
             "ldr: trust-region from M0='heuristic' and from a random start (seed=1000+s), "
             "the better kept; pymanopt: TrustRegions, autograd backend, from the heuristic",
             f"stopping: Riemannian gradient norm <= {args.gtol:g} for both (ldr gtol, "
             "pymanopt min_gradient_norm); other settings at their defaults",
             "times: ldr Result.time; pymanopt wall time of optimizer.run(); heuristic wall "
             f"time of heuristic(); each the median of {repeats} run(s); BLAS pinned to 1 "
             "thread (threadpoolctl)"])
        benchmark(seeds, n_per_class, args.gtol, repeats)


if __name__ == "__main__":
    main()
