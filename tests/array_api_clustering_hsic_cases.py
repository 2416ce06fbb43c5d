"""scikit-learn's array API convention for the clustering HSIC estimators — UnsupervisedHSIC,
SemiSupervisedHSIC and KDAC (run by tests/test_array_api.py in a fresh interpreter with
``SCIPY_ARRAY_API=1``, which scikit-learn's dispatch requires before SciPy is imported;
collected alone, it skips).

Under ``array_api_dispatch=True`` a PyTorch (CPU) or array-api-strict input with a built-in
kernel is fitted in its namespace: the standardization, each round's Γ factor, the W-step's
HSIC sums (exact, or the Nyström or random Fourier features') and iterates, the U-step — the
dense kernel matrix and its eigenvectors (that library's ``eigh``), or Nyström's landmarks
(k-means++ seeding with scikit-learn's draws) and passes over blocks of rows — and k-means on
the embedding.  The answers equal the NumPy fit's: the subspace ``M_`` and the embedding ``U_``
to 1e-8 and the cost to 1e-8 — as subspaces, both being eigenvectors whose signs NumPy's and
another library's ``eigh`` choose differently (scikit-learn's check runs without its value
comparison, as for SupervisedHSIC) — and the same labels: scikit-learn's KMeans (NumPy) and the
array API k-means (:mod:`ldr.estimators.kmeans`) draw the same seeds.  A spy on PyTorch's
conversions sees no float array with n rows reach the host during the fit.  The routes without
namespace code (a Custom kernel) fit on a host copy and answer in the namespace; without the
setting a tensor gives NumPy out, the same numbers as before.
"""

import os
import warnings

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":
    pytest.skip("needs SCIPY_ARRAY_API=1 before SciPy is imported (tests/test_array_api.py "
                "runs this file so)", allow_module_level=True)

import sklearn  # noqa: E402
from _array_namespaces import (  # noqa: E402
    HAS_TORCH,
    NAMESPACES,
    array_api_check_combinations,
    host_copies,
    labels_in,
    same_space,
)
from _array_namespaces import as_namespace as _as  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

import ldr  # noqa: E402
from ldr.data import arrays  # noqa: E402
from ldr.estimators import KDAC, SemiSupervisedHSIC, UnsupervisedHSIC  # noqa: E402
from ldr.kernels import Custom, Gaussian, Polynomial  # noqa: E402
from ldr.manifolds import sin_largest_angle  # noqa: E402

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")

#: (estimator, whether its fit reads y): alternations that converge on wine (KDAC's in 60
#: rounds with the existing clustering of the three cultivars)
CASES = {
    "UnsupervisedHSIC": (lambda **kw: UnsupervisedHSIC(2, n_clusters=3, **kw), False),
    "SemiSupervisedHSIC": (lambda **kw: SemiSupervisedHSIC(2, n_clusters=3, **kw), True),
    "KDAC": (lambda **kw: KDAC(2, n_clusters=2, max_outer=60, **kw), True),
    "UnsupervisedHSIC(G+P)": (lambda **kw: UnsupervisedHSIC(
        2, n_clusters=3, kernel=Gaussian() + 0.5 * Polynomial(2), **kw), False),
    # the Nyström U-step (the route past DENSE_MAX rows), its passes by blocks of 50 rows
    "KDAC(Nyström U-step)": (lambda **kw: KDAC(2, n_clusters=2, max_outer=60,
                                               spectral="nystroem", n_kernel_features=60,
                                               **kw), True),
    # and with the W-step's Nyström features (both: the default past DENSE_MAX rows)
    "SemiSupervisedHSIC(Nyström)": (lambda **kw: SemiSupervisedHSIC(
        2, n_clusters=3, spectral="nystroem", approximation="nystroem", n_kernel_features=60,
        **kw), True),
    "UnsupervisedHSIC(rff)": (lambda **kw: UnsupervisedHSIC(
        2, n_clusters=3, approximation="rff", n_kernel_features=64, **kw), False),
}


@pytest.fixture(scope="module")
def wine():
    return ldr.datasets.load("wine")


@pytest.fixture(autouse=True)
def nystroem_blocks(monkeypatch):
    """The Nyström U-step's passes by blocks of 50 rows (wine's 178 rows: four blocks, so
    that the blocks' sums and rows are merged)."""
    monkeypatch.setattr("ldr.estimators.hsic_alternation.BLOCK", 50)


def _host(a):
    return np.asarray(arrays.to_host(a), dtype=float)


def _same_clustering(est, ref):
    """The answers of a fit in a namespace against NumPy's (module docstring)."""
    assert est.converged_ and ref.converged_
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-8
    assert sin_largest_angle(_host(est.U_), ref.U_) <= 1e-8
    assert est.result_.cost == pytest.approx(ref.result_.cost, rel=1e-8)
    np.testing.assert_array_equal(arrays.to_host(est.labels_), ref.labels_)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("case", list(CASES))
