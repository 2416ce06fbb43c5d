"""Benchmark: Wasserstein discriminant analysis — SCF (ratio trace) vs POT's ``ot.dr.wda``.

Run from the checkout root (or anywhere, by path)::

    .venv/bin/python -P benchmarks/bench_wda.py            # reg 0.1, 1, 5; 20 starts each
    .venv/bin/python -P benchmarks/bench_wda.py --quick    # reg 1, 3 starts, TR/gradient on 1

What is measured.  Data: ``X, y = ldr.datasets.make_wda(1000, seed=0)`` (train) and
``make_wda(1000, seed=1)`` (test): 3 classes on concentric circles in 2 dimensions plus 8
noise dimensions (d = 10).  p = 2; for each reg ∈ {0.1, 1, 5} (``--regs``) the objective is
``ldr.objectives.WDA(X, y, 2, reg=reg)`` (10 fixed Sinkhorn iterations, as POT's ``k=10``);
its ``ratio(P)`` is the trace ratio tr(PᵀC_bP)/tr(PᵀC_wP) at T = T(P) (higher is better) and
is the score every method's final P is judged by.  Every method starts, for start s =
0..19 (``--starts``), from the same seeded random orthonormal P0 = QR of
``default_rng(100 + s).standard_normal((10, 2))``:

* ldr SCF on the ratio-trace pencil, ``ldr.solve(obj, SCF(...), start=P0, xtol=1e-6)`` with the
  default budget (max_iter = 1000): ``SCF()`` (safeguarded DIIS, the default),
  ``SCF(acceleration="anderson")``, ``SCF(acceleration="none")`` (plain), and the two
  remedies on the plain iteration, ``damping=0.5`` and ``level_shift=1.0``.  Every remedy's
  iterations are compared with the plain iteration's from the same start, and so is the
  fixed point it reached.  Time: ``Result.time``; converged: ``Result.converged``
  (fixed-point residual sin θ(M, G(M)) ≤ xtol; a 2-cycle, stagnation or max_iter is not);
* POT 0.9's WDA with its default solver.  ``ot.dr.wda`` returns only the point, not
  pymanopt's OptimizerResult, so this script repeats its body: the same data preparation
  (``X`` centered by its scalar mean ``np.mean(X)`` — on a copy —, ``ot.dr.split_classes``,
  which casts to float32, uniform float32 weights, no ``normalize``), the same cost built from
  POT's own ``ot.dr.dist`` and ``ot.dr.sinkhorn`` (k = 10), loss_w/loss_b on
  ``pymanopt.manifolds.Stiefel(10, 2)`` with ``@pymanopt.function.autograd``, and
  ``pymanopt.optimizers.SteepestDescent(max_iterations=100)`` — what ``ot.dr.wda(X, y, p=2,
  reg=reg, k=10, P0=P0)`` builds with ``solver=None, maxiter=100`` — except ``verbosity=0``
  (``ot.dr.wda`` leaves pymanopt's default 2, which prints).  Before anything is timed, the
  replica is run against ``ot.dr.wda(X.copy(), y, p=2, reg=reg, k=10, P0=P0)`` itself from
  start 0 of every reg and the two answers are required to agree (largest principal-angle
  sine ≤ 1e-8).  Time: the wall time of building the cost and ``optimizer.run`` (what a
  call to ``ot.dr.wda`` costs); iterations and stopping reason from the OptimizerResult;
  converged: pymanopt stopped on its gradient-norm rule (min_gradient_norm = 1e-6; stops on
  max iterations or min step size are not convergence).  POT minimizes loss_w/loss_b, the
  reciprocal of our trace ratio, so its P is scored by our ``obj.ratio(P)``;
* ldr ``"trust-region"`` on the trace-ratio cost, ``ldr.solve(obj, "trust-region", start=P0,
  tol=1e-6, max_time=120)``.  Its Hessian-vector products differentiate through the
  Sinkhorn iterations (by hand, about 0.1 s each at n = 1000); it runs on every start
  (``--tr-starts`` limits it to the first few) under a 120 s cap (``--tr-max-time``); its
  converged flag is ``Result.converged`` (gradient norm ≤ 1e-6 or subspace change ≤ the
  default xtol), and its final trace ratio is compared with POT's from the same starts;
* ldr ``"gradient"`` on the trace-ratio cost (Riemannian steepest descent with Armijo
  backtracking, the method POT's pymanopt solver runs), ``ldr.solve(obj, "gradient",
  start=P0, tol=1e-6, max_time=120)``, compared with POT from the same starts the same way.

Every run is timed once (the spread over starts is what the medians summarize); each
objective is built anew for each run so that no run reuses another's cached transport plans.

Reported per reg and method: median time, median iterations, share of starts converged, share
of starts reaching the best trace ratio found for that reg by any method from any start
(within 1e-6 relative), and the KNN test accuracy: ``KNeighborsClassifier(10)`` fitted on (X −
mean)P of the training data (``obj.transform``) and scored on the test data, median and
minimum over starts. Then: for every SCF remedy, the median over starts of the per-start
iteration ratio remedy ÷ plain (over starts where both converged) and on how many of those
starts it reached plain's fixed point (sin θ ≤ 1e-3: each converged run is within its
residual/(1 − ρ) of its fixed point, distinct fixed points are O(1) apart); the median and
range of the per-start time ratio ours (default SCF) ÷ POT; for every converged SCF run,
whether it is a fixed point (the next plain SCF iterate, ``top_generalized(*obj.pencil(M),
2)[0]``, within sin θ ≤ 1e-5 of M); for the trust region and the gradient solver, whether the
trace ratio matches or beats POT's from the same start (≥ POT's × (1 − 1e-6)).

Which local optimum is a start's own.  The trace ratio has several local maxima here, and
from one start different solvers can end at different ones.  So for every start the trust
region runs on, the script also follows the gradient flow from it (``flow_endpoint``: steps
of at most 0.02 rad, untimed), whose endpoint is the same for POT's cost 1/ratio, and reports
for POT, the trust region and the gradient solver on how many starts each ended at that
endpoint (same trace ratio to 1e-6 or sin θ ≤ 1e-3) and, where not, whether higher or lower.

Finally the estimator ``ldr.estimators.WassersteinDA(n_components=2, reg=reg)`` with its default
start (continuation in reg; ``bench_wda_defaults.py`` measures it on 60 fresh problems): time
of ``fit`` (median of 3) and its KNN test accuracy.

BLAS is pinned to one thread for the whole run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import autograd.numpy as anp
import numpy as np
import ot
import ot.dr
import pymanopt
from sklearn.neighbors import KNeighborsClassifier

import ldr
from ldr.estimators import WassersteinDA
from ldr.manifolds import sin_largest_angle
from ldr.solvers import SCF
from ldr.solvers.scf import top_generalized

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common

P_DIM, N_SAMPLES, K_SINKHORN = 2, 1000, 10
XTOL, GTOL = 1e-6, 1e-6
BEST_TOL, FIXED_TOL, AGREE_TOL = 1e-6, 1e-5, 1e-8
# two runs reached the same fixed point: each is within residual/(1 − ρ) of it, ρ the local
# contraction of SCF (up to 0.97 at the poor fixed points here, so ~3e-5 for residual 1e-6),
# while distinct fixed points of this problem are O(1) apart
SAME_TOL = 1e-3
POT_MAXITER = 100
# the gradient flow from each start (which local optimum is "its own"): steps of at most
# FLOW_STEP rad until the gradient norm is FLOW_GTOL, then the trust region polishes
FLOW_STEP, FLOW_GTOL, FLOW_MAXITER = 0.02, 1e-2, 3000

# key, label
METHODS = [
    ("scf", "SCF (DIIS, default)"),
    ("scf-anderson", "SCF Anderson"),
    ("scf-plain", "SCF plain"),
    ("scf-damp", "SCF plain, damping=0.5"),
    ("scf-shift", "SCF plain, level_shift=1.0"),
    ("pot", "POT wda (pymanopt SD, 100 it.)"),
    ("tr", "ldr trust-region (trace ratio)"),
    ("gd", "ldr gradient (trace ratio)"),
]
LABELS = dict(METHODS)
SCF_SOLVERS = {
    "scf": lambda: SCF(),
    "scf-anderson": lambda: SCF(acceleration="anderson"),
    "scf-plain": lambda: SCF(acceleration="none"),
    "scf-damp": lambda: SCF(acceleration="none", damping=0.5),
    "scf-shift": lambda: SCF(acceleration="none", level_shift=1.0),
}


@dataclass
class Run:
    time: float
    n_iter: int
    converged: bool
    reason: str
    ratio: float
    acc: float
    P: np.ndarray


def shorten(reason: str) -> str:
    r = reason.lower()
    for needle, short in [("2-cycle", "2-cycle"), ("stagnates", "stagnation"),
                          ("xtol", "xtol"), ("gtol", "gtol"), ("min grad norm", "min grad norm"),
                          ("min step_size", "min step size"), ("max iterations", "max iter"),
                          ("max_iter", "max iter"), ("max_time", "max time"),
                          ("max time", "max time"), ("radius collapsed", "TR radius collapsed")]:
        if needle in r:
            return short
    return reason[:30]


def start_point(s: int) -> np.ndarray:
    return np.linalg.qr(np.random.default_rng(100 + s).standard_normal((10, P_DIM)))[0]


def knn_accuracy(obj, P, X, y, X_test, y_test) -> float:
    knn = KNeighborsClassifier(10).fit(obj.transform(X, P), y)
    return float(knn.score(obj.transform(X_test, P), y_test))


def flow_endpoint(obj, P0) -> tuple[float, np.ndarray]:
    """The local optimum of the trace ratio that the gradient flow Ṗ = −grad f(P) from P0 leads
    to: (its trace ratio, its P).

    POT's loss_w/loss_b is 1/ratio, a monotone function of our cost −ratio, so both costs have
    the same flow curves and the same basins; where a solver ends is a matter of its steps.
    The flow is followed by steepest descent on Grassmann with steps of at most FLOW_STEP rad
    (Armijo backtracking from min(2 × the last step, FLOW_STEP/‖g‖), polar retraction), which
    stays within about a step of the flow's path (it changes basin only if the path passes that
    close to a basin's edge), until ‖grad‖ ≤ FLOW_GTOL; the point is then polished by ldr's
    trust region (gtol 1e-6).  Halving the step to 0.01 rad moved no endpoint on the
    seven starts (reg 0.1 and 5) where the solvers disagreed.
    """
    geom = ldr.manifolds.from_declaration(obj.manifold, obj.shape)
    P, f, step = P0, obj.cost(P0), np.inf
    for _ in range(FLOW_MAXITER):
        G = geom.rgrad(P, obj.egrad(P))
        g = geom.norm(G)
        if g <= FLOW_GTOL:
            break
        step = min(2.0 * step, FLOW_STEP / g)
        while True:
            Q = geom.retract(P, geom.lincomb(-step, G), "polar")
            fq = obj.cost(Q)
            if fq <= f - 1e-4 * step * g * g or step < 1e-12:
                break
            step *= 0.5
        P, f = Q, fq
    P = np.asarray(ldr.solve(obj, "trust-region", start=P, tol=GTOL).M)
    return obj.ratio(P), P


def same_optimum(a: Run, ratio: float, P: np.ndarray) -> bool:
    return a.ratio >= ratio * (1 - BEST_TOL) and a.ratio <= ratio * (1 + BEST_TOL) \
        or sin_largest_angle(a.P, P) <= SAME_TOL


# --- ldr -----------------------------------------------------------------------------------
def run_ldr(X, y, reg, solver, P0, **kw):
    obj = ldr.objectives.WDA(X, y, P_DIM, reg=reg)
    gc.collect()
    res = ldr.solve(obj, solver, start=P0, **kw)
    return res.time, res.n_iter, res.converged, res.reason, np.asarray(res.M)


# --- POT -----------------------------------------------------------------------------------
def pot_problem(X, y, reg):
    """ot.dr.wda's data preparation and cost, verbatim in substance (normalize=False)."""
    X = X.copy()
    mx = np.mean(X)
    X -= mx.reshape((1, -1))
    xc = ot.dr.split_classes(X, y)
    wc = [np.ones((x.shape[0]), dtype=np.float32) / x.shape[0] for x in xc]
    manifold = pymanopt.manifolds.Stiefel(X.shape[1], P_DIM)

    @pymanopt.function.autograd(manifold)
    def cost(P):
        loss_b = 0
        loss_w = 0
        for i, xi in enumerate(xc):
            xi = anp.dot(xi, P)
            for j, xj in enumerate(xc[i:]):
                xj = anp.dot(xj, P)
                M = ot.dr.dist(xi, xj)
                G = ot.dr.sinkhorn(wc[i], wc[j + i], M, reg, K_SINKHORN)
                if j == 0:
                    loss_w += anp.sum(G * M)
                else:
                    loss_b += anp.sum(G * M)
        return loss_w / loss_b

    return pymanopt.Problem(manifold=manifold, cost=cost)


