"""The profile of one ISM run (``bench_hsic.py --profile NAME``): one Φ evaluation against a
GEMM of the same flop count, the run's rusage, and line_profiler's (or cProfile's) breakdown
of HSIC's evaluation.  Split from ``bench_hsic.py``, which calls :func:`profile_ism`."""

from __future__ import annotations

import gc
import time

import _common as common
import numpy as np

import ldr


def profile_ism(data, gtol: float, reps: int = 10) -> None:
    """Print the profile of one ISM run on ``data`` (bench_hsic's ``Data``) to ``gtol``."""
    obj = data.obj
    n, d = data.Xs.shape
    q = data.q
    rng = np.random.default_rng(0)
    print(f"Profile of one ISM run on {data.name} (n = {n}, d = {d}, q = {q}), BLAS 1 thread")
    # one Φ evaluation (with the cost and the gradient, in the same pass); rotating W inside
    # its subspace changes its bytes, so the objective's one-point cache never answers
    W = data.M0

    def phi_once():
        R = np.linalg.qr(rng.standard_normal((q, q)))[0]
        return common.timed(lambda: obj.phi(W @ R))()

    t_phi = common.median_time(phi_once, reps)[0]
    flops = 2.0 * n * n * (d + q)
    A, B = rng.random((n, n)), rng.random((n, d + q))
    t_gemm = common.median_time(common.timed(lambda: A @ B), reps)[0]
    rate = flops / t_gemm
    print(f"  one Φ evaluation (with cost and gradient, median of {reps}): "
          f"{t_phi * 1e3:.1f} ms; its flop count n²(d + q) = {flops / 2:.3g} multiply-adds "
          f"= {flops:.3g} flop → {flops / t_phi / 1e9:.2f} GFLOP/s achieved")
    print(f"  dgemm (n×n)·(n×(d+q)), the same flops: {t_gemm * 1e3:.1f} ms = "
          f"{rate / 1e9:.1f} GFLOP/s → one Φ takes {t_phi / t_gemm:.1f}× its flop-bound time")
    _rusage_ism(obj, gtol)
    try:
        from line_profiler import LineProfiler
    except ImportError:
        _cprofile_ism(obj, gtol)
        return
    _line_profile_ism(obj, LineProfiler, gtol)


def _rusage_ism(obj, gtol) -> None:
    """Wall, user and system time and minor page faults of one unprofiled ISM run."""
    try:
        import resource
    except ImportError:  # not on Unix
        return
    gc.collect()
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    res = ldr.solve(obj, "ism", tol=gtol)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    n_phi = res.counts.get("phi", 0)
    print(f"  one ISM run, unprofiled: {res.n_iter} iterations, {n_phi} Φ evaluations, "
          f"{wall:.3f} s wall ({wall / max(n_phi, 1) * 1e3:.1f} ms per Φ + eigh), "
          f"user {r1.ru_utime - r0.ru_utime:.2f} s, system {r1.ru_stime - r0.ru_stime:.2f} s, "
          f"{r1.ru_minflt - r0.ru_minflt} minor page faults "
          f"(≈ {(r1.ru_minflt - r0.ru_minflt) / max(n_phi, 1):.0f} per Φ; an n×n float64 "
          f"array is {obj.X.shape[0] ** 2 * 8 / 4096:.0f} pages of 4 KiB)")


def _line_profile_ism(obj, LineProfiler, gtol) -> None:
    """The lines of a Φ evaluation's pass (HSIC._evaluate and the row tiles' sums:
    ldr/kernels/tiles.py) and of ISM's eigh, by their time per Φ evaluation, the ten longest
    with their source text: where a pass's time goes (β's products, the exponentials, Γ's
    rows, Ψ·[X 1], the eigh), read from the code as it is rather than from a list of lines
    that a change to the objective would leave behind."""
    import linecache

    from ldr.kernels import tiles
    from ldr.objectives import hsic
    from ldr.solvers import ism

    funcs = [hsic.HSIC._evaluate, tiles.Tiles.sums, tiles.Tiles.weighted,
             tiles.Tiles.gamma_sum, ism.minimizing_eigenvectors]
    lp = LineProfiler(*funcs)
    t0 = time.perf_counter()
    res = lp.runcall(ldr.solve, obj, "ism", gtol=gtol)
    wall = time.perf_counter() - t0
    stats = lp.get_stats()
    n_phi = max(res.counts.get("phi", 0), 1)
    calls = tuple(f"{f.__name__}(" for f in funcs)   # a line that calls a profiled function:
    rows, total = [], 0.0                             # its time is counted in that one's lines
    for (filename, _, qualname), timings in stats.timings.items():
        for lineno, hits, t in timings:
            seconds = t * stats.unit
            text = linecache.getline(filename, lineno).strip()
            if any(c in text for c in calls) and not text.startswith("def "):
                continue
            total += seconds
            rows.append((seconds, f"{qualname.rsplit('.', 1)[-1]}:{lineno}", text[:70], hits))
    rows.sort(reverse=True)
    print(f"  line_profiler, one ISM run: {res.n_iter} iterations, {n_phi} Φ evaluations, "
          f"{wall:.2f} s wall under the profiler ({res.reason})")
    table = [[where, text, f"{hits}", f"{t / n_phi * 1e3:.2f} ms",
              f"{100 * t / max(total, 1e-300):.0f}%"] for t, where, text, hits in rows[:10]]
    table.append(["all profiled lines", "", "", f"{total / n_phi * 1e3:.2f} ms", "100%"])
    common.print_table(["function:line", "source", "hits", "per Φ evaluation", "share"], table)
    print()


def _cprofile_ism(obj, gtol) -> None:
    import cProfile
    import pstats

    prof = cProfile.Profile()
    res = prof.runcall(ldr.solve, obj, "ism", gtol=gtol)
    print(f"  cProfile (line_profiler not installed), one ISM run: {res.n_iter} iterations; "
          "top functions by own time:")
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)
