"""Benchmark: what a solve costs on small problems, where Python, not arithmetic, dominates.

Run from the checkout root::

    .venv/bin/python -P benchmarks/bench_overhead.py            # ~3 minutes
    .venv/bin/python -P benchmarks/bench_overhead.py --quick    # smoke run

Three measurements, BLAS pinned to one thread, every time a median over repeats:

1. **Solve ÷ eigh.**  PCA (``make_pca(max(100, 2d), d)``, r = 2) and orthogonal LDA
   (``make_lda(d, r=2, n_per_class=max(50, d))``, three classes) for d ∈ {5, 10, 20, 50,
   100, 500}; ldr's ``"trust-region"`` and ``"gradient"`` from a seeded random start
   (``M0="random"``, seed 0), default tolerances.  The time is the wall time of the whole
   ``ldr.solve`` call (driver, validation, gradient scale, trace); the reference is one
   ``numpy.linalg.eigh`` of the problem's d×d matrix (C for PCA, S_w for LDA) — the cost of
   the eigenvector answer.  The table gives both ratios: whole solve ÷ eigh and one
   iteration ÷ eigh.
2. **Building LDA at d = 2000** (n = 4000, 5 classes): ``LDA(X, y, 2)`` ÷ computing its
   scatter matrices alone (``scatter_matrices``): what validation adds.
3. **pymanopt's examples, side by side with pymanopt** (same start, same stopping rule: an
   absolute gradient-norm tolerance, ``gtol_scale=1.0`` in ldr):

   - ``packing_on_the_sphere``: 24 unit vectors in R³, cost s + ε log Σ_{i<j}
     exp((y_iᵀy_j − s)/ε), s = max_{i<j} y_iᵀy_j, ε = 0.005 (autograd).  pymanopt:
     ``ConjugateGradient`` on ``Elliptope(24, 3)``, min_gradient_norm 1e-8, as in the
     example.  ldr: the same cost on Stiefel(3, 1)^24, given once as one batched (24, 3, 1)
     manifold and once as a tuple of 24 factors, with its conjugate-gradient solver, its
     gradient solver (Barzilai–Borwein) and its trust region, gtol 1e-8.
   - ``rank_k_correlation_matrix_approximation``: n = 10 unit vectors in R^k, k = 3,
     minimize ¼‖XᵀX − A‖²_F for a random symmetric A (seed 0).  pymanopt: ``TrustRegions``
     on ``Oblique(3, 10)``, min_gradient_norm 1e-6 (its default).  ldr: trust region on
     Stiefel(3, 1)^10 (batched and tuple), gtol 1e-6.

   Each row gives the median time, ldr ÷ pymanopt (< 1: ldr is faster) and the final cost.

Times are process CPU time (``time.process_time``) unless ``--clock wall``: on a machine
shared with other programs the wall time of a 1 ms solve varies by 2× from run to run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import autograd.numpy as anp
import numpy as np
import pymanopt

import ldr
from ldr.core.linalg import polar
from ldr.objectives import LDA, PCA
from ldr.objectives.lda import scatter_matrices

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common

DIMS = (5, 10, 20, 50, 100, 500)
SOLVERS = ("trust-region", "gradient")
#: The clock of every measurement: process CPU time by default (``--clock wall`` for wall
#: time).  With BLAS on one thread it is the work done, and it does not count the time other
#: programs on a shared machine take from this one.
clock = time.process_time


def time_eigh(S: np.ndarray, budget: float = 0.2) -> float:
    """Median seconds of one ``numpy.linalg.eigh(S)`` (repeats fill about ``budget`` s)."""
    start = time.perf_counter()
    np.linalg.eigh(S)
    once = time.perf_counter() - start
    repeats = int(min(max(budget / max(once, 1e-7), 5), 500))
    return common.median_time(timed(lambda: np.linalg.eigh(S)), repeats)[0]


def timed(fn):
    """``fn`` returning ``(seconds on the clock, fn())``, for ``common.median_time``."""
    def run():
        start = clock()
        value = fn()
        return clock() - start, value
    return run


def problems(d: int):
    X = ldr.datasets.make_pca(max(100, 2 * d), d, seed=0)
    pca = PCA(X, 2)
    Xl, yl = ldr.datasets.make_lda(d, r=2, n_per_class=max(50, d), seed=0)
    lda = LDA(Xl, yl, 2)
    return [("PCA", pca, pca.C), ("LDA", lda, lda.Sw)]


def bare_trust_region(C: np.ndarray, M: np.ndarray, gtol: float = 1e-8):
    """The floor: ldr's RTR + truncated CG for PCA on Grassmann (cost −tr(MᵀCM)), the same
    steps and constants as :class:`ldr.solvers.trust_region.TrustRegion` (Δ₀ = Δ̄/8, κ = 0.1,
    θ = 1, ρ' = 0.1, ρ regularized, polar retraction by the same LAPACK call, relative gtol),
    inlined by hand with nothing else: no driver, no oracle checks, no counters, no trace, no
    stopping rule but the gradient's.  It takes the same iterates as ``ldr.solve`` (checked to
    rounding).  What it costs is what the algorithm's NumPy calls cost: no amount of
    streamlining the driver and geometry makes ldr's solve cheaper than this."""
    max_radius = math.sqrt(M.shape[1])
    radius = max_radius / 8
    CM = C @ M
    f, G = -np.vdot(M, CM), -2.0 * CM
    f_scale = abs(f)
    MtG = M.T @ G
    g = G - M @ MtG
    g_g = np.vdot(g, g)
    scale = math.sqrt(g_g)
    it = 0
    while math.sqrt(g_g) > gtol * scale and it < 1000:
        it += 1
        eta, Heta, r, r_r = np.zeros_like(M), np.zeros_like(M), g, g_g
        norm_r0 = math.sqrt(r_r)
        delta, e_Pe, e_Pd, d_Pd, boundary = -r, 0.0, 0.0, r_r, False
        for _ in range(M.size):
            H = -2.0 * (C @ delta)
            Hd = H - M @ (M.T @ H) - delta @ MtG
            d_Hd = np.vdot(delta, Hd)
            alpha = r_r / d_Hd
            e_Pe_new = e_Pe + 2.0 * alpha * e_Pd + alpha**2 * d_Pd
            if d_Hd <= 0 or e_Pe_new >= radius**2:
                tau = (-e_Pd + math.sqrt(max(e_Pd**2 + d_Pd * (radius**2 - e_Pe), 0.0))) / d_Pd
                eta, Heta, boundary = eta + tau * delta, Heta + tau * Hd, True
                break
            e_Pe, eta, Heta = e_Pe_new, eta + alpha * delta, Heta + alpha * Hd
            r = r + alpha * Hd
            r_r_new = np.vdot(r, r)
            if math.sqrt(r_r_new) <= norm_r0 * min(norm_r0 / scale, 0.1):
                break
            beta, r_r = r_r_new / r_r, r_r_new
            delta = beta * delta - r
            e_Pd, d_Pd = beta * (e_Pd + alpha * d_Pd), r_r + beta**2 * d_Pd
        N = polar(M + eta)
        CN = C @ N
        f_new = -np.vdot(N, CN)
        reg = max(f_scale, abs(f)) * 2.2e-16 * 1e3  # ρ regularized near convergence, as ldr's
        rho = (f - f_new + reg) / (reg - np.vdot(g, eta) - 0.5 * np.vdot(eta, Heta))
        if rho < 0.25:
            radius /= 4
        elif rho > 0.75 and boundary:
            radius = min(2 * radius, max_radius)
        if rho > 0.1:
            M, f, G = N, f_new, -2.0 * CN
            MtG = M.T @ G
            g = G - M @ MtG
            g_g = np.vdot(g, g)
    return M, it


