"""scikit-learn's array API convention for ldr's PCA, OrthogonalLDA and SupervisedHSIC (run by
tests/test_array_api.py in a fresh interpreter with ``SCIPY_ARRAY_API=1``, which scikit-learn's
dispatch requires before SciPy is imported; collected alone, it skips).

For NumPy, array-api-strict and PyTorch on the CPU: under ``array_api_dispatch=True`` the
fitted arrays and every output are in the input's namespace, on its device, and equal the
NumPy fit's to 1e-10 (float64); float32 PyTorch data give float32 answers within 1e-5 of
them (the statistics are float64 on the device, the solve on the host, the answers rounded
at the end).  Without the setting, a tensor in gives NumPy out, as before.  scikit-learn's own
``check_array_api_input`` (values compared with NumPy's) runs here too for five variants of
the two estimators: ``tests/test_sklearn_parity.py``'s estimator checks can only skip it.

SupervisedHSIC's answer is a subspace found by eigenvectors (ISM's Φ₀, then its steps), whose
signs NumPy's and PyTorch's eigh choose differently: its basis is compared up to the
orthogonal Q = M_ᵀ M_numpy (transform · Q equals NumPy's transform), and scikit-learn's check
runs without its value comparison (on that check's two-class data the second direction is
weakly determined: the fits agree on the first).  A spy on PyTorch's conversions sees no float
array with n rows reach the host during its fit.
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
from _array_namespaces import array_api_check_combinations, host_copies  # noqa: E402

import ldr  # noqa: E402
from ldr.estimators import PCA, PPCA, FactorAnalysis, OrthogonalLDA, SupervisedHSIC  # noqa: E402
from ldr.kernels import Custom, Gaussian, Polynomial  # noqa: E402

NAMESPACES = ["array_api_strict",
              pytest.param("torch", marks=pytest.mark.skipif(
                  importlib.util.find_spec("torch") is None, reason="torch is not installed"))]


def _as(name, a, dtype=None):
    if name == "torch":
        import torch

        return torch.as_tensor(np.ascontiguousarray(a), dtype=dtype)
    xp = pytest.importorskip(name)
    return xp.asarray(a) if dtype is None else xp.asarray(a, dtype=dtype)


def _host(a):
    return np.asarray(a.cpu()) if hasattr(a, "cpu") else np.from_dlpack(a)


def _same_space(a, ref):
    assert array_api_compat.array_namespace(a) is array_api_compat.array_namespace(ref)
    assert array_api_compat.device(a) == array_api_compat.device(ref)


@pytest.fixture(scope="module")
def wine():
    X, y = ldr.datasets.load("wine")
    return X, y


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("whiten", [False, True])
def test_pca_answers_in_the_inputs_namespace_equal_to_numpys(wine, name, whiten):
    X, _ = wine
    ref = PCA(3, whiten=whiten).fit(X)
    Xa = _as(name, X)
    with sklearn.config_context(array_api_dispatch=True):
        est = PCA(3, whiten=whiten).fit(Xa)
        Z = est.transform(Xa)
        back = est.inverse_transform(Z)
        cov = est.get_covariance()
        ll = est.score_samples(Xa)
        assert est.score(Xa) == pytest.approx(ref.score(X), rel=1e-12)
    for attr in ("components_", "M_", "mean_", "explained_variance_",
                 "explained_variance_ratio_", "singular_values_"):
        value = getattr(est, attr)
        _same_space(value, Xa)
        np.testing.assert_allclose(_host(value), getattr(ref, attr), rtol=1e-10, atol=1e-10)
    assert isinstance(est.noise_variance_, float)
    for out, expected in ((Z, ref.transform(X)), (back, ref.inverse_transform(ref.transform(X))),
                          (cov, ref.get_covariance()), (ll, ref.score_samples(X))):
        _same_space(out, Xa)
        np.testing.assert_allclose(_host(out), expected, rtol=1e-10, atol=1e-10)
    assert sklearn.base.clone(est).__sklearn_tags__().array_api_support


@pytest.mark.parametrize("name", NAMESPACES)
def test_orthogonal_lda_answers_in_the_inputs_namespace_equal_to_numpys(wine, name):
    X, y = wine
    ref = OrthogonalLDA(2).fit(X, y)
    Xa, ya = _as(name, X), _as(name, y)
    with sklearn.config_context(array_api_dispatch=True):
        est = OrthogonalLDA(2).fit(Xa, ya)
        outputs = {"transform": est.transform(Xa), "decision_function": est.decision_function(Xa),
                   "predict": est.predict(Xa), "predict_proba": est.predict_proba(Xa),
                   "predict_log_proba": est.predict_log_proba(Xa)}
        # scikit-learn averages in the default float dtype (float32 for PyTorch)
        assert est.score(Xa, ya) == pytest.approx(ref.score(X, y), rel=1e-6)
    for attr in ("components_", "M_", "mean_", "coef_", "intercept_", "means_", "classes_",
                 "explained_variance_ratio_", "priors_"):
        value = getattr(est, attr)
        _same_space(value, Xa)
        np.testing.assert_allclose(_host(value), getattr(ref, attr), rtol=1e-10, atol=1e-10)
    assert est.ratio_ == pytest.approx(ref.ratio_, rel=1e-12)
    for method, out in outputs.items():
        _same_space(out, Xa)
        np.testing.assert_allclose(_host(out), getattr(ref, method)(X), rtol=1e-10, atol=1e-10)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_float32_torch_gives_float32_within_1e_5_of_the_float64_answer(wine):
    import torch

    X, y = wine
    ref = OrthogonalLDA(2).fit(X, y)
    X32 = torch.as_tensor(X, dtype=torch.float32)
    with sklearn.config_context(array_api_dispatch=True):
        est = OrthogonalLDA(2).fit(X32, torch.as_tensor(y))
        Z = est.transform(X32)
        pca = PCA(3).fit(X32)
    assert est.components_.dtype == Z.dtype == pca.components_.dtype == torch.float32
    # the data rounded to float32 move the answer by about their rounding, 6e-8 relative
    np.testing.assert_allclose(Z.numpy(), ref.transform(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pca.components_.numpy(), PCA(3).fit(X).components_, atol=1e-5)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_a_float32_fit_at_the_default_tol_converges_without_warning(wine):
    """The default tol (1e-8, float64's) defers to ldr.solve's precision-scaled default, so a
    float32 tensor fit ends converged, silently."""
    import warnings

    import torch

    X, y = wine
    with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        est = OrthogonalLDA(2).fit(torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y))
    assert est.result_.converged, est.result_.reason


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_without_dispatch_a_tensor_gives_numpy_as_before(wine):
    import torch

    X, y = wine
    est = OrthogonalLDA(2).fit(torch.as_tensor(X), torch.as_tensor(y))
    assert isinstance(est.components_, np.ndarray)
    assert isinstance(est.transform(torch.as_tensor(X)), np.ndarray)
    assert isinstance(PCA(2).fit(torch.as_tensor(X)).transform(torch.as_tensor(X)), np.ndarray)


@pytest.mark.gpu
@pytest.mark.skipif(importlib.util.find_spec("torch") is None
                    or not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_cuda_tensors_give_cuda_answers(wine):
    import torch

    X, y = wine
    Xc, yc = torch.as_tensor(X, device="cuda"), torch.as_tensor(y, device="cuda")
    with sklearn.config_context(array_api_dispatch=True):
        est = OrthogonalLDA(2).fit(Xc, yc)
        Z = est.transform(Xc)
        pred = est.predict(Xc)
    assert est.components_.device.type == Z.device.type == pred.device.type == "cuda"
    np.testing.assert_allclose(Z.cpu().numpy(), OrthogonalLDA(2).fit(X, y).transform(X),
                               atol=1e-10)


@pytest.mark.gpu
@pytest.mark.skipif(importlib.util.find_spec("torch") is None
                    or not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_supervised_hsic_fits_on_the_gpu(wine):
    import torch

    from ldr.manifolds import sin_largest_angle

    X, y = wine
    options = {"kernel": Gaussian() + 0.5 * Polynomial(2), "tol": 1e-10}
    ref = SupervisedHSIC(2, **options).fit(X, y)
    Xc = torch.as_tensor(X, device="cuda")
    with sklearn.config_context(array_api_dispatch=True):
        est = SupervisedHSIC(2, **options).fit(Xc, torch.as_tensor(y, device="cuda"))
        Z = est.transform(Xc)
    assert est.result_.M.device.type == est.M_.device.type == Z.device.type == "cuda"
    assert sin_largest_angle(est.M_.cpu().numpy(), ref.M_) <= 1e-10


@pytest.mark.parametrize("namespace, device, dtype",
                         list(array_api_check_combinations()))
@pytest.mark.parametrize("estimator", [PCA(2), PCA(2, whiten=True), PCA(n_components=0.9),
                                       OrthogonalLDA(), OrthogonalLDA(shrinkage=0.1)],
                         ids=["PCA(2)", "PCA(whiten)", "PCA(0.9)", "OrthogonalLDA",
                              "OrthogonalLDA(reg)"])
def test_scikit_learns_array_api_check(estimator, namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input`` (values compared with NumPy's), which
    ``tests/test_sklearn_parity.py`` can only skip: it needs ``SCIPY_ARRAY_API=1``."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input(type(estimator).__name__, estimator, namespace, device_name=device,
                          dtype_name=dtype, check_values=True)


#: tol = 1e-10: the NumPy and namespace fits stop within what their tolerance implies
HSIC_CASES = {"gaussian": {"tol": 1e-10},
              "G+P": {"kernel": Gaussian() + 0.5 * Polynomial(2), "tol": 1e-10},
              "polynomial, y_kernel linear": {"kernel": "polynomial", "y_kernel": "linear",
                                              "tol": 1e-10},
              # the approximate kernels' features (ISM, to its tolerances, Hessian-free)
              "nystroem": {"approximation": "nystroem", "n_kernel_features": 60},
              "rff": {"approximation": "rff", "n_kernel_features": 64}}
#: the cases whose W-step is ISM alone, stopped at its step tolerance: their subspaces agree to
#: what that tolerance implies
ISM_ONLY = ("nystroem", "rff")


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("case", list(HSIC_CASES))
def test_supervised_hsic_iterates_in_the_inputs_namespace(wine, name, case):
    """Built-in kernels: the W-step's iterates are in the input's namespace (``result_.M``),
    the fitted arrays and ``transform`` too, equal to NumPy's fit up to the basis (module
    docstring)."""
    from ldr.manifolds import sin_largest_angle

    X, y = wine
    ref = SupervisedHSIC(2, **HSIC_CASES[case]).fit(X, y)
    Xa = _as(name, X)
    with sklearn.config_context(array_api_dispatch=True):
        est = SupervisedHSIC(2, **HSIC_CASES[case]).fit(Xa, _as(name, y))
        Z = est.transform(Xa)
    _same_space(est.result_.M, Xa)                     # the solve ran in the namespace
    for attr in ("M_", "components_", "mean_", "scale_") + (("classes_",) if not case.endswith(
            "linear") else ()):
        _same_space(getattr(est, attr), Xa)
    for attr in ("mean_", "scale_") + (("classes_",) if not case.endswith("linear") else ()):
        np.testing.assert_allclose(_host(getattr(est, attr)), getattr(ref, attr), rtol=1e-12,
                                   atol=1e-14)
    tol = 1e-7 if case in ISM_ONLY else 1e-10
    assert est.result_.converged and est.result_.cost == pytest.approx(ref.result_.cost,
                                                                         rel=tol)
    M = _host(est.M_)
    assert sin_largest_angle(M, ref.M_) <= tol
    Q = M.T @ ref.M_
    np.testing.assert_allclose(Q.T @ Q, np.eye(2), atol=tol)
    _same_space(Z, Xa)
    np.testing.assert_allclose(_host(Z) @ Q, ref.transform(X), atol=10 * tol)
    np.testing.assert_allclose(_host(est.components_), M.T, rtol=0, atol=0)
    assert est.__sklearn_tags__().array_api_support


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("y_kernel", ["onehot", "linear"])
def test_supervised_hsic_moves_no_data_sized_array_to_the_host(wine, monkeypatch, y_kernel):
    """Every conversion of a tensor to NumPy during the fit is recorded: none is a float array
    with n rows (y, read on the host, is given as NumPy; d-vectors, d×q points and d×d
    matrices are small).  σ is given, NumPy's: its default, the median distance of a seeded
    sample of at most 2000 rows, reads all of wine's 178."""
    import torch

    from ldr.manifolds import sin_largest_angle

    X, y = wine
    ref = SupervisedHSIC(2, y_kernel=y_kernel, tol=1e-10).fit(X, y)
    Xt = torch.as_tensor(X)
    with sklearn.config_context(array_api_dispatch=True):
        seen = host_copies(monkeypatch, dtypes=True)
        est = SupervisedHSIC(2, y_kernel=y_kernel, tol=1e-10,
                             sigma=ref.kernel_.sigma).fit(Xt, y)
    assert not [(shape, dtype) for shape, dtype in seen
                if dtype.is_floating_point and X.shape[0] in shape], seen
    assert isinstance(est.result_.M, torch.Tensor)
    assert sin_largest_angle(est.M_.numpy(), ref.M_) <= 1e-8  # (to the solver's tolerance)
    torch.Tensor.numpy(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == (X.shape, torch.float64)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("options", [{"kernel": Custom(lambda b: 1.0 / (1.0 + b))},
                                     {"backend": "dask"}],
                         ids=["custom kernel", "dask backend"])
def test_supervised_hsic_without_namespace_code_fits_in_numpy_and_answers_there(wine, name,
                                                                                options):
    """A Custom kernel (autograd's f) or the Dask backend's block sums: the W-step runs in
    NumPy on a host copy of the standardized rows, the same run as NumPy's fit, and only the
    answers are converted."""
    X, y = wine
    ref = SupervisedHSIC(2, **options).fit(X, y)
    Xa = _as(name, X)
    with sklearn.config_context(array_api_dispatch=True):
        est = SupervisedHSIC(2, **options).fit(Xa, y)
        Z = est.transform(Xa)
    assert isinstance(est.result_.M, np.ndarray)
    for value, expected in ((est.M_, ref.M_), (Z, ref.transform(X))):
        _same_space(value, Xa)
        np.testing.assert_allclose(_host(value), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_supervised_hsic_float32_and_without_dispatch(wine):
    import torch

    X, y = wine
    ref = SupervisedHSIC(2).fit(X, y)
    X32 = torch.as_tensor(X, dtype=torch.float32)
    with sklearn.config_context(array_api_dispatch=True):
        est = SupervisedHSIC(2).fit(X32, torch.as_tensor(y))
        Z = est.transform(X32)
    assert est.M_.dtype == est.components_.dtype == Z.dtype == torch.float32
    Q = est.M_.double().numpy().T @ ref.M_
    np.testing.assert_allclose(Z.double().numpy() @ Q, ref.transform(X), atol=1e-4)
    plain = SupervisedHSIC(2).fit(torch.as_tensor(X), torch.as_tensor(y))
    assert isinstance(plain.M_, np.ndarray)
    assert isinstance(plain.transform(torch.as_tensor(X)), np.ndarray)


@pytest.mark.parametrize("namespace, device, dtype",
                         list(array_api_check_combinations()))
def test_scikit_learns_array_api_check_of_supervised_hsic(namespace, device, dtype):
    """``check_array_api_input`` for SupervisedHSIC: namespaces and devices of the fitted
    arrays and outputs (its values: module docstring)."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input("SupervisedHSIC", SupervisedHSIC(2), namespace, device_name=device,
                          dtype_name=dtype, check_values=False)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
@pytest.mark.parametrize("make, methods", [
    (lambda: PCA(2), ("transform", "inverse_transform", "score_samples")),
    (lambda: PPCA(2), ("transform", "score_samples")),
    (lambda: FactorAnalysis(2), ("transform", "score_samples")),
])
def test_every_method_refuses_another_namespace_than_the_fits(wine, make, methods):
    """scikit-learn's rule for every method that reads X, not only ``transform``: a NumPy
    array (or another namespace) given to an estimator fitted on a tensor is refused by
    name (``inverse_transform`` and ``score_samples`` used to convert it)."""
    X, _ = wine
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(_as("torch", X))
        for method in methods:
            arg = X if method != "inverse_transform" else np.zeros((3, 2))
            with pytest.raises(ValueError, match=rf"\.{method}\(\) must use the same"):
                getattr(est, method)(arg)
            good = _as("torch", arg)
            assert array_api_compat.is_torch_array(getattr(est, method)(good))
