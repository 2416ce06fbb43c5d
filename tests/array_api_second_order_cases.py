"""scikit-learn's array API convention for ldr's MAF, SFA, PPCA, FactorAnalysis, CCA and
OrthogonalCCA (run by tests/test_array_api.py in a fresh interpreter with
``SCIPY_ARRAY_API=1``, which scikit-learn's dispatch requires before SciPy is imported;
collected alone, it skips).

Under ``array_api_dispatch=True`` a PyTorch (CPU) or array-api-strict input is read in its
namespace — the one pass over the rows that gives the covariance and MAF's lagged or SFA's
difference products (:func:`ldr.data.statistics.chunk_moments`) — and gives the fitted
arrays and ``transform`` there, equal to the NumPy fit's: the subspace within 1e-10, the cost
to 1e-10, the matrices to 1e-10 (FactorAnalysis at tol=1e-12: its trust region stops as
close to the optimum as its tol, and statistics that differ by rounding may take another
path there).  The span reduction of singular data (MAF, SFA), PPCA's ``n_components=None`` on
rank-deficient data, FactorAnalysis's constant features and the two-view estimators' spans
(from the moments of the stacked views [X | Y]) run from the namespace's statistics too.  A
spy on PyTorch's conversions shows no data-sized array reaching the host during the fit.
Without the setting, a tensor in gives NumPy out, as before.
"""

import importlib.util
import os

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":
    pytest.skip("needs SCIPY_ARRAY_API=1 before SciPy is imported "
                "(tests/test_array_api.py runs this file so)",
                allow_module_level=True)

import array_api_compat  # noqa: E402
import sklearn  # noqa: E402
from _array_namespaces import (  # noqa: E402
    NAMESPACES,
    array_api_check_combinations,
    host_copies,
)
from _array_namespaces import as_namespace as _as  # noqa: E402

import ldr  # noqa: E402
from ldr.data import arrays  # noqa: E402
from ldr.estimators import (  # noqa: E402
    CCA,
    MAF,
    PPCA,
    SFA,
    FactorAnalysis,
    OrthogonalCCA,
    ReducedRankRegression,
)
from ldr.manifolds import sin_largest_angle  # noqa: E402

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")


def _series():
    return ldr.datasets.make_maf(300, 6, seed=0)


def _factors():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 6)) * 2
    return X + rng.standard_normal((300, 6)) * [0.5, 1.0, 1.5, 0.5, 1.0, 2.0]


def _collinear(X):
    """X with a seventh feature, the sum of two others: a singular covariance."""
    return np.column_stack([X, X[:, 0] + X[:, 1]])


def _constant(X):
    """X with a constant third feature."""
    return np.column_stack([X[:, :2], np.full(X.shape[0], 3.5), X[:, 2:]])


#: (estimator, its data, the fitted arrays compared, the tolerance on them)
CASES = {
    "MAF": (lambda: MAF(2), _series, ("M_", "components_", "mean_"), 1e-10),
    "MAF(lag=3, reg)": (lambda: MAF(2, lag=3, shrinkage=0.1), _series,
                        ("M_", "components_", "mean_"), 1e-10),
    "MAF(span)": (lambda: MAF(2), lambda: _collinear(_series()),
                  ("M_", "components_", "mean_", "subspace_"), 1e-10),
    "SFA": (lambda: SFA(2), _series, ("M_", "components_", "mean_"), 1e-10),
    "SFA(span)": (lambda: SFA(2), lambda: _collinear(_series()),
                  ("M_", "components_", "mean_", "subspace_"), 1e-10),
    "PPCA": (lambda: PPCA(2), _factors, ("M_", "components_", "mean_"), 1e-10),
    "PPCA(None, rank-deficient)": (lambda: PPCA(), lambda: _collinear(_factors()),
                                   ("components_", "mean_"), 1e-10),
    "PPCA(noise_variance)": (lambda: PPCA(2, noise_variance=0.5), _factors,
                             ("M_", "components_", "mean_"), 1e-10),
    # the trust region's answer is as accurate as its tol: statistics that differ by 1e-15
    # may take it along another path (12 iterations instead of 14) to a point 1e-7 away at
    # the default tol; at tol=1e-12 both fits are the optimum to 1e-11
    "FactorAnalysis": (lambda: FactorAnalysis(2, tol=1e-12), _factors,
                       ("M_", "components_", "mean_", "noise_variance_"), 1e-10),
    "FactorAnalysis(constant)": (lambda: FactorAnalysis(2, tol=1e-12),
                                 lambda: _constant(_factors()),
                                 ("M_", "components_", "mean_", "noise_variance_",
                                  "constant_features_"), 1e-10),
}


def _host(a):
    if isinstance(a, tuple):
        return tuple(_host(v) for v in a)
    return np.asarray(arrays.to_host(a))


