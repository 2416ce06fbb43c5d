"""Every registered method's objective (``ldr.driver.registry.METHODS``), built from drawn data as
``ldr compare`` builds it and solved by its default solver, and the quotient of traces
against its global certificate (``_ldr_props``)."""

import pytest
from _ldr_props import check_method, check_quotient, method_cases, quotient_cases
from hypothesis import given
from hypothesis import strategies as st

from ldr.driver import registry


@pytest.mark.parametrize("name", registry.names())
@given(case=st.data())
def test_method_is_never_silently_wrong(name, case):
    data, r, options, repeat = case.draw(method_cases(name), label="case")
    check_method(name, data, r, options, repeat)


@given(case=quotient_cases())
def test_quotient_of_traces_converges_only_to_its_global_optimum(case):
    check_quotient(*case)
