"""Library code is reference, not a lab log: no module of ``ldr/``, ``objectives/`` or
``solvers/`` names a data set, a benchmark file, a date or an issue, and each assigns one
name per line.

Findings (what was measured, on which table, when) belong in the docs' benchmark pages, built
from ``benchmarks/results/``; a docstring says what the code computes, with the formula, its
paper and equation.  Doctest lines (``>>>``, ``...``) may load bundled data; the data set
loader and the command line, whose job is to name the bundled tables, are exempt from the
data set rule.  A NumPy-only fast path names the benchmark that justifies it in one comment
line of its own, ``# benchmark: benchmarks/bench_x.py --option`` (a pointer, no figures).
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LIBRARY = sorted(p for folder in ("ldr", "objectives", "solvers")
                 for p in (ROOT / folder).rglob("*.py"))
#: the tables the benchmarks and earlier docstrings measured on, and other data sets
DATA_SETS = ("iris", "wine", "digits'", "on digits", "(digits", "breast_cancer", "anes96",
             "star98", "randhie",
             "grunfeld", "spector", "modechoice", "ccard", "rate_marriage", "fair/", "mnist",
             "statsmodels' tables", "development tables", "held-out tables", "held out tables")
#: modules whose job is to name the bundled data sets
NAMES_DATA = {"ldr/data/datasets.py", "ldr/cli/commands.py", "ldr/cli/options.py",
              "ldr/data/files.py"}
LAB_NOTES = [
    (re.compile(r"benchmarks/|\bbench_[a-z_]+(\.py)?\b|results/[a-z_]+\.txt"),
     "a benchmark file"),
    (re.compile(r"\b20\d\d-\d\d-\d\d\b|\b(19|20)\d\d-\d\d\b"), "a date"),
    (re.compile(r"\bissue\s+#?\d+|\bissues?\s+\d+"), "an issue number"),
    (re.compile(r"README"), "the README (a figure belongs to a stored record)"),
]

#: a fast path's pointer to the benchmark that justifies it: a command, no figures
POINTER = re.compile(r"# benchmark: benchmarks/bench_[a-z_]+\.py( --?[a-z][a-z-]*( [a-z0-9_]+)?)*")


def _prose_lines(path: pathlib.Path):
    """The lines of ``path`` that are not doctest input."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith((">>>", "...")):
            continue
        if POINTER.fullmatch(stripped):
            continue
        yield number, line


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_lab_notes_in_library_code(path):
    rel = str(path.relative_to(ROOT))
    found = []
    for number, line in _prose_lines(path):
        for pattern, what in LAB_NOTES:
            if pattern.search(line):
                found.append(f"{rel}:{number}: {what}: {line.strip()}")
        if rel not in NAMES_DATA:
            lower = line.lower()
            for name in DATA_SETS:
                if re.search(rf"(?<![a-z_]){re.escape(name)}(?![a-z_])", lower) or (
                        name.endswith("'") and name in lower):
                    found.append(f"{rel}:{number}: a data set ({name}): {line.strip()}")
    assert not found, "\n".join(found)


def _independent_packing(node: ast.Assign) -> bool:
    """``a, b = x, y`` where no value reads a target: two assignments on one line."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Tuple) \
            or not isinstance(node.value, ast.Tuple):
        return False
    targets = {n.id for n in ast.walk(node.targets[0]) if isinstance(n, ast.Name)}
    read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    return not targets & read


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_one_assignment_per_line(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    packed = [node.lineno for node in ast.walk(tree)
              if isinstance(node, ast.Assign) and _independent_packing(node)]
    assert not packed, f"{path.relative_to(ROOT)}: several assignments on lines {packed}"
