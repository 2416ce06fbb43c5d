"""Execute the teaching notebooks, store their outputs, and save the README gallery's figures.

    python -P notebooks/make_figures.py                  # every notebook, small sizes
    python -P notebooks/make_figures.py 03 --paper       # one notebook, the survey's sizes

At the small size (the default) the executed notebook, outputs included, is written back in
place, with a stamp in its metadata (``metadata["ldr"]``): the size, the run's seconds, a hash
of its code cells and a hash of the library modules the kernel had imported, with their files.
``tests/test_notebooks.py`` fails when a notebook's code or those modules changed after the
stamp, and when a fresh execution's printed numbers differ from the stored ones beyond
:data:`RTOL` / :data:`ATOL`. At the survey's sizes the executed notebook goes to
``benchmarks/results/notebooks/`` instead, with the command, commit and machine in its stamp,
and its figures to ``benchmarks/results/notebooks/figures/``.  Each notebook saves its key
figures to the folder ``LDR_SAVE_FIGURES`` names (``notebooks/figures/`` at the small size).

Comparing outputs: per code cell, the stdout and stderr streams and the ``text/plain`` form of
results and figures (``<Figure size ... with 3 Axes>``), with runs of blanks collapsed and file
paths dropped from warnings. The text between numbers must be equal; two numbers agree when
they differ by at most ``RTOL`` of the larger, ``ATOL``, or one unit of the last digit printed.
Cells tagged ``machine-dependent`` (timings, iteration counts) have their numbers skipped, not
their text.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import os
import pathlib
import platform
import re
import sys
import time

import nbclient
import nbformat

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmark scripts' shared helpers
from _common import git_revision  # noqa: E402

LIBRARY = ("ldr", "objectives", "solvers")
RTOL = 1e-3
ATOL = 1e-6
MACHINE_DEPENDENT = "machine-dependent"

# run last in the kernel, then removed: the repository files of the library modules imported
PROBE = f"""import json as _json, pathlib as _pathlib, sys as _sys
_root = _pathlib.Path({str(ROOT)!r})
print(_json.dumps(sorted(
    str(_pathlib.Path(m.__file__).resolve().relative_to(_root))
    for name, m in list(_sys.modules.items())
    if name.split(".")[0] in {LIBRARY!r} and getattr(m, "__file__", None)
    and _pathlib.Path(m.__file__).resolve().is_relative_to(_root))))
