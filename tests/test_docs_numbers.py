"""Every number the docs and the README state is found in the record it cites.

Every page of ``docs/`` and the README is read as blocks: paragraphs, list items and table
rows, code left out (an example's inputs are not claims).  A block that states a number must
name a record under ``benchmarks/results/`` (a ``.txt`` or ``.jsonl`` file, or a folder of
them; or a notebook, whose stored outputs record its run), or be a table row or list item
under the paragraph of the same section that names one (a table below its "Sources"
paragraph); each of its numbers must appear in that record as written (sign and
percent included; "70 000" is 70000).  A derived figure (a mean, a range, a count) belongs in
the record, computed from its rows.

Two lists say, with the reason, which blocks are not checked this way: ``NOT_MEASURED`` (a
requirement, a definition, a count of the repository's own files, an example's printed
output) and ``HISTORY`` (paragraphs that quote figures their records do not print as
written).  The run logs of earlier waves are not docs: they sit in ``benchmarks/logs/``.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: autosummary directives only; pages the docs build writes (git-ignored)
SKIP = {"docs/api.rst", "docs/sg_execution_times.rst", "docs/methods_table.rst"}
PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*")
               if p.suffix in {".rst", ".md"}
               and not {"_templates", "_build", "auto_examples", "generated"} & set(p.parts)
               and str(p.relative_to(ROOT)) not in SKIP) + ["README.md"]

#: (page, the block's first words) → why its numbers are not measurements to look up
NOT_MEASURED = {
    ("install.rst", "``ldr`` needs Python"): "version requirements",
    ("README.md", "Python ≥ 3.10"): "version requirements",
    ("README.md", "The top eigenvectors of S_w⁻¹S_b"):
        "the example below it prints the ratios (tests/test_docs.py runs it)",
    ("README.md", "| benchmark (script) | result |"):
        "each row is checked against the record its superscript names "
        "(tests/test_readme_numbers.py)",
    ("README.md", "![The trace ratio over every plane"): "a figure's file name",
    ("notebooks.rst", "notebooks/00_quickstart"): "the notebooks' file names",
    ("concepts.rst", "Below the estimators, :func:`ldr.solve`"):
        "array-API versions and a dtype's width",
    ("concepts.rst", "A solver (:mod:`ldr.solvers`) is step-wise"):
        "the protocol's arities",
    ("benchmarks/index.rst", "Conventions shared by the scripts"): "BLAS threads, a convention",
    ("benchmarks/index.rst", "* - ``bench_"): "what each script measures: its settings",
    ("docs/index.rst", "Eigenvector recipes are one answer"):
        "the example below it prints the ratios (tests/test_docs.py runs it)",
    ("pairwise_scale.rst", "``benchmarks/bench_pairwise_scale.py`` and"):
        "the benchmark's settings and the data's size (n · d · 8 bytes)",
    ("summary.rst", "* - kernel and transport"): "the switch sizes, constants of the code",
    ("validation.rst", "The claims the README and these pages make"): "the anchors' versions",
    ("design.md", "Linear dimensionality reduction as optimization"): "a reference's year",
    ("design.md", "| floor | folders |"): "the floors' numbers",
    ("design.md", "| member | required |"): "the protocol's definitions",
    ("design.md", "The Φ-oracle contract"): "a formula",
    ("design.md", "- **Stopping rules**"): "the rules' default tolerances, definitions",
    ("design.md", "One implementation of each computation"): "a version requirement",
}

#: (page, the block's first words) → why its numbers are not all in its record yet
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
    block = re.sub(r"``[^`]*``|`[^`]*`|:\w+:`[^`]*`|\{\w+\}`[^`]*`", "", block)  # code, refs
    block = re.sub(r"\]\([^)]*\)|<[^>]*>", "", block)  # link targets
    block = re.sub(r"\b\d+-(?:NN|fold)\b|\b10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+", "", block)  # k-NN, 10⁶: names
    return re.findall(r"(?<![\d.\w])[+-]?\d+(?:\.\d+)?%?(?![\d.])", _plain(block))


def _without_code(text: str) -> str:
    """The page less its code: fenced blocks, and rst's literal blocks (after ``::``, a
    ``code-block``/``literalinclude`` directive) and directive options."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    out, literal = [], False
    for line in text.splitlines():
        indented = line.startswith((" ", "\t")) or not line.strip()
        if literal and indented:
            continue
        literal = False
        if re.match(r"\s*\.\. (code-block|code|literalinclude|math)::", line) \
                or line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            literal = True
            if line.lstrip().startswith(".."):
                continue
        if re.match(r"\s+:[\w-]+:", line):  # a directive's option
            continue
        out.append(line)
    return "\n".join(out)


