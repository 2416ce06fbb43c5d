"""CSV text to numbers: the delimiter, the header line, missing values and label columns.

:func:`read_csv` is the CSV reader of :func:`ldr.data.files.load_table`:

* the **delimiter** is given (``delimiter``) or detected on the first lines
  (:func:`sniff_delimiter`): of ``,`` ``;`` tab and ``|``, the one that splits every line into
  the same number (at least two) of fields, most of them numbers;
* a **header** line is given (``header="yes"``/``"no"``) or detected (:func:`detect_header`);
* a **missing value** (an empty cell, ``NA``, ``NaN``, ``null``, ``?``, … — :data:`MISSING`)
  is an error naming its row and column, not "not numeric": ldr needs complete rows;
* a **label column** holds numbers or strings; for an unsupervised method (no label column
  asked for), a last column of text with repeated values — class names — is set aside as the
  labels with a :class:`DataNote`, while a column of text anywhere else is an error naming it.

The rows are read in blocks and converted to float64 block by block, so the table takes about
8 bytes per number in memory (plus one string per distinct label), not a Python string per
cell.
"""

from __future__ import annotations

import csv
import pathlib
import warnings

import numpy as np

from ldr.core.errors import ParameterError

#: the delimiters :func:`sniff_delimiter` tells apart
DELIMITERS = (",", ";", "\t", "|")
#: cells that mark a missing value (compared in lower case)
MISSING = frozenset({"", "na", "n/a", "#n/a", "nan", "null", "none", "?", "-", ".",
                     "missing"})
_SAMPLE_LINES = 50
_BLOCK_ROWS = 8192


class DataNote(UserWarning):
    """What the reader decided for the user (a label column set aside), said once."""


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def is_missing(cell: str) -> bool:
    return cell.lower() in MISSING


def detect_header(rows: list[list[str]], header: str) -> bool:
    """Whether the first row is a header: ``header`` "yes"/"no", or "auto": some column's
    first cell is a name (not a number, not a missing-value mark such as NA) while all its
    other cells are numbers (with only one row: every cell of it is a name)."""
    if header != "auto":
        return header == "yes"
    first = rows[0]
    rest = [r for r in rows[1:] if len(r) == len(first)]  # a ragged row is reported later
    if not rest:
        return not any(is_number(c) or is_missing(c) for c in first)
    return any(not is_number(first[j]) and not is_missing(first[j])
               and all(is_number(r[j]) for r in rest) for j in range(len(first)))


def check_delimiter(delimiter) -> str | None:
    if delimiter is None:
        return None
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"\r\n":
        raise ParameterError("delimiter", f"expected one character such as ',' ';' '\\t' or "
                                          f"'|' (None: detect it), got {delimiter!r}")
    return delimiter


def sniff_delimiter(lines: list[str]) -> str:
    """Of :data:`DELIMITERS`, the one that splits every (non-blank) line of ``lines`` into
    the same number of fields, at least two, with the most numbers among them (then the most
    fields); ``,`` when none does (a one-column table is then reported as such)."""
    best = ","
    best_key = None
    for candidate in DELIMITERS:
        rows = [[c.strip() for c in row] for row in csv.reader(lines, delimiter=candidate)
                if any(c.strip() for c in row)]
        widths = {len(row) for row in rows}
        if len(widths) != 1 or len(rows[0]) < 2:
            continue
        key = (sum(is_number(c) for row in rows for c in row), len(rows[0]))
        if best_key is None or key > best_key:
            best = candidate
            best_key = key
    return best


def resolve_column(label_column, supervised: bool, names: list[str]) -> int | None:
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
            raise ParameterError("label_column", f"no column named {label_column!r}; the "
                                 f"columns are {', '.join(map(repr, names))}")
        return names.index(label_column)
    if not -n_columns <= label_column < n_columns:
        raise ParameterError("label_column", f"{label_column} is out of range for "
                             f"{n_columns} columns")
    return label_column % n_columns


def column_name(names: list[str], j: int) -> str:
    return f"column {names[j]!r} (index {j})" if names[j] != str(j) else f"column {j}"


def _cell_error(path: pathlib.Path, what: str, i: int, line: int,
                cell: str) -> ParameterError:
    """The error for a missing (or infinite) value at data row ``i`` (1-based), ``line`` of
    the file."""
    where = f"{path.name}: {what}: data row {i}"
    if is_missing(cell):
        held = "is empty" if cell == "" else f"holds {cell!r}"
        return ParameterError("source", f"{where} {held} (a missing value, line {line} of the "
                              "file); ldr needs complete rows: drop or impute them first")
    return ParameterError("source", f"{where} holds {cell!r} (line {line} of the file); ldr "
                          "needs finite values")


def _sample(path: pathlib.Path) -> list[str]:
    lines = []
    with open(path, newline="", encoding="utf-8-sig") as fh:
        for line in fh:
            if line.strip():
                lines.append(line)
                if len(lines) >= _SAMPLE_LINES:
                    break
    return lines


def head(path: pathlib.Path, header: str, delimiter=None) -> tuple[str, list[list[str]], bool]:
    """``(delimiter, first rows, has_header)`` of a CSV file (for a glob: its first file)."""
    lines = _sample(path)
    sep = check_delimiter(delimiter) or sniff_delimiter(lines)
    rows = [[c.strip() for c in row] for row in csv.reader(lines, delimiter=sep)
            if any(c.strip() for c in row)]
    return sep, rows, bool(rows) and detect_header(rows, header)


