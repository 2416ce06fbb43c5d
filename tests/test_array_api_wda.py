"""Runs tests/array_api_wda_cases.py (scikit-learn's array API convention for WassersteinDA)
in a fresh interpreter with ``SCIPY_ARRAY_API=1``: scikit-learn's ``array_api_dispatch``
refuses to start without it, and it must be set before SciPy is imported, which this test
session has long done (as tests/test_array_api.py does for PCA and OrthogonalLDA)."""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent


@pytest.mark.skipif(importlib.util.find_spec("array_api_strict") is None
                    or importlib.util.find_spec("array_api_compat") is None,
                    reason="array-api-strict is not installed (it is in the [test] extra)")
def test_the_wda_array_api_cases_pass_in_a_fresh_interpreter():
    pytest_script = pathlib.Path(sys.executable).with_name("pytest")
    command = ([str(pytest_script)] if pytest_script.exists()
               else [sys.executable, "-m", "pytest"])
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    cases = str(HERE / "array_api_wda_cases.py")
    out = subprocess.run([*command, "-q", "-p", "no:cacheprovider", cases],
                         capture_output=True, text=True, env=env, cwd=HERE, timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " failed" not in out.stdout
