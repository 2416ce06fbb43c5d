"""Benchmark: the autodiff backends of a custom objective (``ldr.core.backends``).

Run from the checkout root (JAX and PyTorch rows appear where they are installed)::

    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_backends.py   # ~4 minutes
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_backends.py --floor-only
    flock /tmp/ldr-bench.lock .venv/bin/python -P benchmarks/bench_backends.py --floor-only \
        --compile                                                        # + torch.compile
    .venv/bin/python -P benchmarks/bench_backends.py --quick                      # smoke run

The README's custom objective, sparse PCA ``−tr(MᵀCM) + λ Σ √(M² + ε)`` on Stiefel(d, r),
written four times — ``autograd.numpy`` (the default backend), ``jax.numpy``
(``backend="jax"``; with ``merge_symmetric=True``, ``ldr.core.symmetric_products``: the rows
"jax-merge"), PyTorch (``backend="torch"``, eager, and with ``compile=True``: the rows
"torch-compile"; with ``merge_symmetric=True``, ``ldr.core.aten_products``: the rows ending
"-merge") and NumPy with a hand-written gradient and Hessian (``backend="numpy"``) —
at d × r = 13 × 2 (wine's covariance, the README's) and 200 × 5 (``--large``: also
1000 × 10; covariances of seeded Gaussian data).  BLAS, PyTorch and XLA on one thread;
medians over repeats; wall time.

0. **The arithmetic floor** (d × r = 500 × 10; ``--floor-only`` prints only this).  A
   Hessian-vector product of this cost needs one GEMM, C·V (500×500 by 500×10: the
   hand-written ``ehvp`` is ``−2 C V + λ ε V ⊘ (M² + ε)^{3/2}``); its NumPy time on one thread
   is the floor, and every oracle's median time is divided by it — ldr's backends (NumPy in,
   NumPy out, as the solvers call them; PyTorch eager and with ``compile=True``), pymanopt's
   three, and for reference the same jitted ``jax.jvp`` of ``jax.grad`` on JAX's own arrays
   (no conversion), XLA's own C·V and Vᵀ·C (the two orientations its HVP's GEMMs take),
   ``torch.func``'s reverse-over-reverse (``vjp`` of ``grad``, ldr's) and forward-over-reverse
   (``jvp`` of ``grad``) products on PyTorch's own tensors, eager and (with ``--compile``)
   under ``torch.compile``, and PyTorch's own C·V and Vᵀ·C.  ``÷ pymanopt`` divides an ldr
   row's time by pymanopt's backend of the same name, round by round.  The callables are
   timed in interleaved rounds (each once per round, a batch of about 30 ms) and ``÷ floor``
   is the median of the per-round ratios, so that a load that comes and goes on a shared
   machine falls on the floor and the oracle alike; each is called twice before timing, so
   compilation and tracing are excluded (the ``first`` column shows them).  Automatic
   differentiation of ``tr(MᵀCM)`` does not know that C is symmetric: its HVP multiplies by C
   and by Cᵀ, two GEMMs, so a compiled generic HVP lands near twice the floor; "ldr
   jax-merge" rewrites JAX's traced derivatives to one product by C (the optional
   ``ldr.core.symmetric_products``), "ldr torch-merge" and "ldr torch-compile-merge"
   PyTorch's (``ldr.core.aten_products``).  XLA's GEMM and
   PyTorch's (MKL on its CPU wheels) differ from NumPy's (OpenBLAS), which the reference rows
   show.
1. **Oracles.**  One ``egrad`` and one ``ehvp`` call at a random point (NumPy in, NumPy out,
   as the solvers call them), and the products of one inner solve (``ehvp_at``: 20 products
   at one point).  Ratios against ldr's autograd, and against pymanopt 2.2's backend of the
   same name (``pymanopt.function.jax`` / ``pytorch`` / ``autograd``: its
   ``euclidean_gradient`` and ``euclidean_hessian``), measured in the same run.
   ``first`` is the first gradient and Hessian-vector product of a fresh objective (JAX's
   compilation; PyTorch's with ``compile=True``, whose program a later objective made by the
   same function reuses, so the ``solve`` column of that row includes it only once).
2. **Solve.**  ``ldr.solve(objective, "trust-region", random_state=0)`` on a fresh objective,
   compilation included; its ratio against autograd, its cost and iterations.  At 13 × 2
   every backend reaches the same cost (the tests hold it to 1e-10); at 200 × 5 the smoothed
   ℓ1 term (ε = 1e-6) makes the trust region take about 1000 iterations, and a backend whose
   rounding differs may end elsewhere or at ``max_iter`` (the column says so).
3. **PyTorch's routes** (``--compile``): eager ``torch.autograd`` (reverse over reverse; what
   ``torch.compile`` cannot differentiate twice) against ``torch.func``'s ``vjp`` and ``jvp``
   of ``torch.func.grad``, eager and under ``torch.compile``, with the time to compile — the
   evidence for the route ``ldr.core.backends`` takes (``torch.func.vjp`` of the gradient, eager
   by default, compiled with ``compile=True``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import autograd.numpy as anp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -P` leaves it out
from _common import (  # noqa: E402
    fmt_ratio,
    fmt_time,
    median_time,
    print_header,
    print_table,
    single_threaded,
    timed,
)

import ldr  # noqa: E402

LAM, EPS = 0.1, 1e-6
HAS = {name: importlib.util.find_spec(name) is not None for name in ("jax", "torch")}


def sparse_pca(C, r, backend):
    d = C.shape[0]
    if backend == "autograd":
        return ldr.objective(lambda M: -anp.trace(M.T @ C @ M)
                             + LAM * anp.sum(anp.sqrt(M**2 + EPS)), shape=(d, r))
    if backend in ("jax", "jax-merge"):
        import jax.numpy as jnp

        Cj = jnp.asarray(C)
        return ldr.objective(lambda M: -jnp.trace(M.T @ Cj @ M)
                             + LAM * jnp.sum(jnp.sqrt(M**2 + EPS)), shape=(d, r),
                             backend="jax", merge_symmetric=backend == "jax-merge")
    if backend.startswith("torch"):
        import torch

        Ct = torch.as_tensor(C)
        return ldr.objective(lambda M: -torch.trace(M.T @ Ct @ M)
                             + LAM * torch.sum(torch.sqrt(M**2 + EPS)), shape=(d, r),
                             backend="torch", compile="compile" in backend,
                             merge_symmetric=backend.endswith("merge"))

    def ehvp(M, V):  # −2 C V + λ ε V ⊘ (M² + ε)^{3/2}: one GEMM, the rest elementwise
        s = M**2 + EPS
        return -2 * (C @ V) + (LAM * EPS) * V / (s * np.sqrt(s))

    return ldr.objective(lambda M: -np.trace(M.T @ C @ M) + LAM * np.sum(np.sqrt(M**2 + EPS)),
                         shape=(d, r), backend="numpy",
                         egrad=lambda M: -2 * (C @ M) + LAM * M / np.sqrt(M**2 + EPS),
                         ehvp=ehvp)


def pymanopt_name(backend):
    """pymanopt's backend of the same name as ldr's ``backend`` (None: it has none)."""
    return {"autograd": "autograd", "jax": "jax", "jax-merge": "jax", "torch": "torch",
            "torch-merge": "torch", "torch-compile": "torch",
            "torch-compile-merge": "torch"}.get(backend)


def pymanopt_oracles(C, r, backend):
    """pymanopt's (egrad, ehess) for the same cost through its backend of that name."""
    import pymanopt

    manifold = pymanopt.manifolds.Stiefel(C.shape[0], r)
    if backend == "jax":
        import jax.numpy as xp

        Cx = xp.asarray(C)
        decorate = pymanopt.function.jax
    elif backend == "torch":
        import torch as xp

        Cx = xp.as_tensor(C)
        decorate = pymanopt.function.pytorch
    else:
        xp, Cx, decorate = anp, C, pymanopt.function.autograd

    @decorate(manifold)
    def cost(M):
        return -xp.trace(M.T @ Cx @ M) + LAM * xp.sum(xp.sqrt(M**2 + EPS))

    problem = pymanopt.Problem(manifold, cost)
    return problem.euclidean_gradient, problem.euclidean_hessian


