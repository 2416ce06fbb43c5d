"""scikit-learn's array API convention for the pairwise estimators that fit wholly in the
input's namespace — MDS, KernelSDR, LPP, NPE, NCA and LargeMarginDML (run by
tests/test_array_api.py in a fresh interpreter with ``SCIPY_ARRAY_API=1``, which
scikit-learn's dispatch requires before SciPy is imported; collected alone, it skips).

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

NCA's strips of the n×n softmax and LargeMarginDML's strips of impostors (its target
neighbours searched on the device, class by class), their sampled batches (candidate
neighbours searched on the device, sampled columns) and their solvers run in the namespace
too: the fit equals NumPy's — the objective to 1e-9 and the metric LᵀL (L is defined up to
L → RL) to 1e-6 on the exact route, 1e-3 on the stochastic one, whose end the polish
certifies by the gradient rule only to ``tol`` — and the spy sees no data-sized array (n
rows or n·d entries) reach the host on the stochastic route past 1000 rows: the labels and
batch-sized arrays only.
"""

import importlib.util
import os
import warnings

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
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from ldr.data import arrays  # noqa: E402
from ldr.estimators import LPP, MDS, NCA, NPE, KernelSDR, LargeMarginDML  # noqa: E402
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


# --- NCA and LargeMarginDML: strips, sampled batches and solvers in the namespace -------------
#: (estimator, tolerance on the metric LᵀL, the merit compared): the exact route, and the
#: stochastic route (Adam on sampled batches, then the exact polish) past its switch
METRIC_CASES = {
    "NCA": (lambda: NCA(2), 1e-6, "objective_value_"),
    "NCA(stochastic)": (lambda: NCA(2, stochastic_above=100), 1e-3, "objective_value_"),
    "LargeMarginDML": (lambda: LargeMarginDML(2), 1e-6, "cost_"),
    "LargeMarginDML(stochastic)": (lambda: LargeMarginDML(2, stochastic_above=100), 1e-3,
                                   "cost_"),
}