def overhead_table(dims, repeats: int) -> None:
    print("1. Whole solve and one iteration, as multiples of one eigh of the same d×d matrix")
    print("   (random start, default tolerances; times are medians over "
          f"{repeats} runs)\n")
    rows = []
    for d in dims:
        for name, obj, S in problems(d):
            t_eigh = time_eigh(S)
            for solver in SOLVERS:
                def run(obj=obj, solver=solver):
                    start = clock()
                    res = ldr.solve(obj, solver, start="random", random_state=0)
                    return clock() - start, res
                seconds, results = common.median_time(run, repeats)
                res = results[-1]
                per_iter = seconds / max(res.n_iter, 1)
                rows.append([name, d, solver, res.n_iter, "yes" if res.converged else "NO",
                             common.fmt_time(seconds), common.fmt_time(per_iter),
                             common.fmt_time(t_eigh), f"{seconds / t_eigh:.1f}",
                             f"{per_iter / t_eigh:.2f}"])
            if name == "PCA":  # the floor: the same algorithm inlined, nothing else
                M0 = ldr.manifolds.Grassmann(*obj.shape).random_point(
                    np.random.default_rng(0))  # the start of M0="random", seed=0
                seconds, results = common.median_time(timed(lambda S=S, M0=M0:
                                                            bare_trust_region(S, M0)), repeats)
                n_iter = results[-1][1]
                rows.append([name, d, "bare RTR (floor)", n_iter, "yes",
                             common.fmt_time(seconds), common.fmt_time(seconds / n_iter),
                             common.fmt_time(t_eigh), f"{seconds / t_eigh:.1f}",
                             f"{seconds / n_iter / t_eigh:.2f}"])
    common.print_table(["problem", "d", "solver", "iters", "conv", "solve", "per iter", "eigh",
                        "solve÷eigh", "iter÷eigh"], rows, left=3)
    print("   bare RTR (floor): the trust region's algorithm for PCA inlined by hand with no "
          "driver,\n   checks, counters or trace (bare_trust_region): what its NumPy calls "
          "alone cost.\n")


