"""Every number of the docs' claims pages is found in the record its paragraph cites.

The claims pages (``docs/benchmarks/summary.rst``, ``validation.rst``, ``pairwise_scale.rst``)
state results; each paragraph, list item or table row that names a record under
``benchmarks/results/`` must print only numbers that record prints, as written (sign and
percent included; "70 000" is 70000).  A derived figure (a mean, a range, a count) belongs in
the record, computed from its rows.  ``HISTORY`` lists, with the reason, the paragraphs that
still quote figures their records do not print as written; the run logs
(``real_data.rst``, ``design_notes.md``, ``redesign.rst``) tell the history of decisions and are
not claims pages.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGES = ["docs/benchmarks/summary.rst", "docs/benchmarks/validation.rst",
         "docs/benchmarks/pairwise_scale.rst"]

#: (page, the paragraph's first words) → why its numbers are not all in its record yet
HISTORY = {
    ("summary.rst", "``bench_gpu.py`` (``bench_gpu_h200.txt``)"):
        "the GPU record's run numbers and n written as powers of ten",
    ("pairwise_scale.rst", "- The stochastic routes (NCA and LargeMarginDML past"):
        "percentages derived from the rows of the two records",
    ("pairwise_scale.rst", "- The stochastic route forced there ends"):
        "percentages derived from the rows of the two records",
}


def _plain(text: str) -> str:
    text = text.replace("−", "-")
    return re.sub(r"(?<=\d)[  ](?=\d{3}\b)", "", text)  # 70 000 → 70000


def _numbers(block: str) -> list[str]:
    block = re.sub(r"``[^`]*``|:\w+:`[^`]*`", "", block)  # code and cross-references
    return re.findall(r"(?<![\d.\w])[+-]?\d+(?:\.\d+)?%?(?![\d.])", _plain(block))


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items and table rows."""
    parts = re.split(r"\n\s*\n|\n(?=- )|\n(?=   \* - )", text)
    return [p.strip("\n") for p in parts if p.strip()]


def _records(block: str) -> list[Path]:
    names = re.findall(r"([\w./-]+\.(?:txt|jsonl))", block)
    found = []
    for name in names:
        path = RESULTS / Path(name).name if not (RESULTS / name).exists() else RESULTS / name
        if path.exists():
            found.append(path)
    return found


def _history(page: str, block: str) -> bool:
    return any(page.endswith(p) and block.lstrip().startswith(start)
               for p, start in HISTORY)


@pytest.mark.parametrize("page", PAGES)
def test_numbers_of_a_record_citing_paragraph_are_in_its_record(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    missing = []
    for block in _blocks(text):
        records = _records(block)
        if not records or _history(page, block):
            continue
        body = _plain("\n".join(p.read_text(encoding="utf-8") for p in records))
        for x in _numbers(block):
            if not re.search(rf"(?<![\d.]){re.escape(x)}(?![\d])", body):
                missing.append((x, [p.name for p in records], " ".join(block.split())[:80]))
    assert not missing, missing


def test_history_entries_still_exist():
    """An entry of HISTORY whose paragraph was rewritten is removed."""
    for page, start in HISTORY:
        text = next((ROOT / p).read_text(encoding="utf-8") for p in PAGES if p.endswith(page))
        assert any(b.lstrip().startswith(start) for b in _blocks(text)), (page, start)
