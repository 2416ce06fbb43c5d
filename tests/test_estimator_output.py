"""What every estimator's output shares (ldr.estimators.base): float32 in → float32 out and
equal to the float64 answer to float32 precision; feature names, DataFrames and
``set_output``; ``n_components`` first, None = the natural maximum; ``ldr.estimators`` lazy."""

import inspect
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags

import ldr.estimators as est

TWO_VIEW = ("CCA", "OrthogonalCCA")
UNSUPERVISED = ("PCA", "MAF", "SFA", "MDS", "LPP", "NPE", "PPCA", "FactorAnalysis",
                "UnsupervisedHSIC", "WDAClustering", "UndercompleteICA")
REGRESSION = ("ReducedRankRegression",)  # fit(X, Y) with several targets, transform(X)
CLUSTERING = ("UnsupervisedHSIC", "SemiSupervisedHSIC", "KDAC", "WDAClustering")
SMALL = {"max_outer": 2, "max_iter": 30}  # the clustering alternations, kept short


def make(name: str, n_components):
    """An estimator of ``name`` with ``n_components`` (small budgets for the alternations)."""
    if name == "LinearDR":
        return est.LinearDR("LDA", n_components=n_components)
    cls = getattr(est, name)
    kwargs = SMALL if name in CLUSTERING else {}
    if name in ("UnsupervisedHSIC", "SemiSupervisedHSIC", "KDAC", "WDAClustering"):
        kwargs = {**kwargs, "n_clusters": 3}
    return cls(n_components, **kwargs)


@pytest.fixture(scope="module")
def data():
    """90 wine samples (every other row), 5 standardized features, 3 classes."""
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[::2, :5]
    return X, y[::2]


def fit_args(name, X, y):
    if name in TWO_VIEW or name in REGRESSION:
        return (X[:, :3], X[:, 3:] + 0.5 * X[:, :2])
    return (X,) if name in UNSUPERVISED else (X, y)


def float_arrays(estimator) -> dict:
    """The fitted float arrays (public attributes ending in ``_``; tuples flattened)."""
    out = {}
    for name, value in vars(estimator).items():
        if name.startswith("_") or not name.endswith("_"):
            continue
        parts = value if isinstance(value, tuple) else (value,)
        for i, v in enumerate(parts):
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                out[f"{name}[{i}]" if isinstance(value, tuple) else name] = v
    return out


ALL = sorted(est.__all__)


@pytest.mark.parametrize("name", ALL)
def test_preserves_dtype_tag_declared(name):
    assert get_tags(make(name, 1)).transformer_tags.preserves_dtype == ["float64", "float32"]


@pytest.mark.parametrize("name", ALL)
def test_float32_in_float32_out_equal_to_float64(name, data):
    """fit/transform on float32 X give float32 outputs and fitted arrays equal, to float32
    precision, to the float64 fit of the same values (the computation runs in float64)."""
    X, y = data
    args = fit_args(name, X, y)
    args32 = tuple(a if a is y else a.astype(np.float32) for a in args)
    args64 = tuple(a if a is y else a.astype(np.float64) for a in args32)  # the same values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short clustering budgets may not converge
        e64 = make(name, 2).fit(*args64)
        e32 = make(name, 2).fit(*args32)
        ft32 = make(name, 2).fit_transform(*args32)
    views = 2 if name in TWO_VIEW else 1
    Z64, Z32 = e64.transform(*args64[:views]), e32.transform(*args32[:views])
    if name not in TWO_VIEW:
        Z64, Z32, ft32 = (Z64,), (Z32,), (ft32,)
    for z64, z32, f32 in zip(Z64, Z32, ft32):
        assert z32.dtype == np.float32 and f32.dtype == np.float32 and z64.dtype == np.float64
        scale = np.abs(z64).max()
        np.testing.assert_allclose(z32, z64, rtol=0, atol=8 * np.finfo(np.float32).eps * scale)
        np.testing.assert_allclose(f32, z64, rtol=0, atol=8 * np.finfo(np.float32).eps * scale)
    fitted32, fitted64 = float_arrays(e32), float_arrays(e64)
    assert set(fitted32) == set(fitted64)
    assert ("x_weights_" if name in TWO_VIEW else "components_") in fitted32
    for key, value in fitted32.items():  # the same float64 computation, rounded at the end
        assert value.dtype == np.float32, key
        np.testing.assert_array_equal(value, fitted64[key].astype(np.float32), err_msg=key)
    # float64 and integer data stay float64
    assert Z64[0].dtype == np.float64 and all(v.dtype == np.float64 for v in fitted64.values())