def lda_build(d: int, n: int, repeats: int) -> None:
    print(f"2. Building LDA at d = {d} (n = {n}, 5 classes): construction ÷ scatter matrices\n")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = rng.integers(0, 5, n)
    t_scatter, _ = common.median_time(timed(lambda: scatter_matrices(X, y, 5)), repeats)
    t_build, _ = common.median_time(timed(lambda: LDA(X, y, 2)), repeats)
    common.print_table(["what", "time"], [["scatter_matrices", common.fmt_time(t_scatter)],
                                          ["LDA(X, y, 2)", common.fmt_time(t_build)],
                                          ["ratio", f"{t_build / t_scatter:.3f}"]])
    print()


# --- pymanopt's examples, as ldr objectives --------------------------------------------------
EPSILON = 0.005


def packing_cost(Y):
    """packing_on_the_sphere's cost of the unit rows y_i of Y (n × k), the example's formula:
    s = max of the strict upper triangle of YYᵀ (0 included);
    cost s + ε log Σ_{i<j} exp((y_iᵀy_j − s)/ε)."""
    G = Y @ Y.T
    s = anp.max(anp.triu(G, 1))
    E = anp.exp((G - s) / EPSILON)
    E = E - anp.diag(anp.diag(E))
    return s + EPSILON * anp.log(anp.sum(anp.triu(E, 1)))


def correlation_cost(Y, A):
    """¼‖YYᵀ − A‖²_F for unit rows y_i of Y (n × k)."""
    return 0.25 * anp.sum((Y @ Y.T - A) ** 2)


def ldr_objectives(cost, n: int, k: int):
    """The cost of an n × k matrix of unit rows on Stiefel(k, 1)^n: batched and as a tuple."""
    batched = ldr.objective(lambda M: cost(M[:, :, 0]), shape=(n, k, 1), manifold="stiefel")
    product = ldr.objective(lambda M: cost(anp.concatenate([m.T for m in M], axis=0)),
                            shape=((k, 1),) * n, manifold=("stiefel",) * n)
    return batched, product


def pymanopt_run(manifold, cost, optimizer, Y0):
    @pymanopt.function.autograd(manifold)
    def f(Y):
        return cost(Y)

    problem = pymanopt.Problem(manifold, f)
    start = clock()
    res = optimizer.run(problem, initial_point=Y0)
    return clock() - start, (float(res.cost), str(res.stopping_criterion).strip())


