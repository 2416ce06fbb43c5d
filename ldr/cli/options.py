"""The options of the ``ldr`` command line: their types, checks and help texts.

Every option value is checked by its type (:func:`number`, :func:`parse_bytes`, ...): a bad
one is argparse's one-line error with exit status 2, never replaced by a default.  The help
is plain text: :func:`plain` turns the reStructuredText of a docstring (double backticks,
roles such as ``:func:``) into what a terminal shows.
"""

from __future__ import annotations

import argparse
import re
import textwrap

import numpy as np

from ldr.cli import budget as cli_budget
from ldr.core.errors import ParameterError
from ldr.data import datasets
from ldr.driver import registry


def plain(rst: str, width: int = 80) -> str:
    """reStructuredText → plain text for ``--help``: ``x`` for ````x````, the name for a role
    (``:func:`~a.b``` → ``b``, ``:meth:`a.b``` → ``a.b``, ``:doc:`text <page>``` →
    ``text``), ``:`` for a ``::`` that opens a literal block; paragraphs wrapped to
    ``width``, indented blocks kept as they are."""
    text = re.sub(r":[a-z]+:`([^`<]*?)\s*<[^`>]*>`", r"\1", rst)
    text = re.sub(r":[a-z]+:`~?([^`]*)`", lambda m: m.group(1).split(".")[-1]
                  if m.group(0).split("`")[1].startswith("~") else m.group(1), text)
    text = text.replace("``", "")
    text = re.sub(r"::$", ":", text, flags=re.M)
    out = []
    for block in text.strip("\n").split("\n\n"):
        lines = block.split("\n")
        if block.strip() == ":":
            continue
        if lines[0].startswith(" "):
            out.append(block)
        else:
            out.append(textwrap.fill(" ".join(line.strip() for line in lines), width))
    return "\n\n".join(out)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str):
        """Exit with status 2 after one line, ``ldr: error: message``, that points to
        ``--help``."""
        self.exit(2, f"ldr: error: {message} (see `{self.prog} --help`)\n")


def parse_bytes(text: str) -> int:
    """``"256MB"``, ``"1.5GiB"``, ``"1e9"`` → bytes (K, M, G, T; with or without B/iB)."""
    t = text.strip().upper().replace("IB", "").rstrip("B").strip()
    scale = 1
    if t and t[-1] in "KMGT":
        scale, t = 1024 ** ("KMGT".index(t[-1]) + 1), t[:-1]
    try:
        value = float(t) * scale
    except ValueError:
        value = -1.0
    if not (np.isfinite(value) and value >= 1):
        raise ParameterError("--memory-limit",
                             f"expected a size such as 256MB or 2GiB, got {text!r}")
    return int(value)


# --- option values: argparse types (their errors are argparse's one line, exit status 2) --
def number(kind, low=None, high=None, low_open=False, what=""):
    """An argparse type: the text as ``kind`` (int or float), finite and within ``low``
    (exclusive with ``low_open``) and ``high`` where given, else argparse's error naming the
    range; ``what`` is appended to the message."""
    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}{what}, got {text!r}"
            ) from None
        bad = not np.isfinite(value)
        bad |= low is not None and (value <= low if low_open else value < low)
        bad |= high is not None and value > high
        if bad:
            rng = (f"> {low:g}" if low_open else f">= {low:g}") if low is not None else ""
            rng += (" and " if rng and high is not None else "") + (
                f"<= {high:g}" if high is not None else "")
            kind_name = "an integer" if kind is int else "a finite number"
            raise argparse.ArgumentTypeError(f"must be {kind_name} {rng}{what}, got {text!r}")
        return value
    convert.__name__ = kind.__name__
    return convert


