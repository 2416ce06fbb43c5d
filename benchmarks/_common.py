"""Helpers shared by the benchmark scripts in this folder (benchmarks, not tests).

* :func:`single_threaded` pins every BLAS/OpenMP pool to one thread (threadpoolctl); the
  scripts run their whole measurement inside it, so timings do not depend on how many cores
  the machine happens to have or on what else runs on it.
* :func:`median_time` repeats a measurement and keeps the median.
* :func:`print_table` prints a small aligned text table; :func:`fmt_time`,
  :func:`fmt_ratio` and :func:`fmt_range` format its cells.
* :func:`print_header` says what was measured and on what software; :func:`git_revision`
  names the commit.
* :func:`metric_learn_lmnn` is metric-learn's LMNN, usable with this scikit-learn.
* :func:`status_mb` reads this process's own peak or current resident memory;
  :func:`run_child` runs a script's ``--child`` mode in a fresh process on one thread.

The scripts import this module as ``_common``: run them as ``python benchmarks/<script>.py``
(the script's folder is then first on ``sys.path``).
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_info, threadpool_limits


def single_threaded():
    """Context manager limiting BLAS (and OpenMP) pools to one thread."""
    return threadpool_limits(limits=1)


def timed(fn: Callable[[], Any]) -> Callable[[], tuple[float, Any]]:
    """Wrap ``fn`` so that it returns ``(wall seconds, fn())``, for :func:`median_time`."""

    def run():
        start = time.perf_counter()
        value = fn()
        return time.perf_counter() - start, value

    return run


def median_time(fn: Callable[[], tuple[float, Any]], repeats: int) -> tuple[float, list]:
    """Call ``fn()`` ``repeats`` times and return ``(median seconds, [values])``.

    ``fn`` returns ``(seconds, value)``: the time of the thing measured (a solver's own clock,
    a time-to-gap read from a log, or the wall time from :func:`timed`) and whatever else the
    caller wants to keep (iterations, the answer, ...).  A run that did not reach its target
    reports ``math.inf`` seconds; the median is then ``inf`` only if most runs failed.
    """
    if repeats < 1:
        raise ValueError(f"repeats: must be >= 1, got {repeats}")
    times, values = [], []
    for _ in range(repeats):
        seconds, value = fn()
        times.append(float(seconds))
        values.append(value)
    return statistics.median(times), values


def median(values: Sequence[float]) -> float:
    """Median that tolerates ``inf`` entries (failed runs); ``nan`` for an empty list."""
    return statistics.median(values) if len(values) else math.nan


def fmt_time(seconds: float) -> str:
    """``12.3 ms`` style; ``—`` for inf/nan (target not reached)."""
    if not math.isfinite(seconds):
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.3g}"


def fmt_range(values: Sequence[float]) -> str:
    """``min–max`` of per-dataset ratios."""
    vals = list(values)
    if not vals:
        return "—"
    return f"{fmt_ratio(min(vals))}–{fmt_ratio(max(vals))}"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]],
                left: int = 1) -> None:
    """Print rows (cells are converted with ``str``) aligned under ``headers``.

    The first ``left`` columns are left-aligned (labels), the others right-aligned (numbers).
    """
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths)))

    print(line(cells[0]))
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print(line(row))


def git_revision(short: bool = True) -> str:
    """The repository's HEAD commit (abbreviated unless ``short`` is False), with
    " (with uncommitted changes)" when tracked files differ from it; "unknown" outside git."""
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(["git", "rev-parse", *(["--short"] if short else []), "HEAD"],
                             cwd=root, text=True, capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + (" (with uncommitted changes)" if dirty.strip() else "")


def print_header(title: str, lines: Sequence[str]) -> None:
    """Title, what was measured (``lines``), software versions and BLAS threading."""
    import autograd
    import numpy
    import pymanopt
    import scipy

    import ldr

    print(title)
    print("=" * len(title))
    for text in lines:
        print(text)
    blas = [f"{i.get('internal_api', i['user_api'])} {i.get('version', '')} "
            f"({i['num_threads']} thread{'s' if i['num_threads'] != 1 else ''})"
            for i in threadpool_info()]
    print(f"software: ldr {ldr.__version__} @ {git_revision()}, pymanopt "
          f"{pymanopt.__version__}, autograd {_version(autograd)}, numpy {numpy.__version__}, "
          f"scipy {scipy.__version__}, Python {platform.python_version()}")
    print(f"BLAS: {', '.join(blas) or 'none found'}; machine: {platform.machine()}, "
          f"{platform.processor() or platform.system()}")
    print()


def _version(module) -> str:
    version = getattr(module, "__version__", None)
    if version:
        return version
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(module.__name__)
    except PackageNotFoundError:
        return "?"


def metric_learn_lmnn():
    """metric-learn's LMNN class, or None when metric-learn is not installed
    (``pip install -e ".[bench]"``).  metric-learn 0.7 calls scikit-learn's ``check_array``
    and ``check_X_y`` with the keyword ``force_all_finite``, which scikit-learn 1.8 renamed
    ``ensure_all_finite``: its two validation helpers are wrapped, once, to rename it."""
    try:
        import metric_learn
        import metric_learn._util as util
    except ImportError:
        return None

    def renamed(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if "force_all_finite" in kwargs:
                kwargs["ensure_all_finite"] = kwargs.pop("force_all_finite")
            return fn(*args, **kwargs)
        return call

    for name in ("check_X_y", "check_array"):
        fn = getattr(util, name)
        if not getattr(fn, "_renamed", False):
            wrapped = renamed(fn)
            wrapped._renamed = True
            setattr(util, name, wrapped)
    return metric_learn.LMNN


def status_mb(field: str) -> float:
    """``VmHWM`` (peak) or ``VmRSS`` (now) of this process, MiB: its own, not inherited
    (``ru_maxrss`` keeps the parent's peak across fork and exec); NaN where unreadable."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run_child(script: str, *args) -> dict:
    """Run ``python script --child args…`` in a fresh process with BLAS, OpenMP and numba on
    one thread (so its peak memory is its own) and return the JSON its last line prints; a
    child that fails ends the benchmark with its stderr's tail."""
    cmd = [sys.executable, str(Path(script).resolve()), "--child", *map(str, args)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"child {cmd[3:]} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