def ldr_run(obj, solver, M0, gtol):
    def run():
        start = clock()
        res = ldr.solve(obj, solver, start=M0, tol=gtol, tol_scale=1.0, max_iter=100000)
        return clock() - start, (res.cost, res.reason)
    return run


def examples(repeats: int) -> None:
    print("3. pymanopt's examples, side by side (same start; ratio = ldr ÷ pymanopt)\n")
    rows = []
    cases = []
    # packing_on_the_sphere
    n, k = 24, 3
    Y0 = np.random.default_rng(0).standard_normal((n, k))
    Y0 /= np.linalg.norm(Y0, axis=1, keepdims=True)
    cases.append(("packing (24 in R³)", packing_cost, n, k, Y0, 1e-8,
                  lambda: pymanopt.manifolds.Elliptope(n, k),
                  lambda: pymanopt.optimizers.ConjugateGradient(
                      min_gradient_norm=1e-8, max_iterations=100000, verbosity=0),
                  "ConjugateGradient", Y0, ("conjugate-gradient", "gradient", "trust-region")))
    # rank_k_correlation_matrix_approximation
    n2, k2 = 10, 3
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n2, n2))
    A = 0.5 * (A + A.T)
    Z0 = rng.standard_normal((n2, k2))
    Z0 /= np.linalg.norm(Z0, axis=1, keepdims=True)

    def corr(Y):
        return correlation_cost(Y, A)
    cases.append(("rank-k correlation (n=10, k=3)", corr, n2, k2, Z0, 1e-6,
                  lambda: pymanopt.manifolds.Oblique(k2, n2),
                  lambda: pymanopt.optimizers.TrustRegions(verbosity=0),
                  "TrustRegions", Z0.T.copy(), ("trust-region", "gradient")))
    for label, cost, n, k, Y0, gtol, manifold, optimizer, opt_name, P0, solvers in cases:
        man = manifold()
        # Oblique(k, n) holds the unit vectors as columns: its points are the transposes
        pcost = (lambda Y, cost=cost: cost(Y.T)) if P0.shape != Y0.shape else cost
        t_pm, vals = common.median_time(lambda man=man, pcost=pcost, optimizer=optimizer, P0=P0:
                                        pymanopt_run(man, pcost, optimizer(), P0), repeats)
        f_pm = vals[-1][0]
        rows.append([label, f"pymanopt {opt_name}", common.fmt_time(t_pm), "1", f"{f_pm:.10g}",
                     ""])
        batched, product = ldr_objectives(cost, n, k)
        for solver in solvers:
            for form, obj, M0 in [("batched", batched, Y0[:, :, None].copy()),
                                  ("tuple", product, tuple(y[:, None].copy() for y in Y0))]:
                t, vals = common.median_time(ldr_run(obj, solver, M0, gtol), repeats)
                f, reason = vals[-1]
                rows.append([label, f"ldr {solver} ({form})", common.fmt_time(t),
                             f"{t / t_pm:.3g}", f"{f:.10g}",
                             f"{abs(f - f_pm) / max(abs(f_pm), 1e-300):.1e}"])
    common.print_table(["example", "solver", "time", "÷ pymanopt", "final cost",
                        "|Δf|/|f_pm|"], rows, left=2)
    print()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--skip", nargs="*", default=[], choices=["table", "lda", "examples"])
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="process CPU time (default) or wall time")
    args = parser.parse_args(argv)
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    repeats = args.repeats or (3 if args.quick else 15)
    dims = (5, 10, 20) if args.quick else DIMS
    with common.single_threaded():
        common.print_header("ldr solver overhead on small problems (bench_overhead.py)", [
            f"repeats: {repeats} (medians); dims: {', '.join(map(str, dims))}; clock: "
            f"{'process CPU time' if args.clock == 'cpu' else 'wall time'}"])
        if "table" not in args.skip:
            overhead_table(dims, repeats)
        if "lda" not in args.skip:
            lda_build(500 if args.quick else 2000, 1000 if args.quick else 4000,
                      max(3, repeats // 5))
        if "examples" not in args.skip:
            examples(max(3, repeats // 3))


if __name__ == "__main__":
    main()