def _memory(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return parse_bytes(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 256MB or 2GiB, got {text!r}") from None


def _seconds(text: str) -> float | str:
    """``--max-time``: seconds > 0, or auto (the comparison's shared budget)."""
    return text if text == "auto" else number(float, 0, low_open=True)(text)


def _delimiter(text: str) -> str:
    """``--delimiter``: one character; ``tab`` or ``\\t`` for a tab."""
    text = {"tab": "\t", "\\t": "\t"}.get(text.lower(), text)
    if len(text) != 1:
        raise argparse.ArgumentTypeError(f"expected one character such as , ; | or tab, got "
                                         f"{text!r}")
    return text


def _column(text: str) -> int | str:
    """``--label-column``: an index (negative counts from the end) or a header name."""
    try:
        return int(text)
    except ValueError:
        return text


def add_compare_options(p: argparse.ArgumentParser, method: str, data: str, starts: int,
                        auto: str) -> None:
    """The options of ``ldr compare`` and ``ldr demo`` (``auto``: what ``--solvers auto``
    runs, for its help)."""
    p.add_argument("--method", default=method, choices=registry.names(),
                   help=f"objective (default {method})")
    p.add_argument("--data", default=data,
                   help=f"bundled dataset ({', '.join(datasets.BUNDLED)}), a .csv/.npy "
                        f"file (.npy is memory-mapped) or a quoted glob of .parquet/.csv files "
                        f"read with Dask (default {data})")
    p.add_argument("--components", "-r", type=number(int, 1), default=2,
                   help="subspace dimension r, 1 <= r < d (default 2)")
    p.add_argument("--solvers", default="auto",
                   help="comma-separated solver names; a+b chains (b starts where a stopped); "
                        f"auto (default): {auto} — those the method supports — and the "
                        "method's default solver")
    p.add_argument("--starts", type=number(int, 0), default=starts,
                   help=f"random starts per solver; 0 = the heuristic (default {starts})")
    p.add_argument("--random-state", "--seed", dest="random_state", type=number(int, 0),
                   default=0, help="seed of the starts, >= 0 (default 0; --seed is the name of "
                                   "an earlier release)")
    p.add_argument("--reg", type=number(float, 0), default=None,
                   help="WDA: Sinkhorn regularization > 0 (default: the within-class spread in an "
                        "r-dimensional projection); LDA, MAF, SFA, LPP, "
                        "NPE, CCA: shrinkage of the denominator's scatter, in [0, 1] (default "
                        "0); RRR: the ridge penalty α >= 0 (default 0); an error for a method "
                        "without one (methods: "
                        + ", ".join(m for m in registry.names()
                                    if "reg" in registry.METHODS[m].method.options) + ")")
    p.add_argument("--label-column", type=_column, default=None, metavar="COLUMN",
                   help="the labels' column in a file: an index (negative from the end) or, "
                        "for a CSV with a header, its name (default: the last, for "
                        "supervised methods; none for unsupervised ones)")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether a CSV's first line names the columns (default auto: it does "
                        "when a column's first cell is not a number and the others are)")
    p.add_argument("--delimiter", type=_delimiter, default=None, metavar="CHAR",
                   help="a CSV's delimiter: , ; | or tab (default: detected on the first "
                        "lines among these four)")
    p.add_argument("--memory-limit", metavar="SIZE", type=_memory, default="auto",
                   help="memory for the data and the method's n×n arrays, e.g. 256MB or 4GB: "
                        "a table whose estimate exceeds it is refused with the memory needed; "
                        "chunked methods read .npy files and globs in chunks of an eighth of "
                        "it, at most 64 MiB (default auto: "
                        f"{cli_budget.MEMORY_FRACTION:g} of the memory the machine has "
                        "available when the command starts, so that a run neither swaps nor "
                        "starves the other programs)")
    p.add_argument("--max-time", metavar="SECONDS", type=_seconds, default="auto",
                   help="time budget of each run in seconds, its certificate included; a run "
                        "that hits it is reported as 'budget' (default auto: "
                        f"{cli_budget.TIME_BUDGET:g} s for the whole comparison, shared "
                        "equally among the runs not yet done, so that a comparison with the "
                        "defaults answers within a minute)")
    p.add_argument("--tol", "--gtol", dest="tol", type=number(float, 0), default=None,
                   help="gradient-norm tolerance >= 0, relative to the problem's gradient "
                        "scale (ldr.solve's tol; default: each solver's own, 1e-8 for the "
                        "trust region and 1e-6 for the line-search solvers; --gtol is the name "
                        "of an earlier release)")
    p.add_argument("--max-iter", type=number(int, 1), default=1000,
                   help="iterations of each run, all its stages counted, >= 1 (default 1000)")
    p.add_argument("--plot", metavar="PNG", help="write the cost-gap plot (survey Fig. 4)")
    p.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.add_argument("--wide", action="store_true",
                   help="add per run the iterations, time, gradient norm, smallest Hessian "
                        "eigenvalue, global verdict and stopping reason (wider than a terminal)")
    p.add_argument("--no-legend", dest="legend", action="store_false",
                   help="leave out the legend explaining the columns")
    p.add_argument("--debug", action="store_true",
                   help="on an error, show the Python traceback and warnings in full")