def _sections(text: str) -> list[str]:
    """The page cut at its headings (an rst underline, a Markdown ``#``)."""
    return re.split(r"\n[^\n]+\n[=\-~^]{3,}\n|\n#{1,6} [^\n]*\n", "\n" + text)


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items and table rows (a row's cells together)."""
    parts = re.split(r"\n\s*\n|\n(?= *\* )|\n(?=- )", text)  # a list-table row is one block
    return [p.strip("\n") for p in parts if p.strip()]


def _records(block: str) -> list[Path]:
    names = re.findall(r"([\w./-]+\.(?:txt|jsonl|ipynb)|[\w./-]+/)", block)
    found = []
    for name in names:
        for path in (RESULTS / name, RESULTS / Path(name).name, ROOT / name):
            if path.is_file():
                found.append(path)
                break
            if path.is_dir() and RESULTS in path.parents:
                found.extend(sorted(p for p in path.rglob("*") if p.is_file()))
                break
    return found


def _listed(listing: dict, page: str, block: str) -> bool:
    return any(page.endswith(p) and block.lstrip().startswith(start) for p, start in listing)


def _checked_blocks(page: str):
    """``(block, its records)`` of every block of ``page`` that states a number."""
    text = _without_code((ROOT / page).read_text(encoding="utf-8"))
    for section in _sections(text):
        inherited = []
        for block in _blocks(section):
            own = _records(block)
            item = block.lstrip().startswith(("* ", "- ", "|"))
            if own:
                inherited = own
            elif not item and not block.lstrip().startswith(".."):
                inherited = []  # a paragraph of its own cites its own record
            if _numbers(block):
                yield block, own or (inherited if item else [])


@pytest.mark.parametrize("page", PAGES)
def test_every_number_is_in_the_record_it_cites(page):
    missing, uncited = [], []
    for block, records in _checked_blocks(page):
        if _listed(NOT_MEASURED, page, block) or _listed(HISTORY, page, block):
            continue
        short = " ".join(block.split())[:90]
        if not records:
            uncited.append(short)
            continue
        body = _plain("\n".join(p.read_text(encoding="utf-8", errors="replace")
                                for p in records))
        for x in _numbers(block):
            if not re.search(rf"(?<![\d.]){re.escape(x)}(?![\d])", body):
                missing.append((x, sorted({p.name for p in records}), short))
    assert not uncited, ("blocks that state numbers and cite no record", uncited)
    assert not missing, missing


@pytest.mark.parametrize("listing", [NOT_MEASURED, HISTORY], ids=["not_measured", "history"])
def test_listed_blocks_still_exist(listing):
    """An entry whose block was rewritten is removed."""
    for page, start in listing:
        blocks = [b for path in PAGES if path.endswith(page)
                  for b in _blocks(_without_code((ROOT / path).read_text(encoding="utf-8")))]
        assert any(b.lstrip().startswith(start) for b in blocks), (page, start)


def test_the_check_fails_on_a_figure_missing_from_its_record(tmp_path):
    """A number its record does not print, and a number with no record, are caught."""
    record = RESULTS / "bench_uica.txt"
    good = f"From ``{record.name}``: 20/20 seeds."
    assert _numbers(good) == ["20", "20"]
    body = _plain(record.read_text(encoding="utf-8"))
    assert re.search(r"(?<![\d.])20(?![\d])", body)
    assert _records(good) == [record]
    bad = "A claim: 12345.678 with no record."
    assert _numbers(bad) and not _records(bad)


COMMAND = re.compile(r"\.py\b|\bpython\b|\bcommand\b|\bldr [a-z]|\.sh\b")
COMMIT = re.compile(r"(?<![0-9a-f])[0-9a-f]{7,40}(?![0-9a-f])")
#: cited records whose provenance is not written in them, with the reason
NO_PROVENANCE = {
    "nca_one_route_summary.txt": "merged by hand from the nca_one_route_* records it names, "
                                 "each of which names its command and commit",
}


def _provenance(path: Path) -> str:
    """What names a record's command and commit: its head, the head of its ``.txt`` twin
    (a ``.jsonl`` of rows), an executed notebook's stamp (``metadata["ldr"]``), and the
    README.txt of its folder or a folder above it."""
    heads = [path.read_text(encoding="utf-8", errors="replace")[:4000]]
    if path.suffix == ".ipynb":  # an executed notebook: the stamp make_figures.py wrote
        heads.append(json.dumps(json.loads(path.read_text(encoding="utf-8"))["metadata"]
                                .get("ldr", {})))
    twin = path.with_suffix(".txt")
    if path.suffix == ".jsonl" and twin.exists():
        heads.append(twin.read_text(encoding="utf-8", errors="replace")[:4000])
    for folder in [path.parent, *path.parent.parents]:
        if folder == RESULTS.parent:
            break
        readme = folder / "README.txt"
        if readme.exists():
            heads.append(readme.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(heads)


def _cited_records() -> set:
    cited = set()
    for page in PAGES:
        text = _without_code((ROOT / page).read_text(encoding="utf-8"))
        for block in _blocks(text):
            cited.update(_records(block))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cited.update(RESULTS / name for name in re.findall(r"[¹²³⁴⁵⁶⁷⁸⁹] `([^`]+)`", readme))
    return cited


def test_every_cited_record_names_its_command_and_commit():
    missing = []
    for path in sorted(_cited_records()):
        if path.name in NO_PROVENANCE:
            continue
        text = _provenance(path)
        if not (COMMAND.search(text) and COMMIT.search(text)):
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, missing
