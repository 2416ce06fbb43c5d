"""Benchmark: reduced-rank (ridge) regression vs the closed form and scikit-learn's
PLSRegression / CCA.

Run from the checkout root::

    .venv/bin/python -P benchmarks/bench_rrr.py            # full sizes
    .venv/bin/python -P benchmarks/bench_rrr.py --quick

Part 1 — the closed form, on 20 random problems (seed s = 0..19: n ∈ [20, 120), p ∈ [2, 12),
q ∈ [2, 8), r < min(p, q), inputs of mixed scales and offsets, a low-rank signal plus unit
noise; the generator of tests/test_rrr.py).  For α = 0: the relative difference between the
cost ‖Y − XB − 1bᵀ‖² of ldr's answer and of Izenman's closed form (least-squares fit projected
onto the top-r right singular vectors of its fitted values,
``ldr.objectives.rrr.reduced_rank_closed_form``), both evaluated directly.  For
α = ½‖X_c‖₂² (a penalty that matters): how much ldr's penalized cost ‖Y − XB‖² + α‖B‖²_F lies
below the closed form's and below "ridge fit, then project" (relative).

Part 2 — prediction, against the tools a user would otherwise pick, on a 50/50 train/test
split (seeded):

* synthetic latent-factor data: p inputs with correlated columns (X = F L + E), q outputs
  Y = X B + noise with B of rank 3 (``--sizes``);
* scikit-learn's bundled Linnerud data (3 exercise inputs → 3 physiological outputs, n = 20).

Methods, all with r components: ldr ``ReducedRankRegression(r)`` (α = 0), the same with α
chosen by ``GridSearchCV`` (5-fold, α ∈ 10^{-3..3} · ‖X_c‖₂²/n on the training half; the
time is that of one fit at the chosen α), scikit-learn ``PLSRegression(r, scale=False)`` and
``CCA(r, scale=False)``, and full-rank least squares as context.  Reported: the training cost
‖Y − Ŷ‖²_F (rank-r RRR at α = 0 is the least that any rank-r linear map with intercept can
reach — PLS and CCA predict through a rank-r map too), held-out R² (scikit-learn's
``r2_score``, uniform average over outputs), fit time (median of ``--repeats``) and its
ratio to PLSRegression's.

BLAS is pinned to one thread for the whole run.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.cross_decomposition import CCA, PLSRegression
from sklearn.datasets import load_linnerud
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, KFold, train_test_split

from ldr.estimators import ReducedRankRegression
from ldr.objectives.rrr import ReducedRankRegression as RRRObjective
from ldr.objectives.rrr import penalized_cost, reduced_rank_closed_form

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common


def random_problem(seed):
    """tests/test_rrr.py's generator."""
    rng = np.random.default_rng(seed)
    n, p, q = int(rng.integers(20, 120)), int(rng.integers(2, 12)), int(rng.integers(2, 8))
    r = int(rng.integers(1, min(p, q)))
    X = rng.standard_normal((n, p)) * rng.uniform(0.1, 10.0, p) + rng.uniform(-5, 5, p)
    k = int(rng.integers(1, min(p, q) + 1))
    Y = X @ rng.standard_normal((p, k)) @ rng.standard_normal((k, q)) \
        + rng.standard_normal((n, q)) + 3.0
    return X, Y, r