def run_pot(X, y, reg, P0):
    gc.collect()
    t0 = time.perf_counter()
    problem = pot_problem(X, y, reg)
    optimizer = pymanopt.optimizers.SteepestDescent(max_iterations=POT_MAXITER, verbosity=0,
                                                    log_verbosity=0)
    res = optimizer.run(problem, initial_point=P0)
    seconds = time.perf_counter() - t0
    reason = str(res.stopping_criterion).strip()
    return seconds, int(res.iterations), "min grad norm" in reason.lower(), reason, \
        np.asarray(res.point)


def check_pot_replica(X, y, reg, P0) -> float:
    """sin θ between ot.dr.wda's own answer and the replica's, from the same start."""
    with contextlib.redirect_stdout(io.StringIO()):
        P_pot, _ = ot.dr.wda(X.copy(), y, p=P_DIM, reg=reg, k=K_SINKHORN, P0=P0)
    P_rep = run_pot(X, y, reg, P0)[4]
    return sin_largest_angle(np.asarray(P_pot), P_rep)


# --- the benchmark -------------------------------------------------------------------------
def one_run(key, X, y, reg, P0, tr_max_time):
    if key in SCF_SOLVERS:
        return run_ldr(X, y, reg, SCF_SOLVERS[key](), P0, xtol=XTOL)
    if key == "pot":
        return run_pot(X, y, reg, P0)
    solver = "trust-region" if key == "tr" else "gradient"
    return run_ldr(X, y, reg, solver, P0, gtol=GTOL, max_time=tr_max_time)


