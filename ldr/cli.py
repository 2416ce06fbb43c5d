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
sfa, ppca, fa) read them in one pass over row chunks (:mod:`ldr.rows`), with a progress bar
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
manifold (:func:`ldr.compare.answer_distance`): by the largest principal-angle sine on
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
import collections
import csv
import json
import os
import pathlib
import shutil
import sys
import textwrap
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from ldr import datasets
from ldr.rows import Moments

#: method name → (builder(X, y, r, args) -> objective, needs labels, description); ``args``
#: is a :class:`_BuilderArgs`: pass ``**args.given("reg")`` so that a left-out option keeps
#: the objective's default
METHODS: dict[str, tuple[Callable, bool, str]] = {}


def _method(name: str, supervised: bool, description: str):
    def register(builder):
        METHODS[name] = (builder, supervised, description)
        return builder
    return register


@_method("lda", True, "orthogonal LDA, −tr(MᵀS_bM)/tr(MᵀS_wM)")
def _lda(X, y, r, args):
    from ldr.objectives import LDA

    return LDA(X, y, r, **args.given("reg"))


@_method("pca", False, "PCA, −tr(MᵀCM)")
def _pca(X, y, r, args):
    from ldr.objectives import PCA

    return PCA(X, r)


@_method("hsic", True, "supervised HSIC with a Gaussian kernel, −tr(Γ K_XM)")
def _hsic(X, y, r, args):
    from ldr.objectives import HSIC

    return HSIC.supervised(X, y, r)


@_method("wda", True, "Wasserstein discriminant analysis (trace ratio; pencil for SCF)")
def _wda(X, y, r, args):
    from ldr.objectives import WDA

    return WDA(X, y, r, **args.given("reg"))  # WDA's own default reg (1.0)


@_method("maf", False, "maximum autocorrelation factors (rows in time order), lag 1")
def _maf(X, y, r, args):
    from ldr.objectives import MAF

    return MAF(X, r, **args.given("reg"))


@_method("sfa", False, "slow feature analysis (rows in time order)")
def _sfa(X, y, r, args):
    from ldr.objectives import SFA

    return SFA(X, r, **args.given("reg"))


@_method("lpp", False, "locality preserving projections, 10-NN heat-kernel graph")
def _lpp(X, y, r, args):
    from ldr.objectives import LPP

    return LPP(X, r, n_neighbors=10, **args.given("reg"))


@_method("npe", False, "neighbourhood preserving embedding, 10-NN graph")
def _npe(X, y, r, args):
    from ldr.objectives import NPE

    return NPE(X, r, n_neighbors=10, **args.given("reg"))


@_method("mds", False, "metric MDS: Kruskal-Shepard stress of the projection")
def _mds(X, y, r, args):
    from ldr.objectives import MDS

    return MDS(X, r)


@_method("ppca", False, "probabilistic PCA, negative log-likelihood on R^{d×r}")
def _ppca(X, y, r, args):
    from ldr.objectives import PPCA

    return PPCA(X, r)


@_method("fa", False, "factor analysis, negative log-likelihood on R^{d×r} × R^d")
def _fa(X, y, r, args):
    from ldr.objectives import FactorAnalysis

    return FactorAnalysis(X, r)


@_method("uica", False, "undercomplete ICA, whitened likelihood with log-cosh priors on R^{d×r}")
def _uica(X, y, r, args):
    from ldr.objectives import UndercompleteICA

    return UndercompleteICA(X, r)


@_method("rrr", True, "reduced-rank regression onto the one-hot class indicators (optimal "
                      "scoring), ridge α = --reg, on the Grassmannian of the outputs")
def _rrr(X, y, r, args):
    from ldr.objectives import ReducedRankRegression

    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    alpha = args.given("reg")  # --reg is α here; left out, the objective's default (0)
    return ReducedRankRegression(X, np.eye(classes.size)[codes.reshape(-1)], r,
                                 **({"alpha": alpha["reg"]} if alpha else {}))
@_method("nca", True, "neighbourhood components analysis, −Σ_i p_i on R^{d×r}")
def _nca(X, y, r, args):
    from ldr.objectives import NCA

    return NCA(X, y, r)


@_method("lmnn", True, "large-margin DML (LMNN, smoothed hinge, 3 target neighbours) on R^{d×r}")
def _lmnn(X, y, r, args):
    from ldr.objectives import LargeMarginDML

    return LargeMarginDML(X, y, r)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"ldr: error: {message} (see `{self.prog} --help`)\n")


