"""Tables from files: a CSV, a NumPy ``.npy`` file or a glob of Parquet/CSV files, as rows.

:func:`load_table` is what ``ldr compare --data`` reads, usable from Python::

    X, y, name = ldr.data.load_table("iris.csv", supervised=True)     # header, string labels

* **CSV** (:mod:`ldr.data.text`): the delimiter ``,`` ``;`` tab or ``|`` (``delimiter``, or
  detected), an optional header line (``header="auto"`` detects it: some column's first cell
  is a name while its other cells are numbers), numeric feature columns and a label column of
  numbers or strings (``label_column``: an index, negative from the end, or a header name;
  default the last for a supervised method; for an unsupervised one, a last column of class
  names is set aside with a :class:`~ldr.data.text.DataNote`).  A missing value is an error
  naming its row and column.
* **.npy**: memory-mapped; with ``chunked`` (the statistics a chunk-reading method needs:
  ``lag``, ``diff``) it is read in one pass over row chunks and X is the
  :class:`~ldr.data.statistics.Moments` of the rows.
* **a glob** (``'logs/*.parquet'``, ``'parts/*.csv'``): read with Dask, the same way.
* one of scikit-learn's bundled datasets by name (:func:`ldr.data.datasets.load`).

``memory_limit`` (bytes) bounds the pass: chunks are an eighth of it (at most 64 MiB), and a
table that must be loaded whole and is larger is refused.  Every problem is a
:class:`~ldr.core.errors.ParameterError` naming the parameter (``source``, ``label_column``,
``header``, ``memory_limit``) and the row or column at fault.
"""

from __future__ import annotations

import pathlib
import warnings

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import datasets, text
from ldr.data.rows import MEMMAP_CHUNK_BYTES, moments

_GLOB = set("*?[")


def _is_glob(source: str) -> bool:
    return bool(_GLOB & set(source)) or source.lower().endswith((".parquet", ".pq"))


#: the reader's helpers, under their former names
_is_number = text.is_number
_detect_header = text.detect_header
_resolve_column = text.resolve_column
_column_name = text.column_name


