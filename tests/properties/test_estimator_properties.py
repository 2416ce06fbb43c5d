"""Every estimator on drawn data (``_ldr_props``): a clear error naming the argument, or a
finite answer of the right shape and dtype, orthonormal where it should be, equal to the
reference where one exists, converged only where certified; inputs unmodified; the same
seed, the same answer."""

import pytest
from _ldr_props import (
    ESTIMATORS,
    check_estimator,
    check_valid_fit,
    estimator_cases,
    valid_cases,
)
from hypothesis import given
from hypothesis import strategies as st

import ldr.estimators


def test_every_estimator_has_a_spec():
    assert sorted(ESTIMATORS) == sorted(ldr.estimators.__all__)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@given(case=st.data())
def test_estimator_is_never_silently_wrong(name, case):
    data, kw, repeat = case.draw(estimator_cases(name), label="case")
    check_estimator(name, data, kw, repeat)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@given(case=st.data())
def test_estimator_fits_every_valid_table(name, case):
    """The suite above takes a clear error as a pass; here the input is valid, so an error is
    the failure (a valid table refused)."""
    data, kw = case.draw(valid_cases(name), label="case")
    check_valid_fit(name, data, kw)