def _label_like(values, n: int) -> bool:
    """Text with repeated values (class names), not one distinct string per row."""
    return 1 < len(values) <= max(2, n // 2)


def read_csv(path: pathlib.Path, supervised: bool, label_column, header: str,
             delimiter=None, check_fits=None):
    """``(X, y, names)`` from a CSV file (module docstring); ``check_fits(nbytes, what)`` is
    called with the table's estimated size before it is read."""
    sep, sample, has_header = head(path, header, delimiter)
    if not sample:
        raise ParameterError("source", f"{path.name} is empty")
    width = len(sample[0])
    names = [str(j) for j in range(width)]
    if has_header:
        names = [c or str(j) for j, c in enumerate(sample[0])]
        if len(sample) == 1:
            raise ParameterError("source", f"{path.name} has a header line and no data")
    if width < 2:
        found = "" if delimiter else (" (the delimiter was detected as ',' from the first "
                                      "lines; pass delimiter= / --delimiter if it is another)")
        raise ParameterError("source", f"expected a table with at least two columns, "
                             f"{path.name} has {width}{found}")
    label = resolve_column(label_column, supervised, names)
    data_sample = sample[1:] if has_header else sample
    set_aside = None
    if label is None and not supervised:  # a last column of class names: the labels
        text = [j for j in range(width) if any(not is_number(r[j]) and not is_missing(r[j])
                                               for r in data_sample if len(r) == width)]
        if text == [width - 1]:
            label = set_aside = width - 1
    if check_fits is not None:
        per_row = max(1.0, sum(map(len, _sample(path))) / len(sample))
        rows_est = int(path.stat().st_size / per_row)
        check_fits(8 * rows_est * (width - (label is not None)),
                   f"about {rows_est} rows × {width} columns (estimated from the file's size)")
    features = [j for j in range(width) if j != label]
    blocks = []
    codes = []
    classes = {}
    n = 0
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh, delimiter=sep)
        block = []
        lines = []
        seen = 0
        for row in reader:
            if not any(c.strip() for c in row):
                continue
            seen += 1
            if len(row) != width:
                raise ParameterError("source", f"{path.name}: row {seen} has {len(row)} "
                                     f"fields, the first has {width} (line {reader.line_num} "
                                     f"of the file; delimiter {sep!r})")
            if seen == 1 and has_header:
                continue
            block.append([c.strip() for c in row])
            lines.append(reader.line_num)
            if len(block) == _BLOCK_ROWS:
                blocks.append(_convert(path, block, lines, n, features, names))
                if label is not None:
                    _codes(path, block, lines, n, label, names, classes, codes)
                n += len(block)
                block = []
                lines = []
        if block:
            blocks.append(_convert(path, block, lines, n, features, names))
            if label is not None:
                _codes(path, block, lines, n, label, names, classes, codes)
            n += len(block)
    X = np.concatenate(blocks) if len(blocks) > 1 else blocks[0]
    if label is None:
        return X, None, names
    keys = list(classes)
    if set_aside is not None:
        if not _label_like(keys, n):
            raise ParameterError("source", f"{path.name}: {column_name(names, label)} is not "
                                 f"numeric: data row 1 holds {sample[int(has_header)][label]!r}"
                                 " and no value repeats (not class labels); every feature "
                                 "column must hold numbers: leave it out of the file")
        warnings.warn(DataNote(
            f"{path.name}: {column_name(names, label)}, the last, holds text: set aside as "
            f"the class labels ({len(keys)} classes), which an unsupervised method does not "
            f"use; the features are the other {width - 1} columns (label_column / "
            "--label-column names the labels' column)"), stacklevel=3)
    codes = np.concatenate(codes)
    if (header == "auto" and names == [str(j) for j in range(width)] and len(keys) > 1
            and np.sum(codes == codes[0]) == 1 and min(np.bincount(codes)[
                np.arange(len(keys)) != codes[0]]) > 1):
        # a header whose feature names are numbers is indistinguishable from data, except
        # that its "label" would be a class of one sample: ask instead of guessing
        raise ParameterError(
            "source", f"{path.name}: the first row's label {keys[codes[0]]!r} occurs in no "
            "other row; if the first line names the columns pass header=\"yes\" (--header "
            "yes), else header=\"no\"")
    values = np.array([float(k) for k in keys]) if all(map(is_number, keys)) \
        else np.array(keys)
    return X, values[codes], names


def _convert(path, block, lines, start, features, names) -> np.ndarray:
    """One block of rows → float64 (rows × features), each bad cell an error naming it."""
    out = np.empty((len(block), len(features)))
    for k, j in enumerate(features):
        column = [row[j] for row in block]
        try:
            out[:, k] = np.array(column, dtype=float)
            bad = np.flatnonzero(~np.isfinite(out[:, k]))
        except ValueError:
            bad = [i for i, c in enumerate(column) if not is_number(c) or is_missing(c)]
        if len(bad):
            i = int(bad[0])
            what = column_name(names, j)
            cell = column[i]
            if is_missing(cell) or is_number(cell):
                raise _cell_error(path, what, start + i + 1, lines[i], cell)
            numeric_anywhere = any(is_number(c) for c in column)
            hint = ("" if numeric_anywhere else " (name the label column with label_column / "
                    "--label-column if it holds the labels)")
            raise ParameterError("source", f"{path.name}: {what} is not numeric: data row "
                                 f"{start + i + 1} holds {cell!r} (line {lines[i]} of the "
                                 f"file); every feature column must hold numbers{hint}")
    return out


def _codes(path, block, lines, start, label, names, classes: dict, codes: list) -> None:
    """The block's labels as codes into ``classes`` (text → code, in order of appearance)."""
    out = np.empty(len(block), dtype=np.intp)
    for i, row in enumerate(block):
        cell = row[label]
        if is_missing(cell):
            raise _cell_error(path, f"the label {column_name(names, label)}", start + i + 1,
                              lines[i], cell)
        out[i] = classes.setdefault(cell, len(classes))
    codes.append(out)