def _same_space(a, ref):
    for v in (a if isinstance(a, tuple) else (a,)):
        assert array_api_compat.array_namespace(v) is array_api_compat.array_namespace(ref)
        assert array_api_compat.device(v) == array_api_compat.device(ref)


def _close(a, b, tol):
    if isinstance(b, tuple):
        for u, v in zip(a, b):
            _close(u, v, tol)
        return
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("case", list(CASES))
def test_the_fit_in_the_inputs_namespace_equals_numpys(name, case):
    make, data, attrs, tol = CASES[case]
    X = data()
    ref = make().fit(X)
    Xa = _as(name, X)
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(Xa)
        Z, Zfit = est.transform(Xa), make().fit_transform(Xa)
        extra = est.score_samples(Xa) if hasattr(est, "score_samples") else None
    assert est.n_components_ == ref.n_components_
    assert est.cost_ == pytest.approx(ref.cost_, rel=tol, abs=tol)
    for attr in attrs:
        value = getattr(est, attr)
        if getattr(ref, attr) is None:  # subspace_ of a non-singular fit
            assert value is None
            continue
        _same_space(value, Xa)
        _close(_host(value), getattr(ref, attr), tol)
    M, Mref = _host(est.M_), ref.M_
    if not isinstance(Mref, tuple) and case.startswith(("MAF", "SFA")):
        assert sin_largest_angle(M, Mref) <= tol
    for out, expected in ((Z, ref.transform(X)), (Zfit, ref.transform(X))):
        _same_space(out, Xa)
        _close(_host(out), expected, tol)
    if extra is not None:
        _same_space(extra, Xa)
        _close(_host(extra), ref.score_samples(X), tol)
        with sklearn.config_context(array_api_dispatch=True):
            assert est.score(Xa) == pytest.approx(ref.score(X), rel=tol)
    assert sklearn.base.clone(est).__sklearn_tags__().array_api_support


