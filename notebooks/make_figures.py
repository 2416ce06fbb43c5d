"""Execute the teaching notebooks, store their outputs, and save the README gallery's figures.

    python -P notebooks/make_figures.py                  # every notebook, small sizes
    python -P notebooks/make_figures.py 03 --paper       # one notebook, the survey's sizes

Each notebook saves its key figure to ``notebooks/figures/`` when ``LDR_SAVE_FIGURES`` names
that folder (and runs at the survey's sizes when ``LDR_NOTEBOOK_SCALE=paper``); the executed
notebook, outputs included, is written back in place.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import time

import nbclient
import nbformat

HERE = pathlib.Path(__file__).resolve().parent


def execute(path: pathlib.Path, paper: bool, figures: pathlib.Path | None) -> float:
    """Run ``path`` in a fresh kernel and write it back with its outputs; return seconds."""
    os.environ.pop("MPLBACKEND", None)  # the inline backend: figures stored in the notebook
    os.environ["LDR_NOTEBOOK_SCALE"] = "paper" if paper else "small"
    if figures is not None:
        os.environ["LDR_SAVE_FIGURES"] = str(figures)
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    # per cell: notebook 07's cells of POT runs take up to ~25 minutes at the papers' sizes
    nbclient.NotebookClient(nb, timeout=3600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("only", nargs="*", help="notebook name prefixes (default: all)")
    parser.add_argument("--paper", action="store_true", help="the survey's sizes (slow)")
    parser.add_argument("--no-figures", action="store_true", help="do not save figures")
    args = parser.parse_args()
    figures = None if args.no_figures else HERE / "figures"
    if figures is not None:
        figures.mkdir(exist_ok=True)
    for path in sorted(HERE.glob("*.ipynb")):
        if args.only and not any(path.name.startswith(p) for p in args.only):
            continue
        print(f"{path.name}: {execute(path, args.paper, figures):.1f} s", flush=True)


if __name__ == "__main__":
    main()