def per_call(fn, repeats, number):
    seconds, _ = median_time(timed(lambda: [fn() for _ in range(number)]), repeats)
    return seconds / number


def one_backend(C, r, backend, M, V, repeats, number):
    """(first, egrad, ehvp, 20 HVPs, pymanopt egrad, pymanopt ehvp, solve, cost) times."""
    t0 = time.perf_counter()
    obj = sparse_pca(C, r, backend)
    obj.egrad(M), obj.ehvp(M, V)
    first = time.perf_counter() - t0
    g = per_call(lambda: obj.egrad(M), repeats, number)
    h = per_call(lambda: obj.ehvp(M, V), repeats, number)

    def inner():
        hvp = obj.ehvp_at(M)
        for _ in range(20):
            hvp(V)

    h20 = per_call(inner, repeats, max(1, number // 10))
    pm_g = np.nan
    pm_h = np.nan
    if pymanopt_name(backend) is not None:
        pg, ph = pymanopt_oracles(C, r, pymanopt_name(backend))
        pg(M), ph(M, V)
        pm_g = per_call(lambda: pg(M), repeats, max(1, number // 5))
        pm_h = per_call(lambda: ph(M, V), repeats, max(1, number // 5))
    solve_t, res = median_time(timed(lambda: ldr.solve(sparse_pca(C, r, backend),
                                                       "trust-region", random_state=0)), repeats)
    status = f"{res[0].n_iter}{'' if res[0].converged else ' (not converged)'}"
    return first, g, h, h20, pm_g, pm_h, solve_t, res[0].cost, status


def measure(C, r, backends, repeats, number):
    rng = np.random.default_rng(1)
    d = C.shape[0]
    M = np.linalg.qr(rng.standard_normal((d, r)))[0]
    V = rng.standard_normal((d, r))
    rows, base = [], {}
    for backend in backends:
        first, g, h, h20, pm_g, pm_h, solve_t, cost, status = one_backend(
            C, r, backend, M, V, repeats, number)
        if backend == "autograd":
            base = {"g": g, "h": h, "h20": h20, "solve": solve_t}
        rows.append([backend, fmt_time(first), fmt_time(g), fmt_ratio(g / base["g"]),
                     fmt_ratio(g / pm_g), fmt_time(h), fmt_ratio(h / base["h"]),
                     fmt_ratio(h / pm_h), fmt_time(h20), fmt_ratio(h20 / base["h20"]),
                     fmt_time(solve_t), fmt_ratio(solve_t / base["solve"]), f"{cost:.12g}",
                     status])
    return rows


def covariance(d):
    """The covariance of seeded Gaussian data (2d × d), as every size but wine's uses."""
    Z = np.random.default_rng(0).standard_normal((2 * d, d))
    return Z.T @ Z / len(Z)


def interleaved(fns, rounds, budget=0.03):
    """Per-call seconds of each of ``fns`` (name → callable of no arguments), one value per
    round: in each of ``rounds`` rounds every callable runs once as a batch of calls lasting
    about ``budget`` seconds, so that a load that comes and goes on a shared machine falls on
    all of them alike.  Each is called twice before any timing (compilation excluded)."""
    numbers = {}
    for name, fn in fns.items():
        fn()
        t0 = time.perf_counter()
        fn()
        numbers[name] = max(1, round(budget / max(time.perf_counter() - t0, 1e-6)))
    out = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            n = numbers[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            out[name].append((time.perf_counter() - t0) / n)
    return out


def floor_rows(d, r, backends, rounds, compile_torch=False):
    """HVP and egrad of each backend (ldr's and pymanopt's) against the one GEMM C·V an HVP
    of the sparse PCA needs (NumPy, one thread): the arithmetic floor.  Returns (floor
    seconds, rows)."""
    C = covariance(d)
    rng = np.random.default_rng(1)
    M = np.linalg.qr(rng.standard_normal((d, r)))[0]
    V = rng.standard_normal((d, r))
    fns = {"floor": lambda: C @ V}
    first = {}
    kinds = {}
    against = {}  # an ldr row → the pymanopt row of the same backend

    def add(label, kind, **oracles):
        kinds[label] = kind
        for name, fn in oracles.items():
            fns[(label, name)] = fn

    for backend in backends:
        t0 = time.perf_counter()
        obj = sparse_pca(C, r, backend)
        obj.egrad(M)
        obj.ehvp(M, V)
        first[f"ldr {backend}"] = time.perf_counter() - t0

        def at20(obj=obj):
            hvp = obj.ehvp_at(M)
            for _ in range(20):
                hvp(V)

        add(f"ldr {backend}", "NumPy in, NumPy out", hvp=lambda obj=obj: obj.ehvp(M, V),
            at=at20, egrad=lambda obj=obj: obj.egrad(M))
        if pymanopt_name(backend) is not None:
            against[f"ldr {backend}"] = f"pymanopt {pymanopt_name(backend)}"
    for backend in dict.fromkeys(pymanopt_name(b) for b in backends):
        if backend is None:
            continue
        t0 = time.perf_counter()
        pg, ph = pymanopt_oracles(C, r, backend)
        pg(M)
        ph(M, V)
        first[f"pymanopt {backend}"] = time.perf_counter() - t0
        add(f"pymanopt {backend}", "NumPy in, NumPy out", hvp=lambda ph=ph: ph(M, V),
            egrad=lambda pg=pg: pg(M))
    if "jax" in backends:  # references: what XLA does with JAX's own arrays, no conversion
        import jax
        import jax.numpy as jnp

        Cj = jnp.asarray(C)
        Mj = jnp.asarray(M)
        Vj = jnp.asarray(V)

        def fj(M):
            return -jnp.trace(M.T @ Cj @ M) + LAM * jnp.sum(jnp.sqrt(M**2 + EPS))

        gj = jax.jit(jax.grad(fj))
        hj = jax.jit(lambda M, V: jax.jvp(jax.grad(fj), (M,), (V,))[1])
        mm = jax.jit(lambda V: Cj @ V)
        mmt = jax.jit(lambda V: V.T @ Cj)
        add("jax.jit(jvp∘grad)", "jax.Array in and out",
            hvp=lambda: hj(Mj, Vj).block_until_ready(),
            egrad=lambda: gj(Mj).block_until_ready())
        add("XLA's C·V (jax.jit)", "jax.Array", hvp=lambda: mm(Vj).block_until_ready())
        add("XLA's Vᵀ·C (jax.jit)", "jax.Array", hvp=lambda: mmt(Vj).block_until_ready())
    if "torch" in backends:
        import torch
        import torch.func

        Ct = torch.as_tensor(C)
        Mt = torch.as_tensor(M)
        Vt = torch.as_tensor(V)
        _, gt, routes = torch_routes(Ct)
        for name, ht in routes.items():
            add(f"torch.func {name} (eager)", "torch.Tensor in and out",
                hvp=lambda ht=ht: ht(Mt, Vt), egrad=lambda: gt(Mt))
        if compile_torch:
            for name, ht in routes.items():
                t0 = time.perf_counter()
                hc = torch.compile(ht, dynamic=False)
                gc = torch.compile(gt, dynamic=False)
                hc(Mt, Vt)
                gc(Mt)
                label = f"torch.compile(torch.func {name})"
                first[label] = time.perf_counter() - t0
                add(label, "torch.Tensor in and out", hvp=lambda hc=hc: hc(Mt, Vt),
                    egrad=lambda gc=gc: gc(Mt))
        add("PyTorch's C·V (torch.matmul)", "torch.Tensor", hvp=lambda: Ct @ Vt)
        add("PyTorch's Vᵀ·C (torch.mm)", "torch.Tensor", hvp=lambda: torch.mm(Vt.T, Ct))
    times = {key: np.array(value) for key, value in interleaved(fns, rounds).items()}
    floor = times["floor"]
    rows = []
    for label, kind in kinds.items():
        row = [label, kind, fmt_time(first.get(label, np.nan))]
        for name, scale in (("hvp", 1), ("at", 20), ("egrad", 1)):
            t = times.get((label, name))
            if t is None:
                row += ["", ""]
                continue
            t = t / scale
            row += [fmt_time(float(np.median(t))), f"{np.median(t / floor):.2f}"]
        for name in ("hvp", "egrad"):
            other = times.get((against.get(label), name))
            row.append("" if other is None
                       else f"{np.median(times[(label, name)] / other):.3g}")
        rows.append(row)
    return float(np.median(floor)), rows


def torch_routes(Ct):
    """The sparse PCA closing over ``Ct``, its ``torch.func.grad`` and its two Hessian-vector
    products: ``vjp`` of the gradient (reverse over reverse, ldr's) and ``jvp`` of it
    (forward over reverse)."""
    import torch
    import torch.func

    def cost(M):
        return -torch.trace(M.T @ Ct @ M) + LAM * torch.sum(torch.sqrt(M**2 + EPS))

    grad = torch.func.grad(cost)

    def vjp(M, V):
        return torch.func.vjp(grad, M)[1](V)[0]

    def jvp(M, V):
        return torch.func.jvp(grad, (M,), (V,))[1]

    return cost, grad, {"vjp∘grad": vjp, "jvp∘grad": jvp}


def compile_rows(C, r, repeats, number):
    """Each PyTorch route to the gradient and the HVP, eager and under ``torch.compile``,
    on PyTorch's own tensors, against eager ``torch.autograd``."""
    import torch

    rng = np.random.default_rng(1)
    M = torch.as_tensor(np.linalg.qr(rng.standard_normal((C.shape[0], r)))[0])
    V = torch.as_tensor(rng.standard_normal((C.shape[0], r)))
    cost, grad, routes = torch_routes(torch.as_tensor(C))

    def autograd_grad(M):
        with torch.enable_grad():
            X = M.detach().requires_grad_(True)
            return torch.autograd.grad(cost(X), X)[0]

    def autograd_hvp(M, V):
        with torch.enable_grad():
            X = M.detach().requires_grad_(True)
            G = torch.autograd.grad(cost(X), X, create_graph=True)[0]
            return torch.autograd.grad(G, X, V)[0]

    base = {"egrad": per_call(lambda: autograd_grad(M), repeats, number),
            "ehvp": per_call(lambda: autograd_hvp(M, V), repeats, number)}
    size = f"{C.shape[0]}×{r}"
    out = [[f"{size} egrad", "torch.autograd", fmt_time(base["egrad"]), "1", "", "", ""],
           [f"{size} ehvp", "torch.autograd (reverse over reverse)", fmt_time(base["ehvp"]),
            "1", "", "", ""]]
    cases = [("egrad", "torch.func.grad", grad, (M,))]
    cases += [("ehvp", f"torch.func {name}", fn, (M, V)) for name, fn in routes.items()]
    for oracle, label, fn, args in cases:
        eager = per_call(lambda fn=fn, args=args: fn(*args), repeats, number)
        t0 = time.perf_counter()
        compiled = torch.compile(fn, dynamic=False)
        compiled(*args)
        setup = time.perf_counter() - t0
        fast = per_call(lambda compiled=compiled, args=args: compiled(*args), repeats, number)
        out.append([f"{size} {oracle}", label, fmt_time(eager), fmt_ratio(eager / base[oracle]),
                    fmt_time(setup), fmt_time(fast), fmt_ratio(fast / base[oracle])])
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small size, few repeats")
    parser.add_argument("--compile", action="store_true", help="also time torch.compile")
    parser.add_argument("--compile-only", action="store_true", help="only time torch.compile")
    parser.add_argument("--large", action="store_true", help="also d × r = 1000 × 10 (slow)")
    parser.add_argument("--floor-only", action="store_true",
                        help="only the d × r = 500 × 10 table against the GEMM floor")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    number = 20 if args.quick else 100
    backends = ["autograd"] + [b for b in ("jax", "torch") if HAS[b]] + ["numpy"]
    if HAS["torch"]:
        import torch

        at = backends.index("torch") + 1
        backends[at:at] = ["torch-merge", "torch-compile", "torch-compile-merge"]
    if HAS["jax"]:
        backends.insert(backends.index("jax") + 1, "jax-merge")
        torch.set_num_threads(1)
    if HAS["jax"]:
        import jax

        jax.config.update("jax_enable_x64", True)
    versions = []
    for name in ("jax", "torch"):
        if HAS[name]:
            versions.append(f"{name} {__import__(name).__version__}")
    print_header("custom-objective backends: sparse PCA on Stiefel(d, r)",
                 [f"backends: {', '.join(backends)} ({', '.join(versions) or 'none optional'});"
                  f" medians of {repeats} repeats; ÷ag: ratio to ldr's autograd, ÷pymanopt: "
                  "to pymanopt's backend of the same name (< 1: faster)"])
    X, _ = ldr.datasets.load("wine")
    problems = [(X.T @ X / len(X), 2)]
    if not args.quick:
        for d, r in ((200, 5), (1000, 10)) if args.large else ((200, 5),):
            problems.append((covariance(d), r))
    head = ["backend", "first", "egrad", "÷ag", "÷pymanopt", "ehvp", "÷ag", "÷pymanopt",
            "20 HVPs at M", "÷ag", "solve", "÷ag", "cost", "iterations"]
    with single_threaded():
        if not args.compile_only:
            rounds = 3 if args.quick else 11
            floor, rows = floor_rows(500, 10, backends, rounds, compile_torch=args.compile)
            print(f"\nd × r = 500 × 10: each oracle against the arithmetic floor, the one GEMM "
                  f"C·V an HVP needs (500×500 by 500×10, NumPy, one thread): {fmt_time(floor)}."
                  f"\nMedians of {rounds} interleaved rounds; ÷ floor: the median of the "
                  "per-round ratios; 'first': the first egrad and HVP of a fresh objective "
                  "(compilation, tracing), excluded from the medians; 'at M': per product of "
                  "ehvp_at(M), 20 products at one point (an inner solve), its set-up included",
                  flush=True)
            print_table(["oracle", "arrays", "first", "HVP", "÷ floor", "HVP at M", "÷ floor",
                         "egrad", "÷ floor", "HVP ÷ pymanopt", "egrad ÷ pymanopt"], rows,
                        left=2)
        for C, r in [] if args.compile_only or args.floor_only else problems:
            print(f"\nd × r = {C.shape[0]} × {r}", flush=True)
            print_table(head, measure(C, r, backends, repeats, number))
        if (args.compile or args.compile_only) and HAS["torch"] and not args.floor_only:
            print("\nPyTorch's routes on its own tensors: torch.func.grad and the vjp "
                  "(reverse over reverse, ldr's) and jvp (forward over reverse) of it, eager "
                  "and under torch.compile (inductor), against eager torch.autograd "
                  "(÷autograd; torch.compile cannot differentiate torch.autograd.grad twice)")
            print_table(["oracle", "route", "eager", "÷autograd", "compile", "compiled call",
                         "÷autograd"],
                        [row for C, r in problems[:2] for row in compile_rows(C, r, repeats,
                                                                              number)])


if __name__ == "__main__":
    main()
