"""The ``ldr`` command line: compare solvers on a method and a dataset.

    ldr demo                                  # orthogonal LDA on wine: every solver, 3 starts
    ldr compare --method lda --data wine --components 2 \\
                --solvers gradient,trust-region,ism --plot out.png
    ldr compare --data iris.csv --label-column species    # a header and string labels
    ldr compare --method pca --data my.csv --components 3 --markdown
    ldr compare --method wda --data wine --components 2 --wide

``--data`` is one of scikit-learn's bundled datasets (wine, breast_cancer, digits, iris;
standardized per feature), a ``.csv`` / ``.npy`` file of rows, or a glob of Parquet or CSV
files (``'logs/*.parquet'``, read with Dask).  For a supervised method the file's label column
(``--label-column``: an index, negative from the end, or a CSV header's column name; default
the last) holds the classes, numbers or strings; for an unsupervised one every column is a
feature unless ``--label-column`` is given.  A CSV's first line is a header when ``--header
yes``, or (``auto``, the default) when some column's first cell is not a number and its other
cells are.  Every feature column must hold numbers (the error names the first that does not);
complex ``.npy`` data are refused, not truncated to their real part.

Data larger than memory: a ``.npy`` file is memory-mapped and a glob is read by Dask, and
the methods whose objective depends on the data only through d×d statistics (lda, pca, maf,
sfa, ppca, fa) read them in one pass over row chunks (:mod:`ldr.data.rows`), with a progress
bar
over the chunks on stderr.  ``--memory-limit`` (e.g. ``256MB``) bounds that pass: chunks are
an eighth of it (a chunk and its few temporaries fit), Dask's CSV blocks the same; Parquet
partitions are the files' row groups.  The other methods need all rows in memory: they
load the data, or, when it would exceed ``--memory-limit``, stop with an error that states
the memory needed.

``--solvers`` is a comma-separated list; ``a+b`` chains two solvers (``ism+trust-region``:
ISM, then the trust region from where it stopped).  Its default, ``auto``, is the solvers
that the method supports (ISM needs a Φ-oracle, SCF a pencil, both a Stiefel or Grassmann
manifold: :func:`supported_solvers`) among gradient, trust-region and ism (``demo``: every
solver), plus the method's default solver (:func:`ldr.driver.default_solver`); a solver the
method does not support is refused with the list of those it does.

Output (:meth:`ldr.compare.Comparison.table`): per run, the cost, the improvement over the
eigenvector heuristic (survey Eq. 28, positive is better), which answer the run reached (A
has the lowest cost), its distance to A and a one-word verdict from the optimality
certificate; then per solver how many runs converged and reached A, with median iterations
and time; then a legend of the columns (``--no-legend`` leaves it out).  The default tables
fit 80 columns; ``--wide`` adds per run the iterations, time, gradient norm, smallest
Hessian eigenvalue, global verdict and stopping reason.  Answers are told apart as fits the
manifold (:func:`ldr.answers.answer_distance`): by the largest principal-angle sine on
Grassmann, the spectral norm of the difference on Stiefel, and the relative cost difference
on Euclidean factors (PPCA, factor analysis), whose matrices are identified only up to
rotations.

Every option value is checked (a bad one is an error, never replaced by a default), and every
error — a bad option, unreadable data, or one raised deep inside a method (an overflow, an
oracle error, a singular matrix, running out of memory) — is one line on stderr with exit
status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import textwrap
import warnings
from collections.abc import Sequence

import numpy as np

from ldr import datasets, registry
from ldr.data.files import load_table
from ldr.data.statistics import Moments
from ldr.errors import ParameterError

#: a parameter of :func:`ldr.data.files.load_table` → the option that sets it
_LOAD_OPTIONS = {"source": "--data", "label_column": "--label-column", "header": "--header",
                 "memory_limit": "--memory-limit"}
#: options that only some methods take (``Method.options``)
_METHOD_OPTIONS = ("reg",)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str):  # noqa: D102
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
def _number(kind, low=None, high=None, low_open=False, what=""):
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


def _memory(text: str) -> int:
    try:
        return parse_bytes(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size such as 256MB or 2GiB, got {text!r}") from None


def _column(text: str) -> int | str:
    """``--label-column``: an index (negative counts from the end) or a header name."""
    try:
        return int(text)
    except ValueError:
        return text


# --- solvers -----------------------------------------------------------------------------
def _solvers(spec: str) -> list:
    out = []
    for item in spec.split(","):
        parts = [p.strip() for p in item.split("+")]
        if not all(parts):
            raise ValueError(f"--solvers: empty solver name in {spec!r}")
        out.append(parts[0] if len(parts) == 1 else parts)
    return out


def _name(solver) -> str:
    return solver if isinstance(solver, str) else "+".join(solver)


def _unsupported(solver, problem) -> str | None:
    """Why ``solver`` (a name or a chain of names) cannot solve ``problem``, or None."""
    from ldr.solvers import get_solver

    for part in [solver] if isinstance(solver, str) else solver:
        try:
            get_solver(part).check_problem(problem)
        except ValueError as exc:
            return str(exc)
    return None


def supported_solvers(objective, candidates: Sequence) -> list:
    """The solvers of ``candidates`` (names or chains of names) that can solve ``objective``,
    then its default (:func:`ldr.driver.default_solver`, a chain as a list) if it is not
    among them yet."""
    from ldr.driver import default_solver
    from ldr.problem import Problem

    problem = Problem(objective)
    chosen = [s for s in candidates if _unsupported(s, problem) is None]
    default = default_solver(objective)
    default = default if isinstance(default, str) else list(default)
    if isinstance(default, str) or all(isinstance(s, str) for s in default):
        if default not in chosen and _unsupported(default, problem) is None:
            chosen.append(default)
    return chosen


#: ``--solvers auto``: the candidates, filtered by what the method supports
#: (:func:`supported_solvers`); None: every registered solver
AUTO = {"compare": ["gradient", "trust-region", "ism"], "demo": None}


def _demo_order() -> list[str]:
    from ldr.solvers import REGISTRY

    first = ["trust-region", "gradient", "conjugate-gradient", "ism", "scf", "pymanopt"]
    return [s for s in first if s in REGISTRY] + [s for s in REGISTRY if s not in first]


def _option_error(exc: ParameterError, method) -> ParameterError:
    """An objective's or the loader's error about one of its parameters, under the name of the
    command-line option that set it (``r`` → ``--components``, RRR's ``alpha`` → ``--reg``)."""
    options = {keyword: f"--{option.replace('_', '-')}" for option, keyword in
               method.options.items()}
    option = {**_LOAD_OPTIONS, **options, "r": "--components"}.get(exc.param)
    return exc if option is None else exc.renamed(option)


def build_objective(args):
    """The objective of ``--method`` on ``--data`` with the options given
    (:func:`ldr.registry.from_table`); ``(objective, n, d, name)``."""
    cls = registry.get(args.method)
    method = cls.method
    given = {o: getattr(args, o) for o in _METHOD_OPTIONS if getattr(args, o) is not None}
    for option in given:
        if option not in method.options:
            raise ParameterError(f"--{option}", f"the {args.method} method does not use it; "
                                                "leave it out")
    chunked = dict(method.chunks) if method.chunked and method.labels is None else None
    try:
        X, y, name = load_table(args.data, method.supervised, args.label_column, chunked,
                                args.memory_limit, args.header)
    except ParameterError as exc:
        raise _option_error(exc, method) from None
    n, d = (X.n, X.d) if isinstance(X, Moments) else X.shape
    if args.components >= d:
        raise ParameterError("--components", f"need 1 <= r < d = {d} (the number of "
                                             f"features of {name}), got {args.components}")
    try:
        obj = registry.from_table(args.method, X, y, args.components, **given)
    except ParameterError as exc:
        raise _option_error(exc, method) from None
    return obj, n, d, name


def run_compare(args) -> tuple:
    """Build the objective from ``args``, run :func:`ldr.compare`; ``(comparison, header)``."""
    from ldr.compare import compare
    from ldr.problem import Problem
    from ldr.solvers import REGISTRY

    if args.solvers != "auto":  # names are checked before the data are read
        for s in _solvers(args.solvers):
            for part in [s] if isinstance(s, str) else s:
                if part not in REGISTRY:
                    raise ParameterError("--solvers", f"unknown solver {part!r}; choose from "
                                         f"{', '.join(sorted(REGISTRY))} (or auto)")
    obj, n, d, name = build_objective(args)
    if args.solvers == "auto":
        candidates = AUTO.get(args.command, AUTO["compare"])
        solvers = supported_solvers(obj, _demo_order() if candidates is None else candidates)
    else:
        solvers = _solvers(args.solvers)
        problem = Problem(obj)
        for s in solvers:
            why = _unsupported(s, problem)
            if why is not None:
                ok = ", ".join(_name(t) for t in supported_solvers(obj, _demo_order()))
                raise ParameterError("--solvers", f"{_name(s)} cannot solve {args.method}: "
                                     f"{why}; the solvers that can: {ok} (--solvers auto picks "
                                     "them)")
    starts = ["heuristic"] if args.starts == 0 else args.starts
    cmp = compare(obj, solvers, starts, seed=args.seed, gtol=args.gtol,
                  max_iter=args.max_iter, progress=None)
    header = (f"{args.method.upper()} on {name} (n={n}, d={d}, "
              f"r={args.components}): {obj.method.summary}; "
              f"{len(cmp.meta['starts'])} start(s), seed {args.seed}")
    return cmp, header


# --- output ------------------------------------------------------------------------------
def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def _width() -> int:
    """Text wraps to the terminal's width, kept between 80 and 100 columns (80 when the
    output is not a terminal)."""
    return min(100, max(80, shutil.get_terminal_size((80, 24)).columns))


def _report(cmp, header: str, args) -> None:
    md, width = args.markdown, _width()
    print(("## " + header if md else textwrap.fill(header, width)) + "\n")
    print(cmp.table("run", markdown=md, wide=args.wide, width=width) + "\n")
    print(cmp.table("solver", markdown=md, notes=False, width=width))
    if args.legend:
        legend = cmp.legend(wide=args.wide, width=width)
        print("\n" + (legend if not md else "```\n" + legend + "\n```"))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        axes = cmp.plot()
        axes[0].figure.suptitle(header, fontsize="medium")
        axes[0].figure.savefig(args.plot, dpi=120)
        plt.close(axes[0].figure)
        print(f"\nplot written to {args.plot}")
    if args.json:
        rows = [{k: v for k, v in row.items() if k != "counts"} for row in cmp.rows]
        pathlib.Path(args.json).write_text(json.dumps(
            {"header": header, "heuristic_cost": cmp.heuristic_cost, "runs": rows,
             "summary": cmp.summary()}, indent=2, default=_json_default), encoding="utf-8")
        print(f"table written to {args.json}")


def _add_compare_options(p: argparse.ArgumentParser, method: str, data: str,
                         starts: int) -> None:
    p.add_argument("--method", default=method, choices=registry.names(),
                   help=f"objective (default {method})")
    p.add_argument("--data", default=data,
                   help=f"bundled dataset ({', '.join(datasets.BUNDLED)}), a .csv/.npy "
                        f"file (.npy is memory-mapped) or a quoted glob of .parquet/.csv files "
                        f"read with Dask (default {data})")
    p.add_argument("--components", "-r", type=_number(int, 1), default=2,
                   help="subspace dimension r, 1 <= r < d (default 2)")
    p.add_argument("--solvers", default="auto",
                   help="comma-separated solver names; a+b chains (b starts where a stopped); "
                        "auto (default): " + (
                            "every solver" if AUTO.get(p.prog.split()[-1], 0) is None
                            else ", ".join(AUTO["compare"]))
                        + " — those the method supports — and the method's default solver")
    p.add_argument("--starts", type=_number(int, 0), default=starts,
                   help=f"random starts per solver; 0 = the heuristic (default {starts})")
    p.add_argument("--seed", type=_number(int, 0), default=0,
                   help="seed of the starts, >= 0 (default 0)")
    p.add_argument("--reg", type=_number(float, 0), default=None,
                   help="WDA: Sinkhorn regularization > 0 (default 1.0); LDA, MAF, SFA, LPP, "
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
    p.add_argument("--memory-limit", metavar="SIZE", type=_memory, default=None,
                   help="memory for the data, e.g. 256MB: chunked methods read .npy files and "
                        "globs in chunks of an eighth of it; other methods refuse data larger "
                        "than it (default: chunks of 64 MiB, no limit)")
    p.add_argument("--gtol", type=_number(float, 0), default=1e-8,
                   help="gradient-norm tolerance >= 0, relative to the problem's gradient "
                        "scale (ldr.solve; default 1e-8)")
    p.add_argument("--max-iter", type=_number(int, 1), default=1000,
                   help="iterations per run, >= 1 (default 1000)")
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


def _one_line(exc: BaseException) -> str:
    """An exception as one line: the message, with the type for what is not a ValueError /
    OSError (those name their cause), and a remedy for running out of memory."""
    msg = " ".join(str(exc).split())
    if isinstance(exc, MemoryError):
        return (f"out of memory ({msg or 'MemoryError'}): the request is too large for this "
                "machine; use fewer rows or features, a smaller --components, or a method that "
                f"reads the data in chunks ({', '.join(registry.names(chunked=True))}) with "
                "--memory-limit")
    if isinstance(exc, (OverflowError, FloatingPointError)):
        return (f"{type(exc).__name__}: {msg}: a floating-point overflow in the method's "
                "computation; rescale the data (e.g. standardize each feature) and retry "
                "(--debug shows the traceback)")
    if isinstance(exc, (ParameterError, OSError)) or (isinstance(exc, ValueError) and type(
            exc).__module__ in ("builtins", "ldr.problem")):
        return msg
    return f"{type(exc).__name__}: {msg} (--debug shows the traceback)"


def _show_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    print(f"ldr: warning: {category.__name__}: {text}", file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises no second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (captured output)
        pass


def _parser() -> _Parser:
    """The argument parser; its methods and their summaries come from :mod:`ldr.registry`."""
    parser = _Parser(prog="ldr", description=__doc__.split("\n")[0],
                     epilog="methods: " + "; ".join(f"{k}: {c.method.summary}"
                                                    for k, c in registry.METHODS.items()))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("compare", help="run several solvers from the same starts and compare")
    _add_compare_options(p, "lda", "wine", 3)
    p = sub.add_parser("demo", help="orthogonal LDA on wine with every solver (the README's "
                                    "first command)")
    _add_compare_options(p, "lda", "wine", 3)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``argv``: the arguments, default ``sys.argv[1:]``); returns the
    exit status: 0, or 2 after an error printed as one line on stderr (argparse's own errors
    exit with status 2 through ``SystemExit``)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            if not args.debug:  # one line per warning, each shown once
                warnings.simplefilter("once")
                warnings.showwarning = _show_warning
            cmp, header = run_compare(args)
            _report(cmp, header, args)
    except KeyboardInterrupt:
        print("ldr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) closed the pipe: not an error
        _silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - every error is one line unless --debug
        if args.debug:
            raise
        print(f"ldr: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    if args.command == "demo" and cmp.heuristic_cost is not None:
        best = min(cmp.rows, key=lambda row: row["cost"])
        print("\n" + textwrap.fill(
            f"The best answer ({best['solver']}) improves on the eigenvector heuristic by "
            f"{best['improvement']:.2%} of its cost (survey Eq. 28).", _width()))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
