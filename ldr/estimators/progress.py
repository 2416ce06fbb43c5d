"""The ``verbose`` display of an estimator's fit: a progress line per iteration of each solve,
in the layout of scikit-learn's ``NeighborhoodComponentsAnalysis(verbose=1)``.

A fit with ``verbose >= 1`` prints, on standard output, for each :func:`ldr.solve` it runs::

    [NCA]
    [NCA]  Iteration      Objective Value    Gradient norm    Time(s)
    [NCA] --------------------------------------------------------------
    [NCA]          0     -6.988936e+01     1.234567e+00       0.00
    ...
    [NCA] gradient norm 1.2e-07 ≤ tol·scale 3.4e-06 after 41 iterations; training took 0.05s.

The iteration count runs on over the stages of a solver chain (the driver's count), the
objective value is the cost the solver minimizes, and the time is measured from the first
line.  An alternation (the clustering estimators) also prints a line per round, its cost,
its change and its time (:func:`round_lines`).  ``verbose=0`` prints nothing.
"""

from __future__ import annotations

import numbers
import sys
import time
from collections.abc import Callable

from ldr.core.errors import ParameterError
from ldr.driver.loop import solve

__all__ = ["Progress", "check_verbose", "round_lines", "solve_shown"]

#: the columns' header, as scikit-learn's NCA lays it out (with the gradient norm added)
HEADER = "{:>10} {:>20} {:>16} {:>10}".format("Iteration", "Objective Value", "Gradient norm",
                                              "Time(s)")


def check_verbose(verbose) -> int:
    """``verbose`` as an int ≥ 0 (a bool counts as 0 or 1), or a ParameterError naming it."""
    if isinstance(verbose, bool):
        return int(verbose)
    if not isinstance(verbose, numbers.Integral) or verbose < 0:
        raise ParameterError("verbose", f"must be an integer >= 0 (0: silent, 1: a line per "
                             f"iteration), got {verbose!r}")
    return int(verbose)


class Progress:
    """A :func:`ldr.solve` callback that prints a progress line per iteration, then calls the
    user's ``callback`` (and stops the run where that returns True).

    Parameters
    ----------
    name : str
        The estimator's class name, the lines' prefix.
    callback : callable(state) -> bool, optional
        A user's callback (``solver_params["callback"]``), called after the line.
    stream : file, optional
        Where the lines go (standard output by default, read at each line).
    """

    def __init__(self, name: str, callback: Callable | None = None, stream=None):
        self.prefix = f"[{name}]"
        self.callback = callback
        self.stream = stream
        self.started: float | None = None

    def _print(self, text: str) -> None:
        print(f"{self.prefix} {text}".rstrip(), file=self.stream or sys.stdout)

    def __call__(self, state) -> bool:
        if self.started is None:
            self.started = time.perf_counter()
            self._print("")
            self._print(HEADER)
            self._print("-" * len(HEADER))
        elapsed = time.perf_counter() - self.started
        self._print(f"{state.iteration:>10d} {state.cost:>20.6e} {state.grad_norm:>16.6e} "
                    f"{elapsed:>10.2f}")
        return bool(self.callback(state)) if self.callback is not None else False

    def finish(self, result) -> None:
        """The last line: the driver's reason and the solve's time."""
        self._print(f"{result.reason} after {result.n_iter} iterations; training took "
                    f"{result.time:.2f}s.")


def solve_shown(name: str, verbose, objective, solver, start, options: dict):
    """:func:`ldr.solve` of ``objective`` by ``solver`` from ``start`` with ``options`` (an
    estimator's), showing a :class:`Progress` table when ``verbose`` ≥ 1 (``name``: the
    estimator's class name); the Result."""
    options = dict(options)
    progress = None
    if check_verbose(verbose):
        progress = Progress(name, options.get("callback"))
        options["callback"] = progress
    res = solve(objective, solver, start, **options)
    if progress is not None:
        progress.finish(res)
    return res


def round_lines(name: str, verbose):
    """A report for an alternation's rounds when ``verbose`` ≥ 1 (None at 0): one line per
    round, ``[name] round k: cost c, change s (u or w), t s``, from the round's record of
    ``history_``."""
    if not check_verbose(verbose):
        return None
    started = time.perf_counter()

    def report(record: dict) -> None:
        change = record.get("u_change", record.get("w_change"))
        which = "U" if "u_change" in record else "W"
        cost = record.get("cost")
        cost_text = "—" if cost is None else f"{float(cost):.6e}"
        print(f"[{name}] round {record['outer']}: cost {cost_text}, change of {which} "
              f"{float(change):.3e}, {time.perf_counter() - started:.2f}s", file=sys.stdout)

    return report
