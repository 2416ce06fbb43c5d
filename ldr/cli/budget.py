"""The command line's budgets and what it says while it works.

* **Memory** (``--memory-limit``): by default :data:`MEMORY_FRACTION` of the memory the
  machine has available now (``MemAvailable`` of ``/proc/meminfo``, else the free pages of
  ``os.sysconf``), so that a run neither swaps nor is killed while other programs keep
  theirs.  It bounds the data (a table loaded whole must fit) and, for a method that holds
  n×n arrays, their size as the method declares it (the ``memory`` of its
  :class:`~ldr.core.objective.Method`): :func:`check_memory` refuses, before anything is
  computed, a table whose estimate exceeds it, stating the memory needed.
* **Time** (``--max-time``): by default :data:`TIME_BUDGET` seconds for the whole comparison,
  shared equally among the runs not yet done (``ldr.compare(time_budget=...)``); a number
  is the budget of each run.  A run that hits it is reported with verdict "budget".
* **Progress** (:class:`ProgressLines`): one line per run on stderr — on a terminal rewritten
  in place while the run goes (solver, start, elapsed time, iteration, cost), elsewhere only
  its final line — and a line per solver skipped.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from ldr.core.errors import ParameterError

#: the share of the machine's available memory that ``--memory-limit`` defaults to
MEMORY_FRACTION = 0.5
#: seconds for all runs of a comparison together when ``--max-time`` is not given
TIME_BUDGET = 45.0


def size(nbytes: float) -> str:
    """Bytes for a reader: ``512 MiB``, ``2.1 GiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{int(nbytes)} B"


def available_memory() -> int | None:
    """Bytes the machine can give new allocations without swapping (``MemAvailable``), or
    its free pages where there is no ``/proc/meminfo``; None if neither is known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, AttributeError):
        return None


def default_memory_limit() -> tuple[int | None, str]:
    """``(bytes, how it was chosen)``: :data:`MEMORY_FRACTION` of :func:`available_memory`."""
    free = available_memory()
    if free is None:
        return None, "no limit: the machine's available memory is unknown"
    return int(MEMORY_FRACTION * free), (f"the default, {MEMORY_FRACTION:g} of the "
                                         f"{size(free)} this machine has available")


def check_memory(method: str, declared, n: int, data_bytes: int, y, limit: int | None,
                 how: str, chunked: list[str]) -> int:
    """The bytes ``method`` needs for ``n`` rows (its declared n×n arrays, the ``memory`` of
    its :class:`~ldr.core.objective.Method`, plus twice the data: the table and the
    objective's copy); a :class:`~ldr.core.errors.ParameterError` about ``--memory-limit`` when
    that exceeds ``limit``."""
    sizes = None if y is None else np.unique(np.asarray(y), return_counts=True)[1].tolist()
    arrays = 0 if declared is None else int(declared(n, sizes))
    need = arrays + 2 * data_bytes
    if limit is not None and need > limit:
        what = (f"{size(arrays)} for its n×n arrays (n = {n} rows"
                + (f", the largest class {max(sizes)}" if sizes and method == "wda" else "")
                + f") plus {size(2 * data_bytes)} for the data")
        raise ParameterError("--memory-limit", (
            f"{method} needs its data in memory and would need about {size(need)}: {what}; "
            f"the limit is {size(limit)} ({how}). Raise --memory-limit if the machine has it, "
            f"use fewer rows, or a method that reads its rows in chunks "
            f"({', '.join(chunked)})"))
    return need


class ProgressLines:
    """``progress`` for :func:`ldr.compare`: one line per run on ``stream`` (module
    docstring); on a terminal the line is rewritten at most every ``every`` seconds."""

    def __init__(self, stream=None, tty: bool | None = None, every: float = 0.25):
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.every = every
        self.shown = 0.0

    def _write(self, text: str, final: bool) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
        elif final:
            self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, event: str, info: dict) -> None:
        if event == "skipped":
            self._write(f"ldr: skipped {info['solver']}: {info['reason']}", True)
            return
        if event not in ("start", "iteration", "certificate", "done"):
            return
        head = f"ldr: [{info['index']}/{info['total']}] {info['solver']} from {info['start']}"
        now = time.perf_counter()
        if event == "done":
            row = info["row"]
            if row["cost"] is None:
                self._write(f"{head}: {row['reason']}", True)
                return
            self._write(f"{head}: {row['verdict']}, cost {row['cost']:.10g}, {row['n_iter']} "
                        f"iterations, {info.get('elapsed', row['time']):.1f} s", True)
        elif event == "start":
            budget = info["budget"]
            limit = "" if not np.isfinite(budget) else f" (budget {budget:.3g} s)"
            self._write(f"{head}: started{limit}", False)
            self.shown = now
        elif self.tty and now - self.shown >= self.every:
            self.shown = now
            if event == "certificate":
                self._write(f"{head}: {info['elapsed']:.1f} s, certifying the answer", False)
            else:
                self._write(f"{head}: {info['elapsed']:.1f} s, iteration {info['iteration']}, "
                            f"cost {info['cost']:.10g}", False)