"""

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
WARNING_PATH = re.compile(r"\S+\.py:\d+: ")


def execute(path: pathlib.Path, scale: str) -> tuple[nbformat.NotebookNode, list[str], float]:
    """Run ``path`` in a fresh kernel at ``scale``; return it executed, its modules, seconds.

    Figures are stored inline (the kernel's default backend); the environment variable
    ``LDR_NOTEBOOK_SCALE`` is set to ``scale`` for the kernel.
    """
    os.environ.pop("MPLBACKEND", None)
    os.environ["LDR_NOTEBOOK_SCALE"] = scale
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    start = time.perf_counter()
    # per cell: notebook 07's cells of POT runs take up to ~25 minutes at the papers' sizes
    nbclient.NotebookClient(nb, timeout=3600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    probe = nb.cells.pop()
    # the kernel may send the printed line in more than one stream message
    printed = "".join(out.get("text", "") for out in probe.outputs
                      if out.get("output_type") == "stream" and out.get("name") == "stdout")
    modules = json.loads(printed)
    return nb, modules, seconds


def code_hash(nb: nbformat.NotebookNode) -> str:
    """SHA-256 of the notebook's code cells, in order."""
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    return hashlib.sha256("\0".join(sources).encode()).hexdigest()


def library_hash(files: list[str]) -> str:
    """SHA-256 of the modules' code, docstrings left out; a missing file hashes as missing."""
    digest = hashlib.sha256()
    for name in sorted(files):
        path = ROOT / name
        digest.update(name.encode())
        if not path.is_file():
            digest.update(b"missing")
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                body[0] = ast.Pass()
        digest.update(ast.dump(tree).encode())
    return digest.hexdigest()


def stamp(nb: nbformat.NotebookNode, modules: list[str], seconds: float, scale: str) -> dict:
    """The ``metadata["ldr"]`` record of an execution."""
    return {"scale": scale, "seconds": round(seconds, 1), "code": code_hash(nb),
            "library": library_hash(modules), "modules": modules}


def outputs(nb: nbformat.NotebookNode) -> list[tuple[bool, dict[str, str]]]:
    """Per code cell: whether its numbers count, and its comparable text by output kind."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts: dict[str, str] = {}
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                kind = out.name
                text = out.text if kind == "stdout" else WARNING_PATH.sub("", out.text)
            elif out.output_type == "error":
                kind = "error"
                text = f"{out.ename}: {out.evalue}"
            else:
                kind = "result"
                text = out.get("data", {}).get("text/plain", "")
            texts[kind] = texts.get(kind, "") + text
        numbers = MACHINE_DEPENDENT not in cell.metadata.get("tags", [])
        cells.append((numbers, {k: " ".join(v.split()) for k, v in texts.items()}))
    return cells


def _unit(token: str) -> float:
    """One unit of the last digit printed in a number token."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def differences(stored: nbformat.NotebookNode, fresh: nbformat.NotebookNode) -> list[str]:
    """Where the fresh run's outputs differ from the stored ones (empty: they agree)."""
    found = []
    old = outputs(stored)
    new = outputs(fresh)
    if len(old) != len(new):
        return [f"{len(old)} code cells stored, {len(new)} executed"]
    for index, ((numbers, before), (_, after)) in enumerate(zip(old, new)):
        for kind in sorted(set(before) | set(after)):
            a = before.get(kind, "")
            b = after.get(kind, "")
            where = f"code cell {index} ({kind})"
            if NUMBER.split(a) != NUMBER.split(b):
                found.append(f"{where}: text differs\n  stored: {a[:300]}\n  fresh:  {b[:300]}")
                continue
            if not numbers:
                continue
            for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
                fx = float(x)
                fy = float(y)
                tol = max(RTOL * max(abs(fx), abs(fy)), ATOL, _unit(x), _unit(y))
                if not math.isclose(fx, fy, rel_tol=0.0, abs_tol=tol):
                    found.append(f"{where}: {x} stored, {y} fresh")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("only", nargs="*", help="notebook name prefixes (default: all)")
    parser.add_argument("--paper", action="store_true", help="the survey's sizes (slow)")
    parser.add_argument("--no-figures", action="store_true", help="do not save figures")
    args = parser.parse_args()
    scale = "paper" if args.paper else "small"
    stored = ROOT / "benchmarks" / "results" / "notebooks"  # where a papers'-size run goes
    figures = stored / "figures" if args.paper else HERE / "figures"
    if args.no_figures:
        os.environ.pop("LDR_SAVE_FIGURES", None)
    else:
        figures.mkdir(parents=True, exist_ok=True)
        os.environ["LDR_SAVE_FIGURES"] = str(figures)
    for path in sorted(HERE.glob("*.ipynb")):
        if args.only and not any(path.name.startswith(p) for p in args.only):
            continue
        nb, modules, seconds = execute(path, scale)
        nb.metadata["ldr"] = stamp(nb, modules, seconds, scale)
        target = path
        if args.paper:
            nb.metadata["ldr"].update(
                command="python -P notebooks/make_figures.py " + " ".join(sys.argv[1:]),
                commit=git_revision(short=False), machine=f"{platform.machine()}, "
                f"{platform.processor() or platform.system()}, {os.cpu_count()} cores, "
                f"Python {platform.python_version()}")
            target = stored / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        print(f"{path.name}: {seconds:.1f} s -> {target.relative_to(ROOT)}", flush=True)


if __name__ == "__main__":
    main()
