"""The four HSIC paradigms as scikit-learn estimators, on the papers' qualitative results."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import normalized_mutual_info_score as nmi
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_estimator

import ldr
from ldr.estimators import KDAC, SemiSupervisedHSIC, SupervisedHSIC, UnsupervisedHSIC
from ldr.estimators.hsic import largest_eigengap


@pytest.fixture(scope="module")
def wine():
    from sklearn.datasets import load_wine

    return load_wine(return_X_y=True)


def test_supervised_hsic_svm_accuracy_on_wine(wine):
    X, y = wine
    pipe = make_pipeline(SupervisedHSIC(n_components=4), SVC())
    scores = cross_val_score(pipe, X, y, cv=StratifiedKFold(10, shuffle=True, random_state=0))
    assert scores.mean() >= 0.93  # the ISM paper reports 95.0 ± 5.0


def test_supervised_hsic_is_deterministic_and_transforms(wine):
    X, y = wine
    a = SupervisedHSIC(n_components=3).fit(X, y)
    b = SupervisedHSIC(n_components=3).fit(X, y)
    np.testing.assert_array_equal(a.M_, b.M_)
    assert a.transform(X).shape == (178, 3) and a.result_.converged
    np.testing.assert_allclose(a.M_.T @ a.M_, np.eye(3), atol=1e-12)


def test_supervised_continuous_targets():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 6))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(120)
    est = SupervisedHSIC(n_components=2, y_kernel="gaussian").fit(X, y)
    # the relevant features dominate the learned subspace
    weight = np.linalg.norm(est.M_, axis=1)
    assert set(np.argsort(weight)[-2:]) == {0, 1}
    # with the default y_kernel="onehot" a continuous y was 120 one-sample "classes"; now it
    # is refused with the two kernels that take it (scikit-learn's "continuous" rule, as
    # OrthogonalLDA and NCA refuse it)
    for target in (y, np.column_stack([y, -y])):
        with pytest.raises(ValueError, match=r"^y: is continuous .*'continuous.*y_kernel="
                                             r"'linear' or y_kernel='gaussian'"):
            SupervisedHSIC(n_components=2).fit(X, target)
    # float labels that are whole numbers are classes, as for scikit-learn's classifiers
    labels = (y > np.median(y)).astype(float)
    assert SupervisedHSIC(n_components=2).fit(X, labels).classes_.tolist() == [0.0, 1.0]


def test_unsupervised_hsic_clusters_wine(wine):
    X, y = wine
    est = UnsupervisedHSIC(n_clusters=3, n_components=4, random_state=0)
    labels = est.fit_predict(X)
    assert nmi(y, labels) >= 0.8
    assert est.converged_ and len(est.history_) == est.n_outer_


def _spector():
    import statsmodels.datasets.spector as spector
    from sklearn.preprocessing import StandardScaler

    frame = spector.load_pandas().data
    return StandardScaler().fit_transform(frame.drop(columns=["GRADE"]).to_numpy(float))


def test_unsupervised_hsic_anderson_reaches_the_plain_alternations_fixed_point():
    """statsmodels' spector (32 × 3, 2 clusters): the plain alternation converges linearly
    (rate ≈ 0.7; 20 rounds leave a change above outer_tol 1e-6, a ConvergenceWarning); the
    Anderson-accelerated default converges in under half the plain alternation's rounds, to
    the same fixed point (the plain one run to convergence)."""
    X = _spector()
    with pytest.warns(ConvergenceWarning, match="max_outer=20"):
        UnsupervisedHSIC(n_clusters=2, acceleration=None, max_outer=20).fit(X)
    plain = UnsupervisedHSIC(n_clusters=2, acceleration=None, max_outer=200).fit(X)
    fast = UnsupervisedHSIC(n_clusters=2).fit(X)
    assert plain.converged_ and fast.converged_
    assert fast.n_outer_ <= plain.n_outer_ / 2
    assert fast.history_[-1]["u_change"] <= 1e-6
    assert fast.history_[-1]["cost"] == pytest.approx(plain.history_[-1]["cost"], rel=1e-6)
    P, Q = fast.M_ @ fast.M_.T, plain.M_ @ plain.M_.T
    assert np.linalg.norm(P - Q, 2) < 1e-4
    assert np.all(fast.U_ @ fast.U_.T == pytest.approx(plain.U_ @ plain.U_.T, abs=1e-4))
    with pytest.raises(ValueError, match="acceleration: expected 'anderson' or None"):
        UnsupervisedHSIC(n_clusters=2, acceleration="aitken").fit(X)


@pytest.mark.parametrize("given", ["parabola", "gaussian"])
def test_kdac_finds_the_alternative_view_of_the_moons(given):
    X, parab, gauss = ldr.datasets.make_moons4d(400, seed=0)
    existing, target = (parab, gauss) if given == "parabola" else (gauss, parab)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = KDAC(n_clusters=2, n_components=2, random_state=0).fit(X, existing)
    # given the parabola view, the alternation's U still moves after max_outer rounds while
    # the labels have settled (NMI below): the warning says so, and nothing else is warned
    assert all(issubclass(w.category, ConvergenceWarning) and "max_outer" in str(w.message)
               for w in caught)
    assert nmi(target, est.labels_) >= 0.9
    assert nmi(existing, est.labels_) <= 0.1


def test_semi_supervised_follows_the_experts():
    X, lx, ly = ldr.datasets.make_gaussian_clusters(40, noise_dims=2, seed=0)
    # experts score along the second coordinate: the clustering should follow it
    scores = ly + 0.1 * np.random.default_rng(0).standard_normal(len(ly))
    est = SemiSupervisedHSIC(n_clusters=2, n_components=1, mu=10.0, random_state=0)
    labels = est.fit_predict(X, scores)
    assert nmi(ly, labels) >= 0.9 and nmi(lx, labels) <= 0.1


def test_eigengap_selects_q():
    w = np.array([-5.0, -4.9, -4.8, -1.0, -0.9, 0.0])
    assert largest_eigengap(w) == 3
    X, y = ldr.datasets.load("wine")
    est = SupervisedHSIC(n_components="auto").fit(X, y)
    assert 1 <= est.n_components_ < 13 and est.eigengap_ > 0


def test_estimator_bad_input(wine):
    X, y = wine
    with pytest.raises(ValueError, match="n_components"):
        SupervisedHSIC(n_components=13).fit(X, y)
    with pytest.raises(ValueError, match="y: has 177 labels"):
        SupervisedHSIC().fit(X, y[:-1])
    with pytest.raises(ValueError, match="sigma"):
        SupervisedHSIC(sigma=0.0).fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        SupervisedHSIC().fit(X, np.zeros(178))
    with pytest.raises(ValueError, match="NaN"):
        X_nan = X.copy()
        X_nan[0, 0] = np.nan
        SupervisedHSIC().fit(X_nan, y)
    with pytest.raises(ValueError, match="lam"):
        KDAC(lam=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="n_clusters"):
        UnsupervisedHSIC(n_clusters=1).fit(X)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")  # array API check
def test_sklearn_estimator_checks():
    check_estimator(SupervisedHSIC(n_components=1))


def test_linear_y_kernel_on_string_labels_is_an_error_naming_y():
    # soak counterexample: y_kernel="linear" on categorical labels raised NumPy's "could not
    # convert string to float: 'c0'", naming nothing
    import pandas as pd

    X = np.random.default_rng(0).standard_normal((7, 2))
    y = pd.Categorical(["c0"] * 4 + ["c1"] * 3)
    with pytest.raises(ValueError) as err:
        SupervisedHSIC(1, y_kernel="linear").fit(X, y)
    assert err.value.param == "y" and "onehot" in str(err.value)


def test_a_smaller_budget_does_less_work_than_the_default_fit():
    # issue 25 item 4: max_iter set by the user bounds the whole W-step — ISM reaching it ends
    # the chain (no trust-region polish, whose every Hessian-vector product is a kernel pass);
    # the default budget is a per-stage cap, and a certified ISM skips the polish
    from sklearn.datasets import make_classification

    X, y = make_classification(300, 12, n_informative=6, n_redundant=0, n_classes=3,
                               random_state=0)
    default = SupervisedHSIC(4).fit(X, y).result_
    assert default.converged and "hvp" not in default.counts
    assert [(s.solver, s.n_iter) for s in default.stages][1] == ("trust-region", 0)
    with pytest.warns(ConvergenceWarning, match="trust-region not run"):
        short = SupervisedHSIC(4, max_iter=3).fit(X, y).result_
    assert [s.solver for s in short.stages] == ["ism"] and short.n_iter == 3
    assert short.budget == "max_iter" and "hvp" not in short.counts
    work = {k: short.counts.get(k, 0) for k in ("phi", "cost", "grad")}
    assert all(work[k] <= default.counts.get(k, 0) for k in work)
    # a budget large enough for the whole fit gives the default fit's answer
    full = SupervisedHSIC(4, max_iter=100).fit(X, y).result_
    assert full.converged and full.cost == pytest.approx(default.cost, rel=1e-12)


def test_n_kernel_features_and_its_deprecated_name(wine):
    """``n_kernel_features`` is the approximation's m (random features, landmarks); the former
    ``n_features`` gives the same fit for one release, with a FutureWarning, and a bad value
    is an error naming the parameter that was given."""
    X, y = wine
    new = SupervisedHSIC(3, approximation="nystroem", n_kernel_features=40).fit(X, y)
    assert new.objective_.n_features == 40
    with pytest.warns(FutureWarning, match="n_features.*n_kernel_features"):
        old = SupervisedHSIC(3, approximation="nystroem", n_features=40).fit(X, y)
    np.testing.assert_array_equal(old.M_, new.M_)
    with pytest.raises(ValueError, match="^n_kernel_features: must be a positive integer"):
        SupervisedHSIC(3, approximation="rff", n_kernel_features=0).fit(X, y)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="^n_features: must be"):
        UnsupervisedHSIC(3, approximation="rff", n_features=0).fit(X)


def test_the_fitted_map_is_the_standardized_projection(wine):
    """transform(X) = ((X − mean_) / scale_) M_, the base's (X − map_.shift) map_.matrix; the
    cost is the objective's at M_ on the standardized rows."""
    X, y = wine
    for est, args in ((SupervisedHSIC(3), (X, y)),
                      (UnsupervisedHSIC(3, n_clusters=3), (X,))):
        est.fit(*args)
        Xs = (X - X.mean(axis=0)) / X.std(axis=0)
        np.testing.assert_allclose(est.mean_, X.mean(axis=0), rtol=1e-14)
        np.testing.assert_allclose(est.transform(X), Xs @ est.M_, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(est.components_, est.M_.T)
        assert est.cost_ == pytest.approx(est.objective_.cost(est.M_), rel=1e-12)


def test_auto_n_components_is_the_eigengap_at_the_solution(wine):
    """n_components="auto": q* = argmax of Φ's eigengap (ISM+ Eq. 50) at the fitted point,
    and eigengap_ is that gap."""
    X, y = wine
    for est, args in ((SupervisedHSIC("auto"), (X, y)),
                      (UnsupervisedHSIC("auto", n_clusters=3, max_outer=5), (X,))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(*args)
        w = np.linalg.eigvalsh(est.objective_.phi(est.M_))
        q = est.n_components_
        assert est.M_.shape == (13, q) and largest_eigengap(w) == q
        assert est.eigengap_ == pytest.approx(w[q] - w[q - 1], rel=1e-10)


def test_clustering_counts_rounds_and_checks_its_settings(wine):
    X, y = wine
    with pytest.warns(ConvergenceWarning, match="max_outer=4") as caught:
        est = KDAC(2, n_clusters=3, max_outer=4).fit(X, y)
    assert caught[0].filename == __file__  # the warning points at the caller's fit
    assert est.n_iter_ == est.n_outer_ == len(est.history_)
    assert est.existing_classes_.tolist() == [0, 1, 2]
    for bad in ({"max_outer": 0}, {"outer_tol": -1.0}, {"spectral": "dense"},
                {"n_clusters": 2.5}):
        with pytest.raises(ValueError, match=f"^{next(iter(bad))}:"):
            UnsupervisedHSIC(2, **bad).fit(X)
    with pytest.raises(ValueError, match="^y: .*requires y"):
        KDAC(2).fit(X)