@needs_torch
@pytest.mark.parametrize("case", ["MAF", "SFA", "PPCA", "FactorAnalysis"])
def test_float32_tensors_give_float32_answers_as_numpys_float32_fit(case):
    import warnings

    import torch

    make, data, _, _ = CASES[case]
    if case == "FactorAnalysis":  # tol 1e-12 sits at the rounding floor of float32 data,
        make = lambda: FactorAnalysis(2, tol=1e-9)  # noqa: E731  # where paths differ
    X = data()
    ref, ref32 = make().fit(X), make().fit(X.astype(np.float32))
    X32 = torch.as_tensor(X, dtype=torch.float32)
    with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        est = make().fit(X32)
        Z = est.transform(X32)
    assert est.components_.dtype == Z.dtype == torch.float32
    # as NumPy's float32 fit (to its rounding); the data rounded to float32 move the answer
    # by about their rounding, 6e-8 relative
    np.testing.assert_allclose(Z.numpy(), ref32.transform(X.astype(np.float32)), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(Z.numpy(), ref.transform(X), rtol=1e-5, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("case", ["MAF(lag=3, reg)", "SFA(span)", "PPCA(None, rank-deficient)",
                                  "FactorAnalysis(constant)"])
def test_the_fit_moves_no_data_sized_array_to_the_host(case, monkeypatch):
    """Every conversion of a tensor to NumPy during the fit is recorded: none may have more
    entries than a d×d statistic or as many rows as the data (MAF's first and last δ rows
    are δ×d)."""
    import torch

    make, data, _, _ = CASES[case]
    X = data()
    n, d = X.shape
    Xt = torch.as_tensor(X)
    seen = host_copies(monkeypatch)
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(Xt)
        Z = est.transform(Xt)
    assert isinstance(est.components_, torch.Tensor) and isinstance(Z, torch.Tensor)
    big = [s for s in seen if int(np.prod(s)) > d * d or max(s, default=0) >= n]
    assert not big, f"arrays moved to the host in the fit: {big}"
    assert seen, "the fit brings its statistics to the host"
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == (n, d)


@needs_torch
@pytest.mark.parametrize("case", ["MAF", "SFA", "PPCA", "FactorAnalysis(constant)"])
def test_without_dispatch_a_tensor_gives_numpy_as_before(case):
    import torch

    make, data, attrs, _ = CASES[case]
    X = data()
    ref = make().fit(X)
    est = make().fit(torch.as_tensor(X))
    Z = est.transform(torch.as_tensor(X))
    assert isinstance(Z, np.ndarray)
    np.testing.assert_array_equal(Z, ref.transform(X))
    for attr in attrs:
        value, expected = getattr(est, attr), getattr(ref, attr)
        for v, e in zip(*((value, expected) if isinstance(expected, tuple)
                          else ((value,), (expected,)))):
            assert isinstance(v, np.ndarray)
            np.testing.assert_array_equal(v, e)


def _views(case):
    X, Y = ldr.datasets.make_cca(300, 6, seed=0)
    if case == "span":  # X with a collinear column, Y with a constant one
        return (np.column_stack([X, X[:, 0] + X[:, 1]]),
                np.column_stack([Y, np.full(len(Y), 2.0)]))
    return (X, Y[:, 0]) if case == "1-D y" else (X, Y)


TWO_VIEW = ("x_weights_", "y_weights_", "x_rotations_", "y_rotations_", "x_mean_", "y_mean_",
            "canonical_correlations_", "x_subspace_", "y_subspace_")


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("case", ["views", "span", "1-D y", "shrinkage"])
@pytest.mark.parametrize("cls", [CCA, OrthogonalCCA])
def test_two_view_fits_in_the_inputs_namespace_equal_numpys(cls, case, name):
    X, Y = _views(case)
    params = {"n_components": 1 if case == "1-D y" else 2,
              "shrinkage": 0.1 if case == "shrinkage" else 0.0}
    ref = cls(**params).fit(X, Y)
    Xa, Ya = _as(name, X), _as(name, Y)
    with sklearn.config_context(array_api_dispatch=True):
        est = cls(**params).fit(Xa, Ya)
        Xc, (Xc2, Yc) = est.transform(Xa), est.transform(Xa, Ya)
        Xf, Yf = cls(**params).fit_transform(Xa, Ya)
    assert est.cost_ == pytest.approx(ref.cost_, rel=1e-10, abs=1e-10)
    assert (est.x_subspace_ is None) == (case != "span")
    for attr in TWO_VIEW:
        if getattr(ref, attr) is None:
            assert getattr(est, attr) is None
            continue
        _same_space(getattr(est, attr), Xa)
        _close(_host(getattr(est, attr)), getattr(ref, attr), 1e-10)
    for m, mref in zip(est.M_, ref.M_):
        assert sin_largest_angle(_host(m), mref) <= 1e-10
    RX, RY = ref.transform(X, Y)
    for out, expected in ((Xc, RX), (Xc2, RX), (Yc, RY), (Xf, RX), (Yf, RY)):
        _same_space(out, Xa)
        _close(_host(out), expected, 1e-10)
    assert sklearn.base.clone(est).__sklearn_tags__().array_api_support


@needs_torch
@pytest.mark.parametrize("cls", [CCA, OrthogonalCCA])
def test_two_view_fits_move_no_data_sized_array_to_the_host(cls, monkeypatch):
    import torch

    X, Y = _views("span")
    n, d = X.shape[0], X.shape[1] + Y.shape[1]
    Xt, Yt = torch.as_tensor(X), torch.as_tensor(Y)
    seen = host_copies(monkeypatch)
    with sklearn.config_context(array_api_dispatch=True):
        est = cls(2).fit(Xt, Yt)
        Xc, Yc = est.transform(Xt, Yt)
    assert isinstance(Xc, torch.Tensor) and isinstance(Yc, torch.Tensor)
    big = [s for s in seen if int(np.prod(s)) > d * d or max(s, default=0) >= n]
    assert not big, f"arrays moved to the host in the fit: {big}"
    assert seen


@needs_torch
def test_a_second_view_of_another_namespace_joins_xs():
    import torch

    X, Y = _views("views")
    ref = CCA(2).fit(X, Y)
    with sklearn.config_context(array_api_dispatch=True):
        est = CCA(2).fit(torch.as_tensor(X), Y)  # y as NumPy: moved to X's namespace
        Xc, Yc = est.transform(torch.as_tensor(X), Y)
    assert isinstance(Yc, torch.Tensor) and isinstance(est.y_rotations_, torch.Tensor)
    _close(Yc.numpy(), ref.transform(X, Y)[1], 1e-10)


@needs_torch
@pytest.mark.parametrize("cls", [CCA, OrthogonalCCA])
def test_two_view_without_dispatch_tensors_give_numpy_as_before(cls):
    import torch

    X, Y = _views("views")
    ref = cls(2).fit(X, Y)
    est = cls(2).fit(torch.as_tensor(X), torch.as_tensor(Y))
    Xc, Yc = est.transform(torch.as_tensor(X), torch.as_tensor(Y))
    assert isinstance(Xc, np.ndarray) and isinstance(est.x_rotations_, np.ndarray)
    np.testing.assert_array_equal(Yc, ref.transform(X, Y)[1])


def test_a_lag_the_series_cannot_hold_is_refused_by_name():
    Xa = _as("array_api_strict", _series()[:5])
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="lag") as info:
            MAF(2, lag=4).fit(Xa)
        assert info.value.param == "lag"
        with pytest.raises(ValueError, match="lag"):
            MAF(2, lag=1.5).fit(Xa)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
@pytest.mark.parametrize("case", ["MAF", "SFA(span)", "PPCA", "FactorAnalysis(constant)"])
def test_cuda_tensors_give_cuda_answers(case):
    import torch

    make, data, _, _ = CASES[case]
    X = data()
    Xc = torch.as_tensor(X, device="cuda")
    with sklearn.config_context(array_api_dispatch=True):
        est = make().fit(Xc)
        Z = est.transform(Xc)
    assert est.components_.device.type == Z.device.type == "cuda"
    np.testing.assert_allclose(Z.cpu().numpy(), make().fit(X).transform(X), atol=1e-8)


@pytest.mark.parametrize("namespace, device, dtype",
                         list(array_api_check_combinations()))
@pytest.mark.parametrize("estimator", [MAF(2), MAF(2, lag=2), SFA(2), PPCA(2), CCA(1),
                                       OrthogonalCCA(1), ReducedRankRegression(),
                                       ReducedRankRegression(alpha=0.5)],
                         ids=["MAF", "MAF(lag=2)", "SFA", "PPCA", "CCA", "OrthogonalCCA",
                              "ReducedRankRegression", "ReducedRankRegression(alpha)"])
def test_scikit_learns_array_api_check(estimator, namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input`` (values compared with NumPy's).  Not for
    FactorAnalysis: on the check's data (30 samples, 10 features) two factors are a Heywood
    case — four noise variances go to 0 — and neither the NumPy fit nor the namespace's
    converges (ConvergenceWarning), so the two stop at different points; the cases above
    compare FactorAnalysis on data where it has a maximum."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input(type(estimator).__name__, estimator, namespace, device_name=device,
                          dtype_name=dtype, check_values=True)


def _regression(case):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 8))
    Y = X @ rng.standard_normal((8, 2)) @ rng.standard_normal((2, 5))
    Y = Y + rng.standard_normal((300, 5))
    if case == "collinear":  # a ninth input, the sum of two others (α = 0: minimum norm)
        X = np.column_stack([X, X[:, 0] + X[:, 1]])
    return (X, Y[:, 0]) if case == "1-D y" else (X, Y)