def test_the_fit_in_the_inputs_namespace_equals_numpys(wine, name, case):
    make, needs_y = CASES[case]
    X, y = wine
    ref = make().fit(X, y if needs_y else None)
    Xa = _as(name, X)
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(Xa, labels_in(name, y) if needs_y else None)
        Z = est.transform(Xa)
        predicted = make().fit_predict(Xa, labels_in(name, y) if needs_y else None)
    same_space(est.result_.M, Xa)  # the W-steps ran in the namespace
    for value in (est.M_, est.components_, est.mean_, est.scale_, est.U_, est.labels_, Z,
                  predicted):
        same_space(value, Xa)
    _same_clustering(est, ref)
    np.testing.assert_array_equal(arrays.to_host(predicted), arrays.to_host(est.labels_))
    np.testing.assert_allclose(_host(est.mean_), ref.mean_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_host(est.scale_), ref.scale_, rtol=1e-12)
    Q = _host(est.M_).T @ ref.M_  # transform agrees up to the basis of the subspace
    np.testing.assert_allclose(_host(Z) @ Q, ref.transform(X), atol=1e-7)
    assert est.__sklearn_tags__().array_api_support


@needs_torch
@pytest.mark.parametrize("case", ["UnsupervisedHSIC", "SemiSupervisedHSIC", "KDAC",
                                  "KDAC(Nyström U-step)", "SemiSupervisedHSIC(Nyström)"])
def test_the_fit_moves_no_data_sized_array_to_the_host(wine, monkeypatch, case):
    """Every conversion of a tensor to NumPy during the fit is recorded: none is a float
    array with n rows (the labels are integers; Γ's weights s, the d×q bases and the d×d
    matrices are small).  σ is given, NumPy's: its default, the median distance of a seeded
    sample of at most ``MEDIAN_MAX_SAMPLES`` rows, reads all of wine's 178."""
    import torch

    make, needs_y = CASES[case]
    X, y = wine
    n = X.shape[0]
    ref = make().fit(X, y if needs_y else None)
    Xt = torch.as_tensor(X)
    with sklearn.config_context(array_api_dispatch=True):
        seen = host_copies(monkeypatch, dtypes=True)
        est = make(sigma=ref.kernel_.sigma).fit(Xt, torch.as_tensor(y) if needs_y else None)
    assert not [(shape, dtype) for shape, dtype in seen
                if dtype.is_floating_point and n in shape], seen
    _same_clustering(est, ref)
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == (X.shape, torch.float64)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("options", [{"kernel": Custom(lambda b: 1.0 / (1.0 + b)),
                                      "max_outer": 80}],
                         ids=["custom kernel"])
def test_routes_without_namespace_code_fit_on_a_host_copy(wine, name, options):
    """The same run as NumPy's on the standardized rows (computed in the namespace: equal to
    rounding), the answers in the namespace."""
    X, _ = wine
    ref = UnsupervisedHSIC(2, n_clusters=3, **options).fit(X)
    Xa = _as(name, X)
    with sklearn.config_context(array_api_dispatch=True):
        est = UnsupervisedHSIC(2, n_clusters=3, **options).fit(Xa)
        Z = est.transform(Xa)
    assert isinstance(est.result_.M, np.ndarray)
    for value in (est.M_, est.U_, est.labels_, Z):
        same_space(value, Xa)
    _same_clustering(est, ref)


@needs_torch
@pytest.mark.parametrize("case", ["UnsupervisedHSIC", "KDAC"])
def test_without_dispatch_a_tensor_gives_numpy_as_before(wine, case):
    import torch

    make, needs_y = CASES[case]
    X, y = wine
    ref = make().fit(X, y if needs_y else None)
    est = make().fit(torch.as_tensor(X), torch.as_tensor(y) if needs_y else None)
    for attr in ("M_", "U_", "labels_", "mean_"):
        assert isinstance(getattr(est, attr), np.ndarray)
        np.testing.assert_array_equal(getattr(est, attr), getattr(ref, attr))


@needs_torch
@pytest.mark.parametrize("case", ["UnsupervisedHSIC", "KDAC"])
def test_float32_tensors_give_float32_answers(wine, case):
    """The fit computes in float64 on the device (as NumPy's does for float32 rows); the
    fitted arrays and ``transform`` are float32."""
    import torch

    make, needs_y = CASES[case]
    X, y = wine
    X32 = X.astype(np.float32)
    ref = make().fit(X32, y if needs_y else None)
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(torch.as_tensor(X32), torch.as_tensor(y) if needs_y else None)
        Z = est.transform(torch.as_tensor(X32))
    assert est.M_.dtype == est.U_.dtype == est.components_.dtype == Z.dtype == torch.float32
    assert sin_largest_angle(_host(est.M_), ref.M_) <= 1e-6
    assert sin_largest_angle(_host(est.U_), ref.U_) <= 1e-6


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
@pytest.mark.parametrize("case", ["UnsupervisedHSIC", "KDAC"])
def test_cuda_tensors_are_fitted_on_the_gpu(wine, case):
    import torch

    make, needs_y = CASES[case]
    X, y = wine
    Xc = torch.as_tensor(X, device="cuda")
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(Xc, torch.as_tensor(y, device="cuda") if needs_y else None)
        Z = est.transform(Xc)
    assert est.result_.M.device.type == est.U_.device.type == Z.device.type == "cuda"
    _same_clustering(est, make().fit(X, y if needs_y else None))


@pytest.mark.parametrize("namespace, device, dtype", list(array_api_check_combinations()))
@pytest.mark.parametrize("estimator", [UnsupervisedHSIC(2), SemiSupervisedHSIC(2), KDAC(2)],
                         ids=lambda e: type(e).__name__)
def test_scikit_learns_array_api_check(estimator, namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input``: namespaces and devices of the fitted
    arrays and outputs (its values: module docstring)."""
    from sklearn.utils.estimator_checks import check_array_api_input

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_array_api_input(type(estimator).__name__, estimator, namespace,
                              device_name=device, dtype_name=dtype, check_values=False)