def part1(n_problems):
    rows = []
    for seed in range(n_problems):
        X, Y, r = random_problem(seed)
        closed = reduced_rank_closed_form(X, Y, r)
        f_closed = penalized_cost(X, Y, closed)
        ours = ReducedRankRegression(r).fit(X, Y)
        rel0 = abs(penalized_cost(X, Y, ours.coef_.T) - f_closed) / f_closed
        alpha = 0.5 * np.linalg.norm(X - X.mean(0), 2) ** 2
        pen = ReducedRankRegression(r, alpha=alpha).fit(X, Y)
        f_pen_closed = penalized_cost(X, Y, closed, alpha)
        obj = RRRObjective(X, Y, r, alpha=alpha)
        f_heur = obj.penalized_cost(obj.heuristic())
        rows.append([seed, f"{X.shape[0]}×{X.shape[1]}→{Y.shape[1]}", r, f"{rel0:.1e}",
                     f"{(f_pen_closed - pen.cost_) / f_pen_closed:.2e}",
                     f"{(f_heur - pen.cost_) / f_heur:.2e}"])
    print(f"Part 1: {n_problems} random problems")
    common.print_table(["seed", "n×p→q", "r", "α=0: |cost − closed| / closed",
                        "α>0: below closed form (rel.)", "α>0: below fit-then-project (rel.)"],
                       rows)
    worst = max(float(r[3]) for r in rows)
    beaten = sum(float(r[4]) > 0 for r in rows)
    print(f"worst α = 0 relative difference {worst:.1e} (target ≤ 1e-8); α > 0 beats the "
          f"closed form's penalized cost on {beaten}/{n_problems}")
    print()


def synthetic(n, p, q, k, seed):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, max(p // 4, 1)))
    X = F @ rng.standard_normal((F.shape[1], p)) + 0.5 * rng.standard_normal((n, p))
    B = rng.standard_normal((p, k)) @ rng.standard_normal((k, q)) / np.sqrt(p)
    Y = X @ B + 2.0 * rng.standard_normal((n, q))
    return X, Y


def _fit(template, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(template).fit(X, Y)


def part2(sizes, repeats, seed=0):
    datasets = [(f"synthetic n={n} p={p} q={q} (B rank 3)", *synthetic(n, p, q, 3, seed), 3)
                for n, p, q in sizes]
    lin = load_linnerud()
    datasets.append(("linnerud (n=20, 3→3)", lin.data, lin.target, 1))
    for name, X, Y, r in datasets:
        Xtr, Xte, Ytr, Yte = train_test_split(X, Y, test_size=0.5, random_state=seed)
        scale = np.linalg.norm(Xtr - Xtr.mean(0), 2) ** 2 / len(Xtr)
        grid = GridSearchCV(ReducedRankRegression(r),
                            {"alpha": list(scale * np.logspace(-3, 3, 13))},
                            cv=KFold(5, shuffle=True, random_state=seed)).fit(Xtr, Ytr)
        alpha = grid.best_params_["alpha"]
        makers = {
            "ldr RRR (α = 0)": ReducedRankRegression(r),
            f"ldr RRR (α = {alpha:.3g}, CV)": ReducedRankRegression(r, alpha=alpha),
            "PLSRegression": PLSRegression(r, scale=False, max_iter=1000),
            "CCA": CCA(r, scale=False, max_iter=1000),
            "least squares (full rank)": LinearRegression(),
        }
        rows, times = [], {}
        for label, template in makers.items():
            t, models = common.median_time(common.timed(partial(_fit, template, Xtr, Ytr)),
                                           repeats)
            model = models[0]
            times[label] = t
            train = float(np.sum((Ytr - model.predict(Xtr)) ** 2))
            rows.append([label, f"{train:.6g}", f"{r2_score(Yte, model.predict(Xte)):.4f}",
                         common.fmt_time(t)])
        for row in rows:
            row.append(common.fmt_ratio(times[row[0]] / times["PLSRegression"]))
        print(f"Part 2: {name}, r = {r}, train/test 50/50")
        common.print_table(["method", "train ‖Y − Ŷ‖²", "test R²", "fit time",
                            "time ÷ PLS"], rows)
        print()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problems", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    sizes = [(200, 30, 10), (1000, 100, 40), (400, 150, 60)]
    if args.quick:
        sizes, args.repeats = [(200, 30, 10)], 1
    with common.single_threaded():
        common.print_header("Reduced-rank regression: closed form, PLS, CCA", [
            "ldr.estimators.ReducedRankRegression (Grassmann program of the output space, "
            "default solver ISM → trust region); times: median of repeats, BLAS 1 thread"])
        part1(args.problems)
        part2(sizes, args.repeats)


if __name__ == "__main__":
    main()
