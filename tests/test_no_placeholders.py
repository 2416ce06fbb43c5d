"""No placeholder text where a user reads: the library's sources (messages, docstrings), every
command's help, the README and the docs pages hold no TODO, FIXME or XXX."""

import re
from pathlib import Path

import pytest

from ldr.cli import commands as cli

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = re.compile(r"\b(TODO|FIXME|XXX)\b")


def _files():
    for folder in ("ldr", "objectives", "solvers"):
        yield from sorted((ROOT / folder).rglob("*.py"))
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.rst"))


def test_no_placeholder_in_a_source_or_page():
    hits = [f"{path.relative_to(ROOT)}:{i}: {line.strip()}" for path in _files()
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if PLACEHOLDER.search(line)]
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize("argv", [["--help"], ["compare", "--help"], ["demo", "--help"]])
def test_no_placeholder_in_the_help(argv, capsys):
    with pytest.raises(SystemExit):
        cli.main(argv)
    out = capsys.readouterr().out
    assert out and not PLACEHOLDER.search(out)