def benchmark_reg(reg, X, y, X_test, y_test, n_starts, n_tr, tr_max_time):
    obj = ldr.objectives.WDA(X, y, P_DIM, reg=reg)  # for scoring only
    runs: dict[str, list] = {key: [] for key, _ in METHODS}
    runs["flow"] = []  # (trace ratio, P) of flow_endpoint per start
    for s in range(n_starts):
        P0 = start_point(s)
        for key, _ in METHODS:
            if key in ("tr", "gd") and s >= n_tr:
                runs[key].append(None)
                continue
            seconds, n_iter, conv, reason, P = one_run(key, X, y, reg, P0, tr_max_time)
            runs[key].append(Run(seconds, n_iter, conv, reason, obj.ratio(P),
                                 knn_accuracy(obj, P, X, y, X_test, y_test), P))
        runs["flow"].append(flow_endpoint(obj, P0) if s < n_tr else None)
        print(f"  reg {reg:g}, start {s:2d}: " + ", ".join(
            f"{key} {common.fmt_time(r.time)}/{r.n_iter} it/{r.ratio:.6g}"
            for key, _ in METHODS if (r := runs[key][-1]) is not None)
            + (f"; gradient flow ends at {runs['flow'][-1][0]:.6g}" if s < n_tr else ""),
            flush=True)
    return obj, runs


