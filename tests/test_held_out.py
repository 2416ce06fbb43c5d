"""The held-out list is sealed: its hash is the one recorded before defaults were measured on
it (``benchmarks/results/held_out_hash.txt``); changing the list needs a new record."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_held_out_list_matches_its_recorded_hash():
    spec = importlib.util.spec_from_file_location("held_out", ROOT / "benchmarks/held_out.py")
    held_out = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(held_out)
    record = (ROOT / "benchmarks/results/held_out_hash.txt").read_text()
    assert f"sha256 {held_out.digest()}" in record
    assert set(held_out.names()) == {name for name, _, _ in held_out.SPECS}
