"""scikit-learn's array API convention for the pairwise estimators that fit wholly in the
input's namespace — MDS, KernelSDR, LPP and NPE (run by tests/test_array_api.py in a fresh
interpreter with ``SCIPY_ARRAY_API=1``, which scikit-learn's dispatch requires before SciPy
is imported; collected alone, it skips).

Under ``array_api_dispatch=True`` a PyTorch (CPU) or array-api-strict input is fitted in its
namespace — MDS's rows, landmarks, sampled rows and dissimilarities, KernelSDR's sampled rows,
kernel and Cholesky solves, LPP's and NPE's exact neighbour search (strips of rows), edges,
weights and d×d sums, their oracles and the solvers there — and gives
``M_``, ``mean_`` and ``transform`` there, equal to the NumPy fit's: the subspace within 1e-7
and the fit's merit to 1e-9, on every row and past the switches to sampled rows (and
landmarks).  A spy on PyTorch's conversions shows no data-sized array reaching the host
during the fit: only the labels or targets (read once, as scikit-learn does), d×d arrays,
points and the seeded rows (at most 2000) a median is read from.  A CUDA tensor (where a GPU
is lent) is fitted on the GPU.  Without the setting, a tensor in gives NumPy out, as before.
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
from ldr.estimators import LPP, MDS, NPE, KernelSDR  # noqa: E402
from ldr.manifolds import sin_largest_angle  # noqa: E402

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")

#: the median's sample (ldr.kernels.median_distance, MDS's SMOOTHING_ROWS)
MEDIAN_ROWS = 2000
#: (estimator, whether fit reads y, the merit compared): every row, and sampled rows (with
#: landmarks for MDS) as the defaults switch to past their sizes
CASES = {
    "MDS": (lambda: MDS(2), False, "stress_"),
    "MDS(landmarks, rows)": (lambda: MDS(2, landmarks=40, rows=120), False, "stress_"),
    "KernelSDR": (lambda: KernelSDR(1), True, "cost_"),
    "KernelSDR(rows)": (lambda: KernelSDR(1, rows=100), True, "cost_"),
    "LPP": (lambda: LPP(2, n_neighbors=6), False, "ratio_"),
    "LPP(whitened, binary)": (lambda: LPP(2, n_neighbors=6, form="whitened", weight="binary"),
                              False, "ratio_"),
    "NPE": (lambda: NPE(2, n_neighbors=8), False, "ratio_"),
}
#: the spy's fits on 5000 rows: past MDS's and KernelSDR's switches to sampled rows
SPIED = {
    "MDS": lambda: MDS(2, landmarks=300, rows=2500),
    "KernelSDR": lambda: KernelSDR(1, rows=2500, max_iter=3),
    "LPP": lambda: LPP(2),
    "NPE": lambda: NPE(2),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5)) * np.linspace(2.0, 0.5, 5)
    y = np.sin(X[:, 0] + X[:, 1]) + 0.05 * rng.standard_normal(200)
    return X, y


def _host(a):
    return np.asarray(arrays.to_host(a), dtype=float)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", NAMESPACES)
def test_the_fit_in_the_inputs_namespace_equals_numpys(data, name, case):
    X, y = data
    make, needs_y, merit = CASES[case]
    Xa = _as(name, X)
    args = (X, y) if needs_y else (X,)
    ref = make().fit(*args)
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(*((Xa, _as(name, y)) if needs_y else (Xa,)))
        Z = est.transform(Xa)
    for a in (est.M_, est.mean_, Z, est.result_.M):
        assert array_api_compat.array_namespace(a) is array_api_compat.array_namespace(Xa)
    assert est.result_.converged and ref.result_.converged, est.result_.reason
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-7
    assert getattr(est, merit) == pytest.approx(getattr(ref, merit), rel=1e-9)
    G, G0 = _host(Z) @ _host(Z).T, ref.transform(X) @ ref.transform(X).T
    np.testing.assert_allclose(G, G0, rtol=1e-6, atol=1e-6 * np.abs(G0).max())


@needs_torch
@pytest.mark.parametrize("case", list(SPIED))
def test_the_fit_moves_no_data_sized_array_to_the_host(monkeypatch, case):
    """Every conversion of a tensor to NumPy during ``fit`` and ``transform`` is recorded:
    apart from the n targets, none may have more rows than a median's sample or more entries
    than d×d otherwise (sampled rows, and landmarks, as past the defaults' switches)."""
    import torch

    rng = np.random.default_rng(1)
    X = rng.standard_normal((5000, 5)) * np.linspace(2.0, 0.5, 5)
    y = np.sin(X[:, 0] + X[:, 1]) + 0.05 * rng.standard_normal(5000)
    Xt = torch.as_tensor(X)
    seen = host_copies(monkeypatch)
    with sklearn.config_context(array_api_dispatch=True):
        if case == "KernelSDR":
            est = SPIED[case]().fit(Xt, torch.as_tensor(y))
        else:
            est = SPIED[case]().fit(Xt)
        Z = est.transform(Xt)
    assert isinstance(Z, torch.Tensor) and isinstance(est.result_.M, torch.Tensor)
    big = [s for s in seen if s != (len(y),) and (
        max(s, default=0) > MEDIAN_ROWS or (int(np.prod(s)) > 5 * 5 and s != (MEDIAN_ROWS, 5)))]
    assert not big, f"data-sized arrays moved to the host: {big}"
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == tuple(X.shape)


@needs_torch
@pytest.mark.parametrize("case", list(CASES))
def test_without_dispatch_a_tensor_gives_numpy_as_before(data, case):
    import torch

    X, y = data
    make, needs_y, _ = CASES[case]
    ref = make().fit(*((X, y) if needs_y else (X,)))
    Xt = torch.as_tensor(X)
    est = make().fit(*((Xt, torch.as_tensor(y)) if needs_y else (Xt,)))
    Z = est.transform(Xt)
    assert isinstance(est.M_, np.ndarray) and isinstance(Z, np.ndarray)
    assert isinstance(est.result_.M, np.ndarray)  # the fit ran on the host, in NumPy
    np.testing.assert_array_equal(est.M_, ref.M_)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
@pytest.mark.parametrize("case", ["MDS", "KernelSDR", "LPP", "NPE"])
def test_cuda_tensors_are_fitted_on_the_gpu(data, case):
    import torch

    X, y = data
    make, needs_y, merit = CASES[case]
    Xc, yc = torch.as_tensor(X, device="cuda"), torch.as_tensor(y, device="cuda")
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(*((Xc, yc) if needs_y else (Xc,)))
        Z = est.transform(Xc)
    assert est.result_.M.is_cuda and est.M_.is_cuda and Z.is_cuda
    ref = make().fit(*((X, y) if needs_y else (X,)))
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-7


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("namespace, device, dtype", list(array_api_check_combinations()))
@pytest.mark.parametrize("estimator", [MDS(2), KernelSDR(2), LPP(2), NPE(2)],
                         ids=lambda e: type(e).__name__)
def test_scikit_learns_array_api_check(estimator, namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input`` (values compared with NumPy's)."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input(type(estimator).__name__, estimator, namespace, device_name=device,
                          dtype_name=dtype, check_values=True)