def load_table(source: str, supervised: bool = False, label_column: int | str | None = None,
               chunked: dict | None = None, memory_limit: int | None = None,
               header: str = "auto", delimiter: str | None = None) -> tuple:
    """``(X, y, name)`` from a bundled dataset's name, a .csv / .npy file or a glob.

    Parameters
    ----------
    source : str
        A bundled dataset (``ldr.datasets.BUNDLED``), a ``.csv`` or ``.npy`` path, or a
        glob of ``.parquet`` / ``.csv`` files.
    supervised : bool
        Whether the method needs labels: then ``label_column`` defaults to the last column.
    label_column : int, str or None
        The labels' column: an index (negative from the end) or, for a CSV with a header, its
        name; None: the last for a supervised method, none otherwise.
    chunked : dict, optional
        For a method that reads its rows in chunks, the statistics it needs (the keywords
        ``lag``, ``diff`` of :func:`ldr.data.rows.moments`): a .npy file or a glob is then
        read in one pass and X is their :class:`~ldr.data.statistics.Moments` (y None: the
        labels are inside).
    memory_limit : int, optional
        Bytes for the data: chunks of an eighth of it; a table loaded whole must fit.
    header : {"auto", "yes", "no"}
        Whether a CSV's first line names the columns (auto: detected).
    delimiter : str, optional
        A CSV's delimiter, one character; None (default): detected among ``,`` ``;`` tab
        and ``|`` (:func:`ldr.data.text.sniff_delimiter`).

    Returns
    -------
    X : ndarray (n, d) or Moments
    y : ndarray (n,) of numbers or strings, or None
    name : str
        The dataset's or file's name, for a report.
    """
    csv_data = source.lower().endswith(".csv") or (_is_glob(source) and not source.lower().endswith(
        (".parquet", ".pq")))
    if header != "auto" and not csv_data:
        raise ParameterError("header", f"applies to CSV files; {source} is not one")
    if text.check_delimiter(delimiter) is not None and not csv_data:
        raise ParameterError("delimiter", f"applies to CSV files; {source} is not one")
    if source in datasets.BUNDLED:
        if label_column is not None:
            raise ParameterError("label_column", f"the bundled dataset {source} comes with its "
                             "labels; label_column applies to files")
        X, y = datasets.load(source)
        return X, y, source
    if _is_glob(source):
        return _load_dask(source, supervised, label_column, chunked, memory_limit, header,
                          delimiter)
    path = pathlib.Path(source)
    if path.suffix.lower() not in (".csv", ".npy"):
        raise ParameterError("source", f"{source!r} is neither a bundled dataset "
                         f"({', '.join(datasets.BUNDLED)}) nor a .csv/.npy file or a glob of "
                         f".parquet/.csv files")
    if not path.is_file():
        raise ParameterError("source", f"no such file: {source}")
    if path.suffix.lower() == ".csv":
        X, y, _ = text.read_csv(path, supervised, label_column, header, delimiter,
                                lambda nbytes, what: _check_fits(nbytes, memory_limit, what))
        _check_fits(X.nbytes, memory_limit, f"{X.shape[0]} rows × {X.shape[1]} columns")
        return X, y, path.name
    try:
        data = np.load(path, mmap_mode="r", allow_pickle=False)  # memory-mapped
    except ValueError as exc:
        raise ParameterError(
            "source", f"{source} is not a plain numeric .npy array ({exc})") from None
    if data.dtype.kind == "c":
        raise ParameterError("source", f"{source} holds complex values ({data.dtype}); ldr "
                             "works on real data: save the real part, or the real and imaginary "
                             "parts as separate columns, explicitly")
    if data.dtype.kind not in "biuf":
        raise ParameterError("source", f"{source} holds {data.dtype} values, not numbers")
    if data.ndim != 2 or data.shape[1] < 2:
        raise ParameterError("source", f"expected a 2-d table with at least two columns, "
                         f"got shape {data.shape}")
    if isinstance(label_column, str):
        raise ParameterError("label_column", f"a .npy file has no column names; give the index "
                         f"of the label column, not {label_column!r}")
    label_column = _resolve_column(label_column, supervised,
                                   [str(j) for j in range(data.shape[1])])
    if chunked is not None and isinstance(data, np.memmap):
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
    """Chunks of an eighth of ``memory_limit`` (a chunk and its few temporaries fit), at
    most ``MEMMAP_CHUNK_BYTES``: larger ones are no faster."""
    return MEMMAP_CHUNK_BYTES if memory_limit is None else \
        max(1, min(MEMMAP_CHUNK_BYTES, memory_limit // 8))


def _check_fits(nbytes, memory_limit, what):
    if memory_limit is not None and nbytes > memory_limit:
        raise ParameterError(
            "memory_limit", f"this method needs all rows in memory: {what} of float64 is "
            f"{nbytes / 2**20:.1f} MiB > the limit {memory_limit / 2**20:.1f} MiB; raise it, "
            "or use a method that reads its data in chunks "
            "(ldr.driver.registry.names(chunked=True))")


def _npy_chunks(data, label_column, chunk_bytes):
    """Row chunks of a memory-mapped table, split into (X, y) when it has a label column."""
    step = max(1, int(chunk_bytes // (8 * data.shape[1])))
    keep = np.arange(data.shape[1]) if label_column is None else \
        np.delete(np.arange(data.shape[1]), label_column)
    for start in range(0, data.shape[0], step):
        block = np.asarray(data[start:start + step], dtype=float)  # one chunk read
        yield block[:, keep] if label_column is None else (block[:, keep],
                                                           block[:, label_column])


def _load_dask(source, supervised, label_column, chunked, memory_limit, header="auto",
               delimiter=None):
    import glob

    files = sorted(glob.glob(source))
    if not files:
        raise ParameterError("source", f"no file matches {source}")
    try:
        import dask.dataframe as dd
    except ImportError:
        raise ParameterError("source", "reading a glob needs Dask: pip install "
                         "'ldr-manifold[dask]'") from None
    if all(f.lower().endswith((".parquet", ".pq")) for f in files):
        ddf = dd.read_parquet(files)
    elif all(f.lower().endswith(".csv") for f in files):
        sep, _, has_header = text.head(pathlib.Path(files[0]), header, delimiter)
        ddf = dd.read_csv(files, header=0 if has_header else None, skipinitialspace=True,
                          sep=sep, blocksize=_chunk_bytes(memory_limit))
        # string column names (a headerless file's are integers), stripped as in one file
        ddf = ddf.rename(columns={c: str(c).strip() for c in ddf.columns})
    else:
        raise ParameterError("source", f"{source} must match only .parquet or only .csv files")
    columns = [str(c) for c in ddf.columns]
    if len(columns) < 2:
        raise ParameterError("source", f"expected at least two columns, got {len(columns)}")
    label_column = _resolve_column(label_column, supervised, columns)
    text_columns = [i for i in range(len(columns)) if ddf.dtypes.iloc[i].kind not in "biuf"]
    if label_column is None and not supervised and text_columns == [len(columns) - 1]:
        label_column = len(columns) - 1  # a last column of class names: the labels
        warnings.warn(text.DataNote(
            f"{_column_name(columns, label_column)} of {source}, the last, holds text: set "
            "aside as the class labels, which an unsupervised method does not use "
            "(label_column / --label-column names the labels' column)"), stacklevel=3)
    features = [i for i in range(len(columns)) if i != label_column]
    for i in features:
        if ddf.dtypes.iloc[i].kind not in "biuf":
            raise ParameterError("source", f"{_column_name(columns, i)} of {source} holds "
                             f"{ddf.dtypes.iloc[i]} values, not numbers; every feature column "
                             "must hold numbers (name the label column with label_column / "
                             "--label-column if it holds the labels)")
    if label_column is not None and ddf.dtypes.iloc[label_column].kind not in "biuf":
        key = ddf.columns[label_column]  # string labels → their category codes
        ddf = ddf.assign(**{key: ddf[key].astype("category").cat.as_known().cat.codes})
    table = ddf.to_dask_array()  # one array, so that X and y share its row blocks
    X = table[:, features]
    y = None if label_column is None else table[:, label_column]
    name = pathlib.Path(source).name
    if chunked is not None:
        return moments(X, y, progress=True, **chunked), None, name
    _check_fits(sum(pathlib.Path(f).stat().st_size for f in files), memory_limit,
                f"the files ({len(files)}) on disk")
    return np.asarray(X.compute(), dtype=float), None if y is None else y.compute(), name