class _BuilderArgs:
    """The options as a method's builder sees them.

    ``args.given("reg", ...)`` is the dict of those options the user gave (pass it as keyword
    arguments, so that an option left out keeps the objective's own default); any other
    option reads as an attribute.  :func:`run_compare` records which options a builder read,
    so that an option the chosen method does not use is rejected instead of ignored.  A
    builder that reads ``args.reg`` directly gets 0.0 when ``--reg`` was not given.
    """

    #: options that only some methods use: what they read as when not given
    OPTIONAL = {"reg": 0.0}

    def __init__(self, namespace: argparse.Namespace):
        self._ns, self._read = namespace, set()

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        self._read.add(name)
        value = getattr(self._ns, name)
        return self.OPTIONAL[name] if value is None and name in self.OPTIONAL else value

    def given(self, *names: str) -> dict:
        self._read.update(names)
        return {n: getattr(self._ns, n) for n in names if getattr(self._ns, n) is not None}

    def unused(self) -> list[str]:
        """The options the user gave that the builder never read."""
        return [n for n in self.OPTIONAL
                if getattr(self._ns, n) is not None and n not in self._read]


#: methods whose objective reads rows in chunks (ldr.rows): what their statistics need
CHUNKED = {"lda": {}, "pca": {}, "ppca": {}, "fa": {}, "maf": {"lag": 1},
           "sfa": {"lag": 1, "diff": True}}
_GLOB = set("*?[")


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
        raise ValueError(f"--memory-limit: expected a size such as 256MB or 2GiB, got {text!r}")
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


# --- reading the data --------------------------------------------------------------------
def _is_glob(spec: str) -> bool:
    return bool(_GLOB & set(spec)) or spec.lower().endswith((".parquet", ".pq"))


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


#: cells that mark a missing value, not a column name, when a header is looked for
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "?", "-"})


def _detect_header(rows: list[list[str]], header: str) -> bool:
    """Whether the first row is a header: ``header`` "yes"/"no", or "auto": some column's
    first cell is a name (not a number, not a missing-value mark such as NA) while all its
    other cells are numbers (with only one row: every cell of it is a name)."""
    if header != "auto":
        return header == "yes"
    first = rows[0]
    rest = [r for r in rows[1:] if len(r) == len(first)]  # a ragged row is reported later
    if not rest:
        return not any(_is_number(c) or c.lower() in _MISSING for c in first)
    return any(not _is_number(first[j]) and first[j].lower() not in _MISSING
               and all(_is_number(r[j]) for r in rest) for j in range(len(first)))


def _resolve_column(label_column, supervised: bool, names: list[str]) -> int | None:
    """The index of the label column: ``label_column`` an index or a header name (None: the
    last for a supervised method, none otherwise)."""
    n_columns = len(names)
    if label_column is None:
        return n_columns - 1 if supervised else None
    if isinstance(label_column, int) and str(label_column) in names \
            and names != [str(j) for j in range(n_columns)]:
        label_column = str(label_column)  # a header's numeric name, e.g. "700"
    if isinstance(label_column, str):
        if label_column not in names:
            raise ValueError(f"--label-column: no column named {label_column!r}; the columns "
                             f"are {', '.join(map(repr, names))}")
        return names.index(label_column)
    if not -n_columns <= label_column < n_columns:
        raise ValueError(f"--label-column: {label_column} is out of range for "
                         f"{n_columns} columns")
    return label_column % n_columns


def _column_name(names: list[str], j: int) -> str:
    return f"column {names[j]!r} (index {j})" if names[j] != str(j) else f"column {j}"