@pytest.mark.parametrize("name", [n for n in ALL if n not in TWO_VIEW])
def test_feature_names_and_pandas_output_in_a_pipeline(name, data):
    X, y = data
    columns = [f"f{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=columns, index=np.arange(100, 100 + len(X)))
    pipe = Pipeline([("scale", StandardScaler()), ("dr", make(name, 2))])
    pipe.set_output(transform="pandas")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in REGRESSION:  # three targets, so that a rank-2 fit is a real constraint
            y = np.column_stack([y, y**2, X[:, 0] - X[:, 1]]).astype(float)
        Z = pipe.fit_transform(df) if name in UNSUPERVISED else pipe.fit_transform(df, y)
    expected = [f"{name.lower()}{i}" for i in range(2)]
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == expected
    assert list(Z.index) == list(df.index)
    assert list(pipe["dr"].feature_names_in_) == columns
    assert list(pipe.get_feature_names_out()) == expected
    np.testing.assert_allclose(Z.to_numpy(), pipe["dr"].transform(pipe["scale"].transform(df)))


@pytest.mark.parametrize("name", TWO_VIEW)
def test_two_view_feature_names_and_pandas_output(name, data):
    X, _ = data
    Xa, Xb = fit_args(name, X, None)
    df = pd.DataFrame(Xa, columns=["a", "b", "c"])
    e = getattr(est, name)(2).set_output(transform="pandas").fit(df, Xb)
    assert list(e.feature_names_in_) == ["a", "b", "c"]
    Z = e.transform(df)
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == [f"{name.lower()}0",
                                                               f"{name.lower()}1"]
    Xc, Yc = e.transform(df, Xb)  # the pair: X scores as a DataFrame, as scikit-learn's CCA
    np.testing.assert_allclose(Xc.to_numpy(), Z.to_numpy())
    assert Yc.shape == (len(Xa), 2)


# --- n_components: first, None = the natural maximum ----------------------------------------
@pytest.mark.parametrize("name", [n for n in ALL if n != "LinearDR"])
def test_n_components_is_the_first_argument(name):
    params = list(inspect.signature(getattr(est, name)).parameters.values())
    assert params[0].name == "n_components"
    if name in CLUSTERING:  # n_clusters moved behind it: keyword-only, so KDAC(2, 3) fails
        n_clusters = next(p for p in params if p.name == "n_clusters")
        assert n_clusters.kind == inspect.Parameter.KEYWORD_ONLY
        with pytest.raises(TypeError):
            getattr(est, name)(2, 3)


def test_kdac_first_positional_is_n_components():
    e = est.KDAC(3)
    assert e.n_components == 3 and e.n_clusters == 2


NATURAL_MAX = {  # d = 5 features (CCA: 3 and 2), 3 classes
    **{n: 4 for n in ALL if n not in ("PCA", "OrthogonalLDA", *TWO_VIEW)},
    "LinearDR": 2, "CCA": 2, "OrthogonalCCA": 2,
    "UndercompleteICA": 5,          # square ICA: as many sources as features
    "NCA": 5, "LargeMarginDML": 5,  # a full-rank metric
    "ReducedRankRegression": 2,     # min(n_features, n_targets): the rank constraint is void
    "WDAClustering": 2}             # n_clusters − 1: the directions 3 cluster means span


@pytest.mark.parametrize("name", sorted(NATURAL_MAX))
def test_n_components_none_is_the_natural_maximum(name, data):
    """The default is None: n_features − 1 (the largest proper subspace; every cost here is
    constant on the whole space), min(n_features, n_targets) for the two-view ones, and
    min(n_features, n_classes) − 1 for the generic estimator with LDA's objective."""
    X, y = data
    if name == "LinearDR":
        e = est.LinearDR("LDA")
    else:
        e = getattr(est, name)(**({**SMALL, "n_clusters": 3} if name in CLUSTERING else {}))
    assert e.n_components is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.fit(*fit_args(name, X, y))
    assert e.n_components_ == NATURAL_MAX[name]
    assert e.components_.shape[0] == NATURAL_MAX[name] if hasattr(e, "components_") else True


@pytest.mark.parametrize("name", ["MAF", "SupervisedHSIC", "KDAC", "WassersteinDA"])
def test_n_components_none_on_one_feature_is_a_clear_error(name):
    X = np.random.default_rng(0).standard_normal((30, 1))
    y = np.repeat([0, 1], 15)
    with pytest.raises(ValueError, match="n_components: .*n_features = 1 leaves"):
        getattr(est, name)().fit(X, y)


# --- ldr.estimators is a lazy attribute of ldr ----------------------------------------------
def test_import_ldr_does_not_import_the_estimators_until_asked():
    code = ("import sys, ldr\n"
            "assert 'ldr.estimators' not in sys.modules\n"
            "assert 'estimators' in ldr.__all__\n"
            "pca = ldr.estimators.PCA\n"
            "assert 'ldr.estimators' in sys.modules and pca.__name__ == 'PCA'\n"
            "try:\n"
            "    ldr.no_such_name\n"
            "except AttributeError as exc:\n"
            "    assert 'no_such_name' in str(exc)\n"
            "else:\n"
            "    raise SystemExit('no AttributeError')\n")
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