def report_reg(reg, obj, runs, n_starts) -> dict:
    done = {key: [r for r in rs if r is not None] for key, rs in runs.items() if key != "flow"}
    best = max(r.ratio for rs in done.values() for r in rs)
    rows = []
    for key, label in METHODS:
        rs = done[key]
        if not rs:
            continue
        n = len(rs)
        reasons = Counter(shorten(r.reason) for r in rs)
        rows.append([
            label + (f" [{n} starts]" if n != n_starts else ""),
            common.fmt_time(common.median([r.time for r in rs])),
            f"{common.median([r.n_iter for r in rs]):g}",
            f"{sum(r.converged for r in rs)}/{n}",
            f"{sum(r.ratio >= best * (1 - BEST_TOL) for r in rs)}/{n}",
            # SCF solves the ratio trace, whose best fixed point sits slightly below the
            # trace-ratio optimum: count each method's starts at its own best answer too
            f"{sum(r.ratio >= max(q.ratio for q in rs) * (1 - BEST_TOL) for r in rs)}/{n}",
            f"{common.median([r.ratio for r in rs]):.6g}",
            f"{common.median([r.acc for r in rs]):.4f}", f"{min(r.acc for r in rs):.4f}",
            ", ".join(f"{k} ×{v}" for k, v in sorted(reasons.items()))])
    print(f"reg = {reg:g}: best trace ratio found (any method, any start) = {best:.10g}")
    common.print_table(["method", "median time", "median iters", "converged",
                        "reached best", "at own best", "median ratio", "KNN acc med",
                        "KNN acc min", "stop reasons"], rows)

    # SCF: each remedy's iterations ÷ plain, and whether it reached plain's fixed point
    print("  SCF median iterations: " + ", ".join(
        f"{LABELS[k]} {common.median([r.n_iter for r in done[k]]):g}" for k in SCF_SOLVERS))
    for key in SCF_SOLVERS:
        if key == "scf-plain":
            continue
        both = [(a, b) for a, b in zip(runs[key], runs["scf-plain"])
                if a.converged and b.converged and b.n_iter > 0]
        pairs = [a.n_iter / b.n_iter for a, b in both]
        same = sum(sin_largest_angle(a.P, b.P) <= SAME_TOL for a, b in both)
        print(f"  {LABELS[key]} ÷ plain, iterations per start (both converged, {len(pairs)}/"
              f"{n_starts}): median {common.fmt_ratio(common.median(pairs))}, range "
              f"{common.fmt_range(pairs)}; same fixed point as plain (sin θ ≤ {SAME_TOL:g}) on "
              f"{same}/{len(both)}")
    fixed, total, worst = 0, 0, 0.0
    for key in SCF_SOLVERS:
        for r in done[key]:
            if r.converged:
                total += 1
                nxt = top_generalized(*obj.pencil(r.P), P_DIM)[0]
                sin = sin_largest_angle(r.P, nxt)
                worst = max(worst, sin)
                fixed += sin <= FIXED_TOL
    print(f"  fixed-point check (next plain SCF iterate within sin θ ≤ {FIXED_TOL:g}): "
          f"{fixed}/{total} converged SCF runs; largest sin θ {worst:.2e}")
    ratios = [a.time / b.time for a, b in zip(runs["scf"], runs["pot"])]
    print(f"  time ours (SCF default) ÷ POT, per start: median "
          f"{common.fmt_ratio(common.median(ratios))}, range {common.fmt_range(ratios)}")
    for key, name in [("tr", "trust region"), ("gd", "gradient")]:
        vs = [(s, r, p) for s, (r, p) in enumerate(zip(runs[key], runs["pot"])) if r is not None]
        if not vs:
            continue
        worse = [(s, r.ratio, p.ratio) for s, r, p in vs if r.ratio < p.ratio * (1 - BEST_TOL)]
        times = [r.time / p.time for _, r, p in vs]
        below = "" if not worse else " (below POT: " + "; ".join(
            f"start {s}: {a:.8g} vs POT {b:.8g}, flow {runs['flow'][s][0]:.8g}"
            for s, a, b in worse) + ")"
        print(f"  {name} vs POT from the same starts: matches or beats POT's trace ratio on "
              f"{len(vs) - len(worse)}/{len(vs)}{below}; time ÷ POT median "
              f"{common.fmt_ratio(common.median(times))}, range {common.fmt_range(times)}")
    flows = [(s, f) for s, f in enumerate(runs["flow"]) if f is not None]
    if flows:
        own = {key: [s for s, f in flows if same_optimum(runs[key][s], *f)]
               for key in ("pot", "tr", "gd")}
        print(f"  own basin: ended at the local optimum the gradient flow from the start leads to "
              f"(steps ≤ {FLOW_STEP:g} rad, polished): " + ", ".join(
                  f"{LABELS[k].split(' (')[0]} {len(v)}/{len(flows)}" for k, v in own.items()))
        for key, v in own.items():
            off = [(s, runs[key][s], f[0]) for s, f in flows if s not in v]
            if off:  # a run stopped short (POT's iteration cap) may sit in the flow's basin
                print(f"    {LABELS[key].split(' (')[0]} elsewhere: " + "; ".join(
                    f"start {s}: {a.ratio:.6g} (flow {b:.6g}, "
                    f"{'higher' if a.ratio > b else 'lower'}"
                    f"{'' if a.converged else ', not converged'})" for s, a, b in off))
    print()
    return {"ratios": ratios, "best": best}