RRR = ("coef_", "intercept_", "components_", "y_loadings_", "mean_", "y_mean_")


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("case, params", [("outputs", {"n_components": 2}),
                                          ("outputs", {"n_components": 2, "alpha": 3.0}),
                                          ("outputs", {"n_components": 2,
                                                       "start": "heuristic"}),
                                          ("collinear", {"n_components": 2}),
                                          ("outputs", {}), ("1-D y", {})])
def test_reduced_rank_regression_in_the_inputs_namespace_equals_numpys(name, case, params):
    # the Grassmann program (r < n_targets) from the SVD statistics computed on the device,
    # and the closed form (r = n_targets, 1-D y)
    X, Y = _regression(case)
    ref = ReducedRankRegression(**params).fit(X, Y)
    Xa, Ya = _as(name, X), _as(name, Y)
    with sklearn.config_context(array_api_dispatch=True):
        est = ReducedRankRegression(**params).fit(Xa, Ya)
        Z, P = est.transform(Xa), est.predict(Xa)
        score = est.score(Xa, Ya)
    assert est.cost_ == pytest.approx(ref.cost_, rel=1e-10)
    assert est.n_iter_ == ref.n_iter_ and est.n_components_ == ref.n_components_
    for attr in RRR:
        value = getattr(est, attr)
        if isinstance(getattr(ref, attr), float):  # 1-D y's intercept
            assert value == pytest.approx(getattr(ref, attr), rel=1e-10)
            continue
        _same_space(value, Xa)
        _close(_host(value), getattr(ref, attr), 1e-9)
    for out, expected in ((Z, ref.transform(X)), (P, ref.predict(X))):
        _same_space(out, Xa)
        _close(_host(out), expected, 1e-9)
    assert score == pytest.approx(ref.score(X, Y), rel=1e-10)


@needs_torch
def test_reduced_rank_regression_moves_no_data_sized_array_to_the_host(monkeypatch):
    import torch

    X, Y = _regression("outputs")
    (n, p), q = X.shape, Y.shape[1]
    Xt, Yt = torch.as_tensor(X), torch.as_tensor(Y)
    seen = host_copies(monkeypatch)
    with sklearn.config_context(array_api_dispatch=True):
        est = ReducedRankRegression(2).fit(Xt, Yt)
        P = est.predict(Xt)
    assert isinstance(est.coef_, torch.Tensor) and isinstance(P, torch.Tensor)
    big = [s for s in seen if int(np.prod(s)) > p * max(p, q) or max(s, default=0) >= n]
    assert not big, f"arrays moved to the host in the fit: {big}"
    assert seen, "the fit brings its statistics to the host"
