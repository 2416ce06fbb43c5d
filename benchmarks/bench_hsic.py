"""Benchmark: supervised HSIC dimension reduction (Gaussian kernel), ISM vs trust regions.

Run from the checkout root (or anywhere, by path)::

    .venv/bin/python -P benchmarks/bench_hsic.py            # wine, breast_cancer, digits
    .venv/bin/python -P benchmarks/bench_hsic.py --quick    # wine, breast_cancer; smoke run

What is measured.  On scikit-learn's bundled wine (q = 4), breast_cancer (q = 2) and digits
(q = 9; its 3 zero-variance pixels dropped), X is standardized per feature, Γ = H Y Yᵀ H / n²
with Y the one-hot labels, passed as the low-rank factor ``(Y − Y.mean(0), 1/n² · 1)``, and
σ = ``ldr.kernels.median_distance`` of the standardized data, the same σ for every solver.
The objective is ``ldr.objectives.HSIC(Xs, Gamma, q, kernel=ldr.kernels.Gaussian(σ))``, the
cost −Σ_ij Γ_ij exp(−‖Wᵀ(x_i − x_j)‖²/2σ²) on Grassmann(d, q), of scale O(0.1).  Solvers:

* ldr ``"ism"`` from its default start (M0=None: the q minimizing eigenvectors of Φ₀);
* ldr ``["ism", "trust-region"]`` (ISM, then the trust region polishes where ISM stopped);
* ldr ``"trust-region"`` from the same start, ``M0=obj.heuristic()``;
* pymanopt 2.2.1 ``TrustRegions`` with the autograd backend from the same start, on the cost
  a pymanopt user would write with ``autograd.numpy`` (dense Γ, β from the row norms of XW
  and XW(XW)ᵀ), wrapped as ``ldr.objective(cost, shape=(d, q), manifold="grassmann")`` and
  ``pymanopt_problem(obj_ag, backend="autograd")``; its cost is checked against
  ``HSIC.cost`` at the start point (relative difference ≤ 1e-12) before anything is timed.

Every solver stops on the Riemannian gradient norm ≤ 1e-8 (ldr ``gtol``, pymanopt
``min_gradient_norm``); the ldr solvers keep their other defaults, pymanopt runs under
``max_time = --pymanopt-max-time`` (default 600 s).  pymanopt checks max_time only between
outer iterations, so the problem proxy also aborts a run inside truncated CG once that much
time has passed (a Hessian-vector product on digits' 1797×1797 matrices is slow); the table
says when the cap was hit and at which cost.

Reported per dataset and solver: final cost, relative gap (f − f*)/|f*| to the best cost f*
found by any solver, the total time and the time to accuracy (first iterate with gap ≤ 1e-6,
``--tol``), iterations, oracle counts, the converged flag and (shortened) stop reason, and two
accuracies of an RBF SVC (scikit-learn defaults), 10-fold ``StratifiedKFold(shuffle=True,
random_state=0)``:

* ``CV acc``: W learned on each training fold only, by a Pipeline
  ``SupervisedHSIC(n_components=q, solver=…, tol=1e-8)`` → ``SVC()`` (the estimator
  standardizes with the fold's statistics and takes σ as the fold's median distance).  Its
  trust region is given ISM's spectral start too (``SupervisedHSIC(solver="trust-region")``
  alone would start from a random point).  Not computed for pymanopt: 10 more pymanopt runs
  per dataset would take several times its (long) time on breast_cancer and digits;
* ``acc, W all*``: the same CV of the SVC on Xs·W, W the solver's answer on the full data —
  leaky (W saw the test folds) but the same for every solver, so pymanopt's W is compared too.

Times: ldr's is ``Result.time`` (the driver's clock; the start point, computed once, is in
no solver's time; each dataset's header line says how long it takes), its time to accuracy
the trace's ``time`` at the first iterate within the gap.
pymanopt's is the wall time of ``optimizer.run``; its time to accuracy is read from a problem
proxy that stamps ``time.time()`` and the cost each time the gradient of a new iterate is
computed (the start point and every accepted step; pymanopt 2.2.1's TrustRegions logs no
iterations), minus ``time.time()`` taken right before ``run``.  Each ldr time is the median
of ``--repeats`` runs (default 3), pymanopt's of ``--pymanopt-repeats`` (default 1).  The
ratio tables give ours ÷ pymanopt (< 1: ldr faster) for the total times and for the times
to accuracy, and pymanopt's time to accuracy ÷ ours as "× sooner".

Finally one ISM run on digits (``--profile``, breast_cancer with ``--quick``) is profiled
line by line (``_hsic_profile.py``; line_profiler, or cProfile by function if it is not
installed): the ten longest lines of a Φ evaluation's pass and of ISM's eigh, per evaluation,
and the measured time of one Φ evaluation against its flop count 2n²(d + q) at the measured
dgemm rate.

BLAS is pinned to one thread for the whole run.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import autograd.numpy as anp
import numpy as np
import pymanopt
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.model_selection import StratifiedKFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

import ldr
from ldr.estimators import SupervisedHSIC
from ldr.kernels import Gaussian, median_distance
from ldr.solvers.pymanopt_adapter import pymanopt_problem
from ldr.solvers.trust_region import TrustRegion

try:
    import _common as common
except ImportError:  # run with `python -P`: the script's folder is not on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _common as common
from _hsic_profile import profile_ism  # noqa: E402

GTOL = 1e-8  # gradient-norm stop for every solver (the cost is O(0.1))
DATASETS = {"wine": (load_wine, 4), "breast_cancer": (load_breast_cancer, 2),
            "digits": (load_digits, 9)}
# key, label, ldr solver spec (None: pymanopt), start
SOLVERS = [
    ("ism", "ldr ism", "ism", "default"),
    ("ism-tr", "ldr ism → trust-region", ["ism", "trust-region"], "default"),
    ("tr", "ldr trust-region", "trust-region", "heuristic"),
    ("pm", "pymanopt TrustRegions (autograd)", None, "heuristic"),
]
LABELS = {key: label for key, label, _, _ in SOLVERS}


class SpectralStartTR(TrustRegion):
    """ldr's trust region started, when M0 is None, at ISM's spectral start (heuristic())."""

    def default_start(self, problem):
        return problem.objective.heuristic()


# --- data ------------------------------------------------------------------------------------
@dataclass
class Data:
    name: str
    q: int
    X: np.ndarray  # raw features (zero-variance ones dropped)
    y: np.ndarray
    Xs: np.ndarray  # standardized
    sigma: float
    obj: ldr.objectives.HSIC
    obj_ag: ldr.Objective  # the autograd.numpy cost a pymanopt user would write
    M0: np.ndarray  # heuristic(): ISM's default start, for the trust regions
    t_start: float  # seconds to compute the start point


def load(name: str) -> Data:
    loader, q = DATASETS[name]
    X, y = loader(return_X_y=True)
    X = X[:, X.std(axis=0) > 0]
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    n, d = Xs.shape
    _, codes = np.unique(y, return_inverse=True)
    Y = np.eye(codes.max() + 1)[codes]
    c = Y.shape[1]
    F = Y - Y.mean(axis=0)
    sigma = median_distance(Xs)
    obj = ldr.objectives.HSIC(Xs, (F, np.full(c, 1.0 / n**2)), q, kernel=Gaussian(sigma))
    Gamma = F @ F.T / n**2  # dense, as a pymanopt user would hold it
    s2 = 2.0 * sigma**2

    def cost(W):
        Z = anp.dot(Xs, W)
        sq = anp.sum(Z * Z, axis=1)
        B = sq[:, None] + sq[None, :] - 2.0 * anp.dot(Z, Z.T)
        return -anp.sum(Gamma * anp.exp(-B / s2))

    obj_ag = ldr.objective(cost, shape=(d, q), manifold="grassmann")
    t_start, starts = common.median_time(common.timed(obj.heuristic), 3)
    M0 = starts[0]
    f_hsic, f_ag = float(obj.cost(M0)), float(cost(M0))
    rel = abs(f_ag - f_hsic) / abs(f_hsic)
    assert rel <= 1e-12, f"{name}: autograd cost {f_ag!r} != HSIC.cost {f_hsic!r} (rel {rel:.2e})"
    return Data(name, q, X, y, Xs, sigma, obj, obj_ag, M0, t_start)


# --- runs --------------------------------------------------------------------------------------
@dataclass
class Run:
    """One solver run."""

    time: float
    cost: float
    W: np.ndarray
    n_iter: int
    converged: bool
    reason: str  # shortened
    full_reason: str
    stamps: list  # (seconds since start, cost, stage) per iterate
    counts: dict
    stage_reasons: list = field(default_factory=list)  # (solver, iterations, reason)
    cap: str = ""  # pymanopt: how the time cap was hit, if it was


def shorten(reason: str) -> str:
    r = reason.lower()
    if "cycles with period" in r:
        return "ISM cycle (period " + reason.split("period ")[1].split(" ")[0] + ")"
    if "stalled" in r:
        return "ISM stalled"
    if "gtol" in r:
        return "grad ≤ gtol"
    if "min grad norm" in r:
        return "min grad norm"
    if "xtol" in r:
        return "subspace change ≤ xtol"
    if "radius collapsed" in r:
        return "TR radius collapsed"
    if "max_iter" in r or "max iteration" in r:
        return "max iterations"
    if "max time" in r or "max_time" in r:
        return "max time (cap)"
    if "min step size" in r:
        return "min step size"
    return reason[:40]


def run_ldr(data: Data, solver, start: str) -> tuple[float, Run]:
    M0 = None if start == "default" else data.M0
    gc.collect()
    res = ldr.solve(data.obj, solver, start=M0, tol=GTOL)
    tr = res.trace
    stamps = list(zip(tr["time"], tr["cost"], tr["stage"].astype(int)))
    stage_reasons = [(s.solver, s.n_iter, s.reason) for s in res.stages]
    short = " → ".join(shorten(r) for _, _, r in stage_reasons)
    return res.time, Run(res.time, float(res.cost), np.asarray(res.M), res.n_iter,
                         res.converged, short, res.reason, stamps, dict(res.counts),
                         stage_reasons)


class _Deadline(Exception):
    pass


class StampedProblem:
    """A pymanopt.Problem proxy: stamps each iterate TrustRegions finishes evaluating.

    TrustRegions evaluates ``cost`` once per outer iteration (at the proposal) and the
    gradient only at the start point and at accepted proposals, right after their cost; a
    stamp ``(time.time(), cost)`` is taken when such a gradient returns and the point kept.
    Hessian-vector products raise ``_Deadline`` once ``deadline`` (time.time()) has passed.
    """

    def __init__(self, problem: pymanopt.Problem, deadline: float):
        self._problem, self._deadline = problem, deadline
        self._cost = problem.cost
        self._grad = problem.riemannian_gradient
        self._hess = problem.riemannian_hessian
        self.counts = {"cost": 0, "grad": 0, "hvp": 0}
        self.last_cost, self.last_point = math.nan, None
        self.stamps: list[tuple[float, float]] = []

    def __getattr__(self, name):
        return getattr(self._problem, name)

    def cost(self, point):
        value = self._cost(point)
        self.counts["cost"] += 1
        self.last_cost = float(value)
        return value

    def riemannian_gradient(self, point):
        grad = self._grad(point)
        self.counts["grad"] += 1
        self.stamps.append((time.time(), self.last_cost))
        self.last_point = point
        return grad

    def riemannian_hessian(self, point, tangent):
        if time.time() >= self._deadline:
            raise _Deadline
        self.counts["hvp"] += 1
        return self._hess(point, tangent)


def run_pymanopt(data: Data, max_time: float) -> tuple[float, Run]:
    problem = pymanopt_problem(data.obj_ag, backend="autograd")
    optimizer = pymanopt.optimizers.TrustRegions(verbosity=0, min_gradient_norm=GTOL,
                                                 max_time=max_time)
    gc.collect()
    start = time.time()
    stamped = StampedProblem(problem, start + max_time)
    try:
        res = optimizer.run(stamped, initial_point=data.M0)
        total = time.time() - start
        full = str(res.stopping_criterion).strip()
        cost, W, n_iter = float(res.cost), np.asarray(res.point), int(res.iterations)
        cap = "pymanopt max_time" if "max time" in full.lower() else ""
    except _Deadline:
        total = time.time() - start
        full = (f"aborted inside truncated CG at the {max_time:g} s cap; the last accepted "
                "iterate is reported")
        cost, W, n_iter = stamped.last_cost, np.asarray(stamped.last_point), len(stamped.stamps) - 1
        cap = "aborted in tCG"
    stamps = [(t - start, c, 0) for t, c in stamped.stamps]
    converged = "min grad norm" in full.lower()
    reason = shorten(full) if not cap else f"time cap ({cap})"
    return total, Run(total, cost, W, n_iter, converged, reason, full, stamps,
                      dict(stamped.counts), cap=cap)


def time_to(run: Run, f_star: float, tol: float) -> tuple[float, int | None]:
    """Seconds until the first iterate within the gap, and its stage (inf, None: never)."""
    for t, c, stage in run.stamps:
        if rel_gap(c, f_star) <= tol:
            return float(t), int(stage)
    return math.inf, None


def rel_gap(f: float, f_star: float) -> float:
    return (f - f_star) / abs(f_star)


# --- accuracy ----------------------------------------------------------------------------------
def cv():
    return StratifiedKFold(10, shuffle=True, random_state=0)


def cv_accuracy(data: Data, solver) -> tuple[float, float, str]:
    """10-fold CV accuracy, W learned per training fold; mean, std and fold convergence."""
    if solver == "trust-region":
        solver = SpectralStartTR()
    pipe = make_pipeline(SupervisedHSIC(n_components=data.q, solver=solver, tol=GTOL), SVC())
    out = cross_validate(pipe, data.X, data.y, cv=cv(), return_estimator=True)
    fits = [est[0].result_ for est in out["estimator"]]
    stops = Counter(shorten(s.reason) for r in fits for s in r.stages if not s.converged)
    info = f"{sum(r.converged for r in fits)}/{len(fits)}"
    if stops:
        info += " (" + ", ".join(f"{reason} ×{k}" for reason, k in sorted(stops.items())) + ")"
    scores = out["test_score"]
    return float(np.mean(scores)), float(np.std(scores)), info


def fixed_w_accuracy(data: Data, W: np.ndarray) -> float:
    return float(np.mean(cross_val_score(SVC(), data.Xs @ W, data.y, cv=cv())))


# --- the benchmark -------------------------------------------------------------------------
@dataclass
class Outcome:
    times: dict  # key -> median total seconds
    runs: dict  # key -> first Run
    tta: dict  # key -> median seconds to accuracy
    stage_at_tta: dict
    f_star: float
    cv: dict  # key -> (mean, std, info) or None
    acc_all: dict  # key -> accuracy with W from all data


def one_dataset(data: Data, repeats: int, pm_repeats: int, pm_max_time: float, tol: float,
                do_cv: bool) -> Outcome:
    times, allruns = {}, {}
    for key, _, solver, start in SOLVERS:
        if solver is None:
            seconds, runs = common.median_time(lambda: run_pymanopt(data, pm_max_time),
                                               pm_repeats)
        else:
            seconds, runs = common.median_time(
                lambda solver=solver, start=start: run_ldr(data, solver, start), repeats)
        times[key], allruns[key] = seconds, runs
        run = runs[0]
        print(f"  {data.name}: {LABELS[key]}: {common.fmt_time(seconds)}, cost {run.cost:.12g}, "
              f"{run.reason}", flush=True)
    f_star = min(r.cost for runs in allruns.values() for r in runs)
    tta, stage_at = {}, {}
    for key, runs in allruns.items():
        tta[key] = common.median([time_to(r, f_star, tol)[0] for r in runs])
        stage_at[key] = time_to(runs[0], f_star, tol)[1]
    first = {key: runs[0] for key, runs in allruns.items()}
    cvs = {}
    for key, _, solver, _ in SOLVERS:
        if do_cv and solver is not None:
            t0 = time.perf_counter()
            cvs[key] = cv_accuracy(data, solver)
            print(f"  {data.name}: CV of {LABELS[key]}: {cvs[key][0]:.4f} "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
        else:
            cvs[key] = None
    acc_all = {key: fixed_w_accuracy(data, run.W) for key, run in first.items()}
    return Outcome(times, first, tta, stage_at, f_star, cvs, acc_all)


def report(data: Data, out: Outcome, tol: float, repeats: int, pm_repeats: int) -> None:
    n, d = data.Xs.shape
    print(f"{data.name}: n = {n}, d = {d}, q = {data.q}, classes = {len(np.unique(data.y))}, "
          f"σ = {data.sigma:.6g}; f* = {out.f_star:.15g}; start point (Φ₀ + eigh) "
          f"{common.fmt_time(data.t_start)}, in no solver's time")
    rows = []
    for key, label, _, _ in SOLVERS:
        run = out.runs[key]
        counts = " ".join(f"{k}{v}" for k, v in sorted(run.counts.items()))
        cvv = out.cv[key]
        rows.append([
            label, f"{run.cost:.12g}", f"{rel_gap(run.cost, out.f_star):.1e}",
            common.fmt_time(out.times[key]), common.fmt_time(out.tta[key]), run.n_iter,
            counts, "yes" if run.converged else "NO", run.reason,
            f"{cvv[0]:.4f} ± {cvv[1]:.3f}" if cvv else "not run",
            cvv[2] if cvv else "—", f"{out.acc_all[key]:.4f}"])
    common.print_table(
        ["solver", "final cost", "gap", "time", f"time to gap ≤ {tol:g}", "iters",
         "evaluations", "conv.", "stop reason", "CV acc (W per fold)", "folds conv.",
         "acc, W all*"], rows)
    notes = []
    for key in ("ism", "ism-tr"):
        run = out.runs[key]
        solver, iters, reason = run.stage_reasons[0]
        if "cycle" in reason.lower() or "stall" in reason.lower():
            notes.append(f"{LABELS[key]}: ISM stopped after {iters} iterations, not "
                         f"converged: {reason}")
    stage = out.stage_at_tta["ism-tr"]
    chain = out.runs["ism-tr"]
    if stage is None:
        notes.append(f"{LABELS['ism-tr']}: no stage reached the gap {tol:g}")
    else:
        tr_iters = chain.stage_reasons[1][1] if len(chain.stage_reasons) > 1 else 0
        notes.append(f"{LABELS['ism-tr']}: the optimum (gap ≤ {tol:g}) was reached by the "
                     f"{chain.stage_reasons[stage][0]} stage; trust-region iterations: "
                     f"{tr_iters}")
    pm = out.runs["pm"]
    if pm.cap:
        notes.append(f"pymanopt hit the {pm.time:.0f} s time cap ({pm.cap}) at cost "
                     f"{pm.cost:.12g} (gap {rel_gap(pm.cost, out.f_star):.1e}): {pm.full_reason}")
    for note in notes:
        print("  - " + note)
    print(f"  times: ldr median of {repeats}, pymanopt median of {pm_repeats} run(s); "
          "* CV of the SVC on Xs·W with W from the full data (leaky, same for all solvers)")
    print()


def ratio_table(names, outcomes, tol: float) -> None:
    rows = []
    for name in names:
        out = outcomes[name]
        pm_total, pm_tta = out.times["pm"], out.tta["pm"]
        for key in ("ism", "ism-tr", "tr"):
            total, tta = out.times[key], out.tta[key]
            rows.append([name, LABELS[key], common.fmt_ratio(total / pm_total),
                         common.fmt_ratio(tta / pm_tta),
                         common.fmt_ratio(pm_tta / tta) if math.isfinite(tta) else "never",
                         common.fmt_ratio(pm_total / total)])
    print("Time ratios ours ÷ pymanopt TrustRegions (autograd) (< 1: ldr faster):")
    common.print_table(["dataset", "ours", "total ÷ total", f"to gap {tol:g} ÷ to gap",
                        "× sooner (to gap)", "× sooner (total)"], rows, left=2)
    print("'—': one side never reached the gap, or a ratio is undefined.")
    print()


def issue_checks(names, outcomes) -> None:
    print("The issue's requirements (every number as measured):")
    for name in names:
        out = outcomes[name]
        f_ism, f_tr = out.runs["ism"].cost, out.runs["tr"].cost
        rel = abs(f_ism - f_tr) / abs(f_tr)
        need = {"wine": 100, "digits": 20}.get(name)
        line = (f"  {name}: |f_ism − f_tr|/|f_tr| = {rel:.1e} "
                f"({'within' if rel <= 1e-6 else 'NOT within'} 1e-6)")
        if need:
            ratios = [("to gap ÷ to gap", out.tta["pm"] / out.tta["ism"]),
                      ("total ÷ total", out.times["pm"] / out.times["ism"]),
                      ("pymanopt to gap ÷ ISM total", out.tta["pm"] / out.times["ism"])]
            line += f"; ISM vs pymanopt, need ≥ {need}× sooner: " + ", ".join(
                f"{label} {x:.3g}× ({'met' if x >= need else 'NOT met'})"
                for label, x in ratios)
            if out.runs["pm"].cap:
                line += " [pymanopt hit its time cap: its times are lower bounds]"
        print(line)
    print()

# --- main ------------------------------------------------------------------------------------
def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="wine and breast_cancer, 1 repeat, pymanopt cap 60 s (smoke run)")
    parser.add_argument("--datasets", default=None,
                        help="comma-separated, from wine,breast_cancer,digits (all)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs per ldr solver (3; 1 with --quick)")
    parser.add_argument("--pymanopt-repeats", type=int, default=1,
                        help="timed runs of pymanopt (1)")
    parser.add_argument("--pymanopt-max-time", type=float, default=None,
                        help="pymanopt time cap in seconds (600; 60 with --quick)")
    parser.add_argument("--tol", type=float, default=1e-6,
                        help="relative gap to the best cost that counts as reached (1e-6)")
    parser.add_argument("--no-cv", action="store_true", help="skip the per-fold CV")
    parser.add_argument("--profile", default=None,
                        help="dataset whose ISM run is profiled (digits; breast_cancer with "
                             "--quick); 'none' to skip")
    args = parser.parse_args(argv)
    names = (args.datasets.split(",") if args.datasets
             else ["wine", "breast_cancer"] if args.quick else list(DATASETS))
    for name in names:
        if name not in DATASETS:
            parser.error(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    repeats = args.repeats or (1 if args.quick else 3)
    pm_max_time = args.pymanopt_max_time or (60.0 if args.quick else 600.0)
    profile = args.profile or ("breast_cancer" if args.quick else "digits")

    with common.single_threaded():
        common.print_header(
            "Supervised HSIC (Gaussian kernel): ISM and trust regions, ldr vs pymanopt",
            ["datasets: sklearn " + ", ".join(f"{k} (q={DATASETS[k][1]})" for k in names)
             + "; X standardized, Γ = HYYᵀH/n² as a low-rank factor, σ = median distance",
             f"solvers: ldr ism (start: Φ₀'s eigenvectors), ism → trust-region, trust-region "
             f"and pymanopt TrustRegions (autograd) from heuristic() = the same start; "
             f"gradient-norm stop {GTOL:g} for all; pymanopt time cap {pm_max_time:g} s",
             f"gap: (f − f*)/|f*|, f* the best cost any solver found; 'time to gap': first "
             f"iterate with gap ≤ {args.tol:g}",
             f"times: ldr Result.time (median of {repeats}), pymanopt wall time of run() "
             f"(median of {args.pymanopt_repeats}); BLAS pinned to 1 thread (threadpoolctl)"])
        # warm-up (untimed): first calls into autograd, pymanopt, scikit-learn and ldr
        warm = load("wine")
        for _, _, solver, start in SOLVERS:
            if solver is None:
                run_pymanopt(warm, pm_max_time)
            else:
                run_ldr(warm, solver, start)

        datas, outcomes = {}, {}
        for name in names:
            datas[name] = load(name)
            outcomes[name] = one_dataset(datas[name], repeats, args.pymanopt_repeats,
                                         pm_max_time, args.tol, not args.no_cv)
        print()
        for name in names:
            report(datas[name], outcomes[name], args.tol, repeats, args.pymanopt_repeats)
        ratio_table(names, outcomes, args.tol)
        issue_checks(names, outcomes)
        if profile != "none":
            profile_ism(datas.get(profile) or load(profile), GTOL)


if __name__ == "__main__":
    main()