def estimator_rows(regs, X, y, X_test, y_test) -> list:
    rows = []
    for reg in regs:
        seconds, fits = common.median_time(common.timed(
            lambda reg=reg: WassersteinDA(n_components=P_DIM, reg=reg).fit(X, y)), 3)
        est = fits[0]
        knn = KNeighborsClassifier(10).fit(est.transform(X), y)
        rows.append([f"{reg:g}", common.fmt_time(seconds), est.n_iter_,
                     "yes" if est.result_.converged else "NO", f"{est.ratio_:.8g}",
                     f"{knn.score(est.transform(X_test), y_test):.4f}"])
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="reg 1 only, 3 starts, trust region on 1 start (smoke run)")
    parser.add_argument("--regs", default=None, help="comma-separated regs (0.1,1,5)")
    parser.add_argument("--starts", type=int, default=None, help="random starts per reg (20)")
    parser.add_argument("--tr-starts", type=int, default=None,
                        help="starts the trust region and gradient run on (all)")
    parser.add_argument("--tr-max-time", type=float, default=120.0,
                        help="trust-region and gradient time cap in seconds (120)")
    args = parser.parse_args(argv)
    regs = ([float(r) for r in args.regs.split(",")] if args.regs
            else [1.0] if args.quick else [0.1, 1.0, 5.0])
    n_starts = args.starts or (3 if args.quick else 20)
    n_tr = min(args.tr_starts if args.tr_starts is not None else (1 if args.quick else n_starts),
               n_starts)

    X, y = ldr.datasets.make_wda(N_SAMPLES, seed=0)
    X_test, y_test = ldr.datasets.make_wda(N_SAMPLES, seed=1)
    with common.single_threaded():
        common.print_header(
            f"WDA benchmark: ldr SCF vs POT ot.dr.wda (n={N_SAMPLES}, d={X.shape[1]}, "
            f"p={P_DIM}, 3 classes)",
            [f"data: ldr.datasets.make_wda({N_SAMPLES}, seed=0) train, seed=1 test; "
             f"objective ldr.objectives.WDA(X, y, {P_DIM}, reg) (Sinkhorn k={K_SINKHORN}); "
             f"regs {', '.join(f'{r:g}' for r in regs)}",
             f"starts: {n_starts} per reg, P0 = QR(default_rng(100 + s).standard_normal((10, "
             f"2))), the same for every method; trust region and gradient on the first {n_tr}, "
             f"max_time {args.tr_max_time:g} s",
             f"SCF: ldr.solve(obj, SCF(...), start=P0, xtol={XTOL:g}), max_iter 1000; POT: "
             f"replica of ot.dr.wda (SteepestDescent, max_iterations {POT_MAXITER}); "
             f"trust region and gradient: gtol {GTOL:g}",
             "score: obj.ratio(P) (trace ratio, higher is better); KNN(10) test accuracy on "
             "(X − mean)P; each run timed once; BLAS pinned to 1 thread (threadpoolctl)"])
        # the replica against ot.dr.wda itself (also the untimed warm-up of POT/autograd)
        for reg in regs:
            sin = check_pot_replica(X, y, reg, start_point(0))
            print(f"  replica check, reg {reg:g}: sin θ(ot.dr.wda, replica) = {sin:.2e}")
            if not sin <= AGREE_TOL:
                raise SystemExit(f"the POT replica disagrees with ot.dr.wda (reg {reg:g})")
        # warm-up (untimed) of ldr
        for key in SCF_SOLVERS:
            one_run(key, X, y, regs[0], start_point(0), args.tr_max_time)

        results = {}
        for reg in regs:
            results[reg] = benchmark_reg(reg, X, y, X_test, y_test, n_starts, n_tr,
                                         args.tr_max_time)
        print()
        summaries = {}
        for reg in regs:
            obj, runs = results[reg]
            summaries[reg] = report_reg(reg, obj, runs, n_starts)

        rows = [[f"{reg:g}", common.fmt_ratio(common.median(summaries[reg]["ratios"])),
                 common.fmt_range(summaries[reg]["ratios"])] for reg in regs]
        print("Time ratio ours (SCF default) ÷ POT wda, per start (< 1: ldr faster):")
        common.print_table(["reg", "median ours ÷ POT", "range (min–max)"], rows)
        print()

        print("ldr.estimators.WassersteinDA(n_components=2, reg=reg).fit(X, y), default start "
              "(continuation in reg), fit time median of 3:")
        rows = estimator_rows(regs, X, y, X_test, y_test)
        for row in rows:
            reg = float(row[0])
            row.insert(5, "yes" if float(row[4]) >= summaries[reg]["best"] * (1 - BEST_TOL)
                       else "NO")
        common.print_table(["reg", "fit time", "iters", "converged", "trace ratio",
                            "reached best", "KNN acc (test)"], rows)


if __name__ == "__main__":
    main()