@pytest.fixture(scope="module")
def classes():
    """Three overlapping classes (NCA's optimum is finite: no map separates them)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5)) * np.linspace(2.0, 0.5, 5)
    y = (X[:, 0] + X[:, 1] + rng.standard_normal(200) > 0).astype(int) + (X[:, 2] > 0.5)
    return X, y


def _metric(est):
    L = _host(est.components_)
    return L.T @ L


@pytest.mark.parametrize("case", list(METRIC_CASES))
@pytest.mark.parametrize("name", NAMESPACES)
def test_metric_learning_in_the_inputs_namespace_equals_numpys(classes, name, case):
    X, y = classes
    make, tol, merit = METRIC_CASES[case]
    Xa = _as(name, X)
    ref = make().fit(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(Xa, _as(name, y))
        Z = est.transform(Xa)
    for a in (est.M_, est.components_, Z, est.result_.M):
        assert array_api_compat.array_namespace(a) is array_api_compat.array_namespace(Xa)
    assert est.result_.converged and ref.result_.converged, est.result_.reason
    assert est.stochastic_ == ref.stochastic_ == case.endswith("(stochastic)")
    assert getattr(est, merit) == pytest.approx(getattr(ref, merit), rel=1e-9)
    A, B = _metric(est), _metric(ref)
    assert np.linalg.norm(A - B) <= tol * np.linalg.norm(B)


@needs_torch
@pytest.mark.parametrize("make", [NCA, LargeMarginDML], ids=lambda c: c.__name__)
def test_metric_learning_moves_no_data_sized_array_to_the_host(monkeypatch, make):
    """The stochastic route on 5000 rows (switch at 1000), the exact check and the polish:
    apart from the n labels, no conversion of a tensor to NumPy has n rows or n·d entries
    (the batches' neighbour lists, b×K, and d×d arrays do cross)."""
    import torch

    rng = np.random.default_rng(1)
    X = rng.standard_normal((5000, 5)) * np.linspace(2.0, 0.5, 5)
    y = (X[:, 0] + rng.standard_normal(5000) > 0).astype(int)
    Xt = torch.as_tensor(X)
    seen = host_copies(monkeypatch)
    with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # max_iter caps the polish
        est = make(2, stochastic_above=1000, max_iter=60).fit(Xt, torch.as_tensor(y))
        Z = est.transform(Xt)
    assert est.stochastic_
    assert isinstance(Z, torch.Tensor) and isinstance(est.result_.M, torch.Tensor)
    big = [s for s in seen if s != (len(y),) and (max(s, default=0) >= len(y)
                                                  or int(np.prod(s)) >= X.size)]
    assert not big, f"data-sized arrays moved to the host: {big}"
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == tuple(X.shape)


@needs_torch
@pytest.mark.parametrize("case", list(METRIC_CASES))
def test_metric_learning_without_dispatch_a_tensor_gives_numpy_as_before(classes, case):
    import torch

    X, y = classes
    make = METRIC_CASES[case][0]
    ref = make().fit(X, y)
    Xt = torch.as_tensor(X)
    est = make().fit(Xt, torch.as_tensor(y))
    Z = est.transform(Xt)
    assert isinstance(est.components_, np.ndarray) and isinstance(Z, np.ndarray)
    assert isinstance(est.result_.M, np.ndarray)  # the fit ran on the host, in NumPy
    np.testing.assert_array_equal(est.components_, ref.components_)


@needs_torch
def test_nca_warm_start_continues_from_a_fit_in_the_namespace(classes):
    """The second fit starts from the first's map, a tensor, and continues its trace: as
    NumPy's warm start."""
    X, y = classes
    Xt, yt = _as("torch", X), _as("torch", y)
    ref, est = NCA(2, max_iter=3, warm_start=True), NCA(2, max_iter=3, warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref.fit(X, y).fit(X, y)
        with sklearn.config_context(array_api_dispatch=True):
            est.fit(Xt, yt).fit(Xt, yt)
    assert est.n_iter_ == ref.n_iter_ == 6
    assert array_api_compat.is_torch_array(est.components_)
    # L up to the signs of its rows (LDA's start from the class scatters on the device,
    # scikit-learn's LDA on the host): the metric LᵀL
    np.testing.assert_allclose(_metric(est), _metric(ref), rtol=1e-8, atol=1e-10)


@needs_torch
@pytest.mark.parametrize("make", [NCA, LargeMarginDML], ids=lambda c: c.__name__)
def test_metric_learning_float32_tensors_give_float32_answers(classes, make):
    """A float32 tensor is fitted in float64 on its device (as NumPy's float32 rows are) and
    the fitted arrays and the transform are float32."""
    import torch

    X, y = classes
    X32 = X.astype(np.float32)
    ref = make(2).fit(X32, y)
    with sklearn.config_context(array_api_dispatch=True):
        est = make(2).fit(torch.as_tensor(X32), torch.as_tensor(y))
        Z = est.transform(torch.as_tensor(X32))
    assert Z.dtype == est.components_.dtype == torch.float32
    G, G0 = Z.double().numpy() @ Z.double().numpy().T, ref.transform(X32) @ ref.transform(X32).T
    np.testing.assert_allclose(G, G0, rtol=1e-4, atol=1e-4 * np.abs(G0).max())


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
@pytest.mark.parametrize("case", list(METRIC_CASES))
def test_metric_learning_cuda_tensors_are_fitted_on_the_gpu(classes, case):
    import torch

    X, y = classes
    make, tol, _ = METRIC_CASES[case]
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(torch.as_tensor(X, device="cuda"), torch.as_tensor(y, device="cuda"))
    assert est.result_.M.is_cuda and est.components_.is_cuda
    A, B = _metric(est), _metric(make().fit(X, y))
    assert np.linalg.norm(A - B) <= tol * np.linalg.norm(B)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("namespace, device, dtype", list(array_api_check_combinations()))
@pytest.mark.parametrize("estimator", [NCA(2), LargeMarginDML(2)],
                         ids=lambda e: type(e).__name__)
def test_scikit_learns_array_api_check_metric_learning(estimator, namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input`` (values compared with NumPy's)."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input(type(estimator).__name__, estimator, namespace, device_name=device,
                          dtype_name=dtype, check_values=True)
