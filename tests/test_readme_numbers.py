"""Every number in the README's benchmark table is found in the record its row cites.

A row names its source by a superscript (¹ … ⁹) that the "Sources" line maps to a file under
``benchmarks/results/``; each number of the row's result cell must appear in that file as
written (a median or a range the record does not print is a number a reader cannot trace).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
RESULTS = ROOT / "benchmarks" / "results"
MARKS = "¹²³⁴⁵⁶⁷⁸⁹"


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def _sources(text: str) -> dict:
    """superscript → the record it names (the first file after the mark)."""
    found = {m: f for m, f in re.findall(rf"([{MARKS}]) `([^`]+)`", text)}
    assert found, "the benchmark section names no sources"
    return found


def _rows(text: str):
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or set(cells[0]) <= set("-: ") or cells[0].startswith("benchmark"):
            continue
        mark = re.search(rf" ([{MARKS}]+)$", cells[0])  # a footnote, not an exponent (10⁶)
        marks = list(mark.group(1)) if mark else []
        yield cells[0], cells[1], marks


def _plain(text: str) -> str:
    return text.replace("−", "-")


def _numbers(cell: str) -> list[str]:
    """The numbers of a cell as written: with their sign and percent sign where they have
    one (superscript exponents are not digits)."""
    cell = _plain(re.sub(r"`[^`]*`", "", cell))  # code: option names and values
    return re.findall(r"(?<![\d.])[+-]?\d+(?:\.\d+)?%?(?![\d.])", cell)


ROWS = list(_rows(_section("Benchmarks")))


def test_the_benchmark_table_has_rows_that_each_cite_a_record():
    sources = _sources(_section("Benchmarks"))
    assert ROWS
    for name, _, marks in ROWS:
        assert marks, f"the row {name!r} cites no record"
        for mark in marks:
            assert (RESULTS / sources[mark]).is_file(), f"{sources[mark]} is not a record"


@pytest.mark.parametrize("name,cell,marks", ROWS, ids=[r[0][:40] for r in ROWS])
def test_every_number_of_a_row_is_in_its_record(name, cell, marks):
    sources = _sources(_section("Benchmarks"))
    text = _plain("\n".join((RESULTS / sources[m]).read_text(encoding="utf-8")
                             for m in marks))
    missing = [x for x in _numbers(cell)
               if not re.search(rf"(?<![\d.]){re.escape(x)}(?![\d])", text)]
    assert not missing, f"{name}: {missing} are not in {[sources[m] for m in marks]}"
