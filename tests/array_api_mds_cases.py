"""scikit-learn's array API convention for ldr's MDS (run by tests/test_array_api.py in a
fresh interpreter with ``SCIPY_ARRAY_API=1``, which scikit-learn's dispatch requires before
SciPy is imported; collected alone, it skips).

Under ``array_api_dispatch=True`` a PyTorch (CPU) or array-api-strict input is fitted in its
namespace — the rows, landmarks, sampled rows and dissimilarities, the stress's oracles and
the trust-region solver there — and gives ``M_``, ``mean_`` and ``transform`` there, equal to
the NumPy fit's: the subspace within 1e-8 and ``stress_`` to 1e-9, exact and past the
switches to landmarks and sampled rows.  A spy on PyTorch's conversions shows no data-sized
array reaching the host during the fit: only d×d arrays, points and the default smoothing's
seeded rows (at most ``SMOOTHING_ROWS``).  Without the setting, a tensor in gives NumPy out,
as before.
"""

import importlib.util
import os

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":
    pytest.skip("needs SCIPY_ARRAY_API=1 before SciPy is imported (tests/test_array_api.py "
                "runs this file so)", allow_module_level=True)

import array_api_compat  # noqa: E402
import sklearn  # noqa: E402
from _array_namespaces import (  # noqa: E402
    NAMESPACES,
    array_api_check_combinations,
    host_copies,
)
from _array_namespaces import as_namespace as _as  # noqa: E402

from ldr.data import arrays  # noqa: E402
from ldr.estimators import MDS  # noqa: E402
from ldr.manifolds import sin_largest_angle  # noqa: E402
from ldr.objectives.mds import SMOOTHING_ROWS  # noqa: E402

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")

#: the exact stress; landmarks and sampled rows, as the defaults switch to past their sizes
OPTIONS = {"exact": {}, "landmarks+rows": {"landmarks": 40, "rows": 120}}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((200, 6)) * np.linspace(3.0, 0.3, 6)


def _host(a):
    return np.asarray(arrays.to_host(a), dtype=float)


@pytest.mark.parametrize("options", list(OPTIONS.values()), ids=list(OPTIONS))
@pytest.mark.parametrize("name", NAMESPACES)
def test_the_fit_in_the_inputs_namespace_equals_numpys(data, name, options):
    X = data
    Xa = _as(name, X)
    ref = MDS(2, **options).fit(X)
    with sklearn.config_context(array_api_dispatch=True):
        est = MDS(2, **options).fit(Xa)
        Z = est.transform(Xa)
    for a in (est.M_, est.mean_, Z, est.result_.M):
        assert array_api_compat.array_namespace(a) is array_api_compat.array_namespace(Xa)
    assert est.result_.converged and ref.result_.converged, est.result_.reason
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-8
    assert est.stress_ == pytest.approx(ref.stress_, rel=1e-9)
    np.testing.assert_allclose(_host(Z) @ _host(Z).T, ref.transform(X) @ ref.transform(X).T,
                               rtol=1e-7, atol=1e-7 * np.abs(ref.transform(X)).max() ** 2)


@needs_torch
def test_the_fit_moves_no_data_sized_array_to_the_host(monkeypatch):
    """Every conversion of a tensor to NumPy during ``fit`` and ``transform`` is recorded:
    none may have more rows than the smoothing's sample or more entries than d×d otherwise
    (landmarks and sampled rows, as past the defaults' switches)."""
    import torch

    X = np.random.default_rng(1).standard_normal((5000, 5)) * np.linspace(2.0, 0.5, 5)
    Xt = torch.as_tensor(X)
    seen = host_copies(monkeypatch)
    with sklearn.config_context(array_api_dispatch=True):
        est = MDS(2, landmarks=300, rows=2500).fit(Xt)
        Z = est.transform(Xt)
    assert isinstance(Z, torch.Tensor) and est.result_.converged, est.result_.reason
    big = [s for s in seen if max(s, default=0) > SMOOTHING_ROWS
           or (int(np.prod(s)) > 5 * 5 and s != (SMOOTHING_ROWS, 5))]
    assert not big, f"data-sized arrays moved to the host: {big}"
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == tuple(X.shape)


@needs_torch
def test_without_dispatch_a_tensor_gives_numpy_as_before(data):
    import torch

    X = data
    ref = MDS(2).fit(X)
    est = MDS(2).fit(torch.as_tensor(X))
    Z = est.transform(torch.as_tensor(X))
    assert isinstance(est.M_, np.ndarray) and isinstance(Z, np.ndarray)
    assert isinstance(est.result_.M, np.ndarray)  # the fit ran on the host, in NumPy
    np.testing.assert_array_equal(est.M_, ref.M_)


@pytest.mark.parametrize("namespace, device, dtype",
                         list(array_api_check_combinations()))
def test_scikit_learns_array_api_check(namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input`` (values compared with NumPy's)."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input("MDS", MDS(2), namespace, device_name=device, dtype_name=dtype,
                          check_values=True)
