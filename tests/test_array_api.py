"""Runs the array API cases — tests/array_api_cases.py (PCA, OrthogonalLDA, SupervisedHSIC),
tests/array_api_second_order_cases.py (MAF, SFA, PPCA, FactorAnalysis, CCA, OrthogonalCCA) and
tests/array_api_wda_cases.py (WassersteinDA): scikit-learn's array API convention — in one
fresh interpreter with ``SCIPY_ARRAY_API=1``: scikit-learn's ``array_api_dispatch`` refuses
to start without it, and it must be set before SciPy is imported, which this test session has
long done."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CASES = ("array_api_cases.py", "array_api_second_order_cases.py", "array_api_wda_cases.py")


@pytest.mark.skipif(importlib.util.find_spec("array_api_strict") is None
                    or importlib.util.find_spec("array_api_compat") is None,
                    reason="array-api-strict is not installed (it is in the [test] extra)")
def test_the_array_api_cases_pass_in_a_fresh_interpreter():
    pytest_script = pathlib.Path(sys.executable).with_name("pytest")
    command = ([str(pytest_script)] if pytest_script.exists()
               else [sys.executable, "-m", "pytest"])
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    cases = [str(HERE / name) for name in CASES]
    out = subprocess.run([*command, "-q", "-p", "no:cacheprovider", *cases],
                         capture_output=True, text=True, env=env, cwd=HERE, timeout=900)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " failed" not in out.stdout