def _read_csv(path: pathlib.Path, supervised: bool, label_column, header: str):
    """``(X, y, names)`` from a CSV file: an optional header line (``header``), numeric
    feature columns, a label column of numbers or strings."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = [[c.strip() for c in row] for row in csv.reader(fh)
                if any(c.strip() for c in row)]
    if not rows:
        raise ValueError(f"--data: {path.name} is empty")
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"--data: {path.name}: row {i + 1} has {len(row)} fields, the "
                             f"first has {width}")
    names = [str(j) for j in range(width)]
    if _detect_header(rows, header):
        names, rows = [c or str(j) for j, c in enumerate(rows[0])], rows[1:]
        if not rows:
            raise ValueError(f"--data: {path.name} has a header line and no data")
    if width < 2:
        raise ValueError(f"--data: expected a table with at least two columns, {path.name} "
                         f"has {width}")
    label = _resolve_column(label_column, supervised, names)
    columns = []
    for j in range(width):
        if j == label:
            continue
        bad = next(((i, r[j]) for i, r in enumerate(rows) if not _is_number(r[j])), None)
        if bad is not None:
            i, cell = bad
            hint = (" (pass --label-column with its name or index if it holds the labels)"
                    if not any(_is_number(r[j]) for r in rows) else "")
            raise ValueError(f"--data: {path.name}: {_column_name(names, j)} is not numeric: "
                             f"data row {i + 1} holds {cell!r}; every feature column must "
                             f"hold numbers{hint}")
        columns.append([float(r[j]) for r in rows])
    X = np.array(columns, dtype=float).T
    if label is None:
        return X, None, names
    y = [r[label] for r in rows]
    counts = collections.Counter(y)
    if (header == "auto" and names == [str(j) for j in range(width)] and len(counts) > 1
            and counts[y[0]] == 1 and min(counts[v] for v in counts if v != y[0]) > 1):
        # a header whose feature names are numbers is indistinguishable from data, except
        # that its "label" would be a class of one sample: ask instead of guessing
        raise ValueError(f"--data: {path.name}: the first row's label {y[0]!r} occurs in no "
                         f"other row; if the first line names the columns pass --header yes, "
                         f"else --header no")
    y = np.array([float(v) for v in y]) if all(_is_number(v) for v in y) else np.array(y)
    return X, y, names


def load_data(spec: str, supervised: bool, label_column: int | str | None,
              chunked: dict | None = None, memory_limit: int | None = None,
              header: str = "auto"):
    """``(X, y, name)`` from a bundled dataset's name, a .csv / .npy file or a glob.

    ``label_column`` is an index or (CSV, glob) a column name; a CSV's first line is a header
    when ``header`` is "yes", or "auto" and it looks like one (:func:`_detect_header`); the
    label column may hold numbers or strings.  With ``chunked`` (the statistics a
    chunk-reading method needs: ``lag``, ``diff``), a .npy file or a glob is read in one pass
    over row chunks and X is the :class:`~ldr.rows.Moments` (y None: the labels are inside);
    otherwise X is an ndarray.
    """
    csv_data = spec.lower().endswith(".csv") or (_is_glob(spec) and not spec.lower().endswith(
        (".parquet", ".pq")))
    if header != "auto" and not csv_data:
        raise ValueError(f"--header: applies to CSV files; {spec} is not one")
    if spec in datasets.BUNDLED:
        if label_column is not None:
            raise ValueError(f"--label-column: the bundled dataset {spec} comes with its "
                             "labels; --label-column applies to files")
        X, y = datasets.load(spec)
        return X, y, spec
    if _is_glob(spec):
        return _load_dask(spec, supervised, label_column, chunked, memory_limit, header)
    path = pathlib.Path(spec)
    if path.suffix.lower() not in (".csv", ".npy"):
        raise ValueError(f"--data: {spec!r} is neither a bundled dataset "
                         f"({', '.join(datasets.BUNDLED)}) nor a .csv/.npy file or a glob of "
                         f".parquet/.csv files")
    if not path.is_file():
        raise ValueError(f"--data: no such file: {spec}")
    if path.suffix.lower() == ".csv":
        X, y, _ = _read_csv(path, supervised, label_column, header)
        _check_fits(X.nbytes, memory_limit, f"{X.shape[0]} rows × {X.shape[1]} columns")
        return X, y, path.name
    try:
        data = np.load(path, mmap_mode="r", allow_pickle=False)  # memory-mapped
    except ValueError as exc:
        raise ValueError(f"--data: {spec} is not a plain numeric .npy array ({exc})") from None
    if data.dtype.kind == "c":
        raise ValueError(f"--data: {spec} holds complex values ({data.dtype}); ldr works on "
                         "real data: save the real part, or the real and imaginary parts as "
                         "separate columns, explicitly")
    if data.dtype.kind not in "biuf":
        raise ValueError(f"--data: {spec} holds {data.dtype} values, not numbers")
    if data.ndim != 2 or data.shape[1] < 2:
        raise ValueError(f"--data: expected a 2-d table with at least two columns, "
                         f"got shape {data.shape}")
    if isinstance(label_column, str):
        raise ValueError(f"--label-column: a .npy file has no column names; give the index "
                         f"of the label column, not {label_column!r}")
    label_column = _resolve_column(label_column, supervised,
                                   [str(j) for j in range(data.shape[1])])
    if chunked is not None and isinstance(data, np.memmap):
        from ldr.rows import moments

        step = _chunk_bytes(memory_limit)
        stats = moments(_npy_chunks(data, label_column, step), progress=True,
                        chunk_bytes=step, **chunked)
        return stats, None, path.name
    _check_fits(data.shape[0] * (data.shape[1] - (label_column is not None)) * 8,
                memory_limit, f"{data.shape[0]} rows × {data.shape[1]} columns")
    data = np.asarray(data, dtype=float)
    if label_column is None:
        return data, None, path.name
    y = data[:, label_column]
    X = np.delete(data, label_column, axis=1)
    return X, y, path.name


def _chunk_bytes(memory_limit):
    from ldr.rows import MEMMAP_CHUNK_BYTES

    return MEMMAP_CHUNK_BYTES if memory_limit is None else max(1, memory_limit // 8)


def _check_fits(nbytes, memory_limit, what):
    if memory_limit is not None and nbytes > memory_limit:
        raise ValueError(
            f"--data: this method needs all rows in memory: {what} of float64 is "
            f"{nbytes / 2**20:.1f} MiB > --memory-limit {memory_limit / 2**20:.1f} MiB; the "
            f"methods that read the data in chunks are {', '.join(sorted(CHUNKED))}")


def _npy_chunks(data, label_column, chunk_bytes):
    """Row chunks of a memory-mapped table, split into (X, y) when it has a label column."""
    step = max(1, int(chunk_bytes // (8 * data.shape[1])))
    keep = np.arange(data.shape[1]) if label_column is None else \
        np.delete(np.arange(data.shape[1]), label_column)
    for start in range(0, data.shape[0], step):
        block = np.asarray(data[start:start + step], dtype=float)  # one chunk read
        yield block[:, keep] if label_column is None else (block[:, keep],
                                                           block[:, label_column])


def _load_dask(spec, supervised, label_column, chunked, memory_limit, header="auto"):
    import glob

    files = sorted(glob.glob(spec))
    if not files:
        raise ValueError(f"--data: no file matches {spec}")
    try:
        import dask.dataframe as dd
    except ImportError:
        raise ValueError("--data: reading a glob needs Dask: pip install "
                         "'ldr-manifold[dask]'") from None
    if all(f.lower().endswith((".parquet", ".pq")) for f in files):
        ddf = dd.read_parquet(files)
    elif all(f.lower().endswith(".csv") for f in files):
        with open(files[0], newline="", encoding="utf-8-sig") as fh:
            head = [[c.strip() for c in row] for _, row in zip(range(100), csv.reader(fh))
                    if any(c.strip() for c in row)]  # blank lines skipped, as pandas does
        has_header = _detect_header(head, header) if head else False
        ddf = dd.read_csv(files, header=0 if has_header else None, skipinitialspace=True,
                          blocksize=_chunk_bytes(memory_limit))
        # string column names (a headerless file's are integers), stripped as in one file
        ddf = ddf.rename(columns={c: str(c).strip() for c in ddf.columns})
    else:
        raise ValueError(f"--data: {spec} must match only .parquet or only .csv files")
    columns = [str(c) for c in ddf.columns]
    if len(columns) < 2:
        raise ValueError(f"--data: expected at least two columns, got {len(columns)}")
    label_column = _resolve_column(label_column, supervised, columns)
    features = [i for i in range(len(columns)) if i != label_column]
    for i in features:
        if ddf.dtypes.iloc[i].kind not in "biuf":
            raise ValueError(f"--data: {_column_name(columns, i)} of {spec} holds "
                             f"{ddf.dtypes.iloc[i]} values, not numbers; every feature column "
                             "must hold numbers (pass --label-column with its name or index "
                             "if it holds the labels)")
    if label_column is not None and ddf.dtypes.iloc[label_column].kind not in "biuf":
        key = ddf.columns[label_column]  # string labels → their category codes
        ddf = ddf.assign(**{key: ddf[key].astype("category").cat.as_known().cat.codes})
    table = ddf.to_dask_array()  # one array, so that X and y share its row blocks
    X = table[:, features]
    y = None if label_column is None else table[:, label_column]
    name = pathlib.Path(spec).name
    if chunked is not None:
        from ldr.rows import moments

        return moments(X, y, progress=True, **chunked), None, name
    _check_fits(sum(pathlib.Path(f).stat().st_size for f in files), memory_limit,
                f"the files ({len(files)}) on disk")
    return np.asarray(X.compute(), dtype=float), None if y is None else y.compute(), name


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


def run_compare(args) -> tuple:
    """Build the objective from ``args``, run :func:`ldr.compare`; ``(comparison, header)``."""
    from ldr.compare import compare
    from ldr.problem import Problem
    from ldr.solvers import REGISTRY

    builder, supervised, description = METHODS[args.method]
    if args.solvers != "auto":  # names are checked before the data are read
        for s in _solvers(args.solvers):
            for part in [s] if isinstance(s, str) else s:
                if part not in REGISTRY:
                    raise ValueError(f"--solvers: unknown solver {part!r}; choose from "
                                     f"{', '.join(sorted(REGISTRY))} (or auto)")
    X, y, name = load_data(args.data, supervised, args.label_column,
                           CHUNKED.get(args.method), args.memory_limit, args.header)
    n, d = (X.n, X.d) if isinstance(X, Moments) else X.shape
    if args.components >= d:
        raise ValueError(f"--components: need 1 <= r < d = {d} (the number of "
                         f"features of {name}), got {args.components}")
    view = _BuilderArgs(args)
    try:
        obj = builder(X, y, args.components, view)
    except ValueError as exc:  # "reg: must be ..." from the objective → "--reg: ..."
        for option in view.given(*view.OPTIONAL):
            if str(exc).startswith(f"{option}:"):
                raise ValueError(f"--{option.replace('_', '-')}{str(exc)[len(option):]}") \
                    from None
        if str(exc).startswith("r:"):  # the objective's subspace dimension is --components
            raise ValueError(f"--components:{str(exc)[2:]}") from None
        raise
    unused = view.unused()
    if unused:
        raise ValueError(f"--{unused[0].replace('_', '-')}: the {args.method} method does not "
                         f"use it; leave it out")
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
                raise ValueError(f"--solvers: {_name(s)} cannot solve {args.method}: {why}; "
                                 f"the solvers that can: {ok} (--solvers auto picks them)")
    starts = ["heuristic"] if args.starts == 0 else args.starts
    cmp = compare(obj, solvers, starts, seed=args.seed, gtol=args.gtol,
                  max_iter=args.max_iter, progress=None)
    header = (f"{args.method.upper()} on {name} (n={n}, d={d}, "
              f"r={args.components}): {description}; "
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
    p.add_argument("--method", default=method, choices=sorted(METHODS),
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
                        "NPE: shrinkage of the denominator's scatter, in [0, 1] (default 0); "
                        "RRR: the ridge penalty α >= 0 (default 0); an error for a method "
                        "without one")
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
                f"reads the data in chunks ({', '.join(sorted(CHUNKED))}) with --memory-limit")
    if isinstance(exc, (OverflowError, FloatingPointError)):
        return (f"{type(exc).__name__}: {msg}: a floating-point overflow in the method's "
                "computation; rescale the data (e.g. standardize each feature) and retry "
                "(--debug shows the traceback)")
    if isinstance(exc, (ValueError, OSError)) and type(exc).__module__ in (
            "builtins", "ldr.problem"):
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``argv``: the arguments, default ``sys.argv[1:]``); returns the
    exit status: 0, or 2 after an error printed as one line on stderr (argparse's own errors
    exit with status 2 through ``SystemExit``)."""
    parser = _Parser(prog="ldr", description=__doc__.split("\n")[0],
                     epilog="methods: " + "; ".join(f"{k}: {v[2]}" for k, v in METHODS.items()))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("compare", help="run several solvers from the same starts and compare")
    _add_compare_options(p, "lda", "wine", 3)
    p = sub.add_parser("demo", help="orthogonal LDA on wine with every solver (the README's "
                                    "first command)")
    _add_compare_options(p, "lda", "wine", 3)
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
