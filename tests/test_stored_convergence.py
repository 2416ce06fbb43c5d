"""No stored run reads converged with its final gradient above its tolerance.

Every row of ``benchmarks/results/*.jsonl`` whose ldr fit reports ``converged`` must say why
in a form that can be checked: the gradient rule ("gradient norm G ≤ tol·scale T", G ≤ T), a
fixed point of a solver that computes no gradient (SCF: "fixed-point residual … ≤ xtol"), an
alternation's fixed point (WDAClustering's subspace moved less than outer_tol), a closed form
(nothing to optimize), or no solver at all (ReducedRankRegression's closed form:
an empty reason).  Records measured before a step or cost-change stop had to meet the
gradient rule (it counted within 1e3 · tol · scale) are listed in ``SUPERSEDED`` with what
replaces them; the README may not cite them.
"""

import json
import re
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"

#: records of the former rule, and the record that replaces each for the claims it backed
SUPERSEDED = {
    "nca_one_route_bench_real_fits_after.jsonl": "bench_real_nca_fits.jsonl",
    "nca_one_route_bench_real_fits_before.jsonl": "bench_real_nca_fits.jsonl",
    "nca_one_route_bench_real_cv_after.jsonl": "bench_real_nca_fits.jsonl",
    "nca_one_route_bench_real_cv_before.jsonl": "bench_real_nca_fits.jsonl",
    "nca_one_route_bench_real_cv_fair2000_after.jsonl": "bench_real_nca_fits.jsonl",
    "nca_one_route_bench_real_cv_fair2000_before.jsonl": "bench_real_nca_fits.jsonl",
    "nca_one_route_summary.txt": "bench_real_nca.txt",
}

GRADIENT = re.compile(r"gradient norm ([0-9.e+-]+) ≤ g?tol·scale ([0-9.e+-]+)")
#: convergence without a gradient: SCF's fixed point, a closed form, an alternation's fixed point
#: (WDAClustering: k-means ↔ WDA, its subspace's move below outer_tol)
EXEMPT = ("fixed-point residual", "nothing to optimize", "<= outer_tol")


def _records():
    return sorted(p.name for p in RESULTS.glob("*.jsonl"))


def test_superseded_records_have_their_replacement():
    for old, new in SUPERSEDED.items():
        assert (RESULTS / old).exists(), old
        assert (RESULTS / new).exists(), f"{old} is replaced by {new}, which is missing"


@pytest.mark.parametrize("name", [n for n in _records() if n not in SUPERSEDED])
def test_every_converged_row_meets_its_gradient_tolerance(name):
    lines = (RESULTS / name).read_text().splitlines()
    assert lines, name
    for line in lines:
        row = json.loads(line)
        ours = row.get("ours")
        if not isinstance(ours, dict) or not ours.get("converged"):
            continue
        reason = ours.get("reason", "")
        where = f"{name}: {row.get('method')} on {row.get('table')}: {reason!r}"
        if any(word in reason for word in EXEMPT):
            continue
        if reason == "":
            assert row.get("method") == "ReducedRankRegression", where
            continue
        found = GRADIENT.findall(reason)
        assert found, f"converged without the gradient rule: {where}"
        for g, t in found:
            assert float(g) <= float(t), where


def test_the_readme_cites_no_superseded_record():
    """The front door's figures come from current records (the docs' design notes may tell
    the history of a decision from the records it was made on)."""
    text = (RESULTS.parents[1] / "README.md").read_text()
    for old in SUPERSEDED:
        assert old not in text, f"README.md cites {old}"
