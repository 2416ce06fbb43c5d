"""NCA and large-margin DML at large n: the sampled candidate batches
(``objectives/candidates.py``), the sampled stochastic start, and the estimators' stochastic
route past ``stochastic_above`` (``ldr.solvers.routes.stochastic_then_polish``) — exercised
at small n by lowering the threshold."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import ldr
import ldr.estimators as est
import ldr.solvers.routes as routes
from ldr.core.errors import ParameterError
from ldr.objectives import NCA, LargeMarginDML
from ldr.solvers import Adam


@pytest.fixture(scope="module")
def classes():
    X, y = make_classification(n_samples=1200, n_features=10, n_informative=5,
                               n_redundant=0, n_classes=4, n_clusters_per_class=1,
                               class_sep=1.5, random_state=3)
    return StandardScaler().fit_transform(X), y


def _objective(which, X, y):
    return NCA(X, y, 2) if which == "nca" else LargeMarginDML(X, y, 2)


def _point(obj):
    return 1.3 * obj.heuristic() + 0.1


@pytest.mark.parametrize("which", ["nca", "lmnn"])
def test_every_column_sampled_is_the_exact_term(which, wine):
    obj = _objective(which, *wine)
    M = _point(obj)
    parts = np.array_split(np.random.default_rng(0).permutation(obj.n_terms), 5)
    exact = [obj.batch(M, idx) for idx in parts]
    # the exact batches add up to the full cost and gradient
    assert sum(c for c, _ in exact) == pytest.approx(obj.cost(M), rel=1e-12)
    np.testing.assert_allclose(sum(G for _, G in exact), obj.egrad(M), rtol=1e-10,
                               atol=1e-12 * np.abs(obj.egrad(M)).max())
    obj.sample_batches(obj.n_terms, neighbours=7)  # m = n: (C1) is exact, neighbours or not
    for idx, (c, G) in zip(parts, exact):
        c2, G2 = obj.batch(M, idx)
        assert c2 == pytest.approx(c, rel=1e-12)
        np.testing.assert_allclose(G2, G, rtol=1e-10, atol=1e-12 * np.abs(G).max())


@pytest.mark.parametrize("which", ["nca", "lmnn"])
def test_sampled_batches_gradient_matches_finite_differences(which, wine):
    obj = _objective(which, *wine).sample_batches(40, neighbours=10, seed=3)
    M = _point(obj)
    idx = np.arange(0, obj.n_terms, 5)
    V = np.random.default_rng(1).standard_normal(M.shape)
    h = 1e-6
    fd = (obj.batch(M + h * V, idx)[0] - obj.batch(M - h * V, idx)[0]) / (2 * h)
    assert np.sum(obj.batch(M, idx)[1] * V) == pytest.approx(fd, rel=1e-5)
    # the same batch gets the same columns (SVRG's two passes, the power iteration)
    np.testing.assert_array_equal(obj.batch(M, idx)[1], obj.batch(M, idx)[1])


def test_lmnn_sampled_estimate_is_unbiased(wine):
    """LMNN's term is linear in the impostor sums: the mean over column draws is the exact
    cost and gradient (within 4 standard errors over 300 seeded draws)."""
    obj = _objective("lmnn", *wine)
    M = _point(obj)
    idx = np.arange(obj.n_terms)
    costs, grads = [], []
    for seed in range(300):
        c, G = obj.sample_batches(30, neighbours=5, seed=seed).batch(M, idx)
        costs.append(c)
        grads.append(G)
    costs, grads = np.array(costs), np.array(grads)
    err = costs.std() / np.sqrt(len(costs))
    assert abs(costs.mean() - obj.cost(M)) <= 4 * err and err < 0.02 * abs(obj.cost(M))
    gerr = grads.std(axis=0) / np.sqrt(len(grads))
    assert np.all(np.abs(grads.mean(axis=0) - obj.egrad(M)) <= 4 * gerr + 1e-12)


@pytest.mark.parametrize("Est", [est.NCA, est.LargeMarginDML])
def test_the_stochastic_route_is_taken_past_the_threshold(Est, classes):
    X, y = classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        exact = Est(2).fit(X, y)
        fast = Est(2, stochastic_above=1000).fit(X, y)
        again = Est(2, stochastic_above=1000).fit(X, y)
    # the exact route: L-BFGS (LMNN's chain adds the trust region where it ends uncertified)
    assert not exact.stochastic_ and exact.result_.solver.split(" → ")[0] == "lbfgs"
    assert fast.stochastic_ and fast.result_.solver == "adam → lbfgs"
    first = fast.result_.stages[0]
    assert first.solver == "adam" and "full gradient" in first.reason
    # seeded: the same fit twice gives the same map
    np.testing.assert_array_equal(fast.components_, again.components_)
    # the answer (evaluated exactly) is within the spread of two exact solvers of the exact
    # route's: NCA's Σ_i p_i a few samples of n = 1200 (0.25%), LMNN's cost 1e-3
    assert fast.cost_ == pytest.approx(fast.objective_.cost(fast.M_), rel=1e-12)
    assert (fast.cost_ - exact.cost_) / abs(exact.cost_) <= (2.5e-3 if Est is est.NCA
                                                               else 1e-3)


@pytest.mark.parametrize("tol", [1e-6, 0.5])
def test_without_polish_budget_the_full_gradient_check_decides_converged(classes, monkeypatch,
                                                                          tol):
    """At n where no exact iteration fits POLISH_PAIRS (n = 10⁵) the route is Adam alone: the
    driver's check is its one full evaluation, and the run is converged exactly when the full
    gradient at the answer, computed here again, meets tol · scale — at a tight tol and a
    loose one."""
    monkeypatch.setattr(routes, "POLISH_PAIRS", 1e5)
    X, y = classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = est.NCA(2, stochastic_above=1000, tol=tol).fit(X, y)
    res = model.result_
    assert res.solver == "adam" and res.counts["cost"] == 1 and res.counts["grad"] == 1
    assert res.trace[-1]["full_check"] and res.reason.startswith("stochastic run ended (")
    full = np.linalg.norm(model.objective_.egrad(model.M_))
    assert res.grad_norm == pytest.approx(full, rel=1e-10)
    assert res.converged == (full <= tol * res.grad_scale), (res.reason, full)
    assert ("above tol" in res.reason) == (not res.converged) and res.n_iter <= 20


@pytest.mark.parametrize("Est", [est.NCA, est.LargeMarginDML])
def test_past_the_check_budget_the_answer_is_returned_unchecked(classes, monkeypatch, Est):
    """Where one exact evaluation (n² pairs) exceeds CHECK_PAIRS (10¹⁰: n > 10⁵; lowered
    here) the route's Adam stage is not checked: no full cost or gradient is evaluated, the
    fit is not converged, and the reason and the warning say why."""
    monkeypatch.setattr(routes, "POLISH_PAIRS", 1e5)
    monkeypatch.setattr(routes, "CHECK_PAIRS", 1e6)
    X, y = classes
    with pytest.warns(ConvergenceWarning, match="the full gradient was not evaluated"):
        model = Est(2, stochastic_above=1000).fit(X, y)
    res = model.result_
    assert model.stochastic_ and res.solver == "adam" and not res.converged
    assert res.counts.get("cost", 0) == 0 and res.counts.get("grad", 0) == 0
    assert not any(t.get("full_check") for t in res.trace)
    assert res.reason.startswith("stochastic run ended (max_epochs")
    assert f"one exact evaluation at {len(y)} samples is n² = {len(y) ** 2:.1e} pairs" \
        in res.reason
    assert "CHECK_PAIRS" in res.reason
    # at or below the budget the check runs, as before
    assert routes.stochastic_then_polish(1000, max_epochs=5)[0].unchecked is None
    assert routes.stochastic_then_polish(100_000, max_epochs=5, check_pairs=1e10)[0] \
        .unchecked is None
    assert routes.stochastic_then_polish(100_001, max_epochs=5, check_pairs=1e10)[0] \
        .unchecked is not None


def test_polish_stops_after_its_budget_and_the_route_drops_it_past_the_pairs(wine):
    """``Polish(steps)`` is L-BFGS ended after ``steps`` iterations (not converged there,
    unless the gradient rule held); the stochastic route gets POLISH_PAIRS / n² of them, none
    once one exact iteration costs more."""
    obj = NCA(*wine, 2)
    res = ldr.solve(obj, routes.Polish(3), "heuristic")
    assert res.n_iter == 3 and not res.converged
    assert res.reason.startswith("polish budget of 3 exact L-BFGS iterations spent")
    full = ldr.solve(obj, "lbfgs", "heuristic", max_iter=3)
    np.testing.assert_array_equal(res.M, full.M)   # the same iterates as L-BFGS
    assert routes.polish_steps(20_000) == 10 and routes.polish_steps(70_000) == 0
    assert [s.name for s in routes.stochastic_then_polish(20_000, max_epochs=5)] == \
        ["adam", "lbfgs"]
    assert [s.name for s in routes.stochastic_then_polish(70_000, max_epochs=5)] == ["adam"]
    with pytest.raises(ParameterError) as info:
        routes.Polish(0)
    assert info.value.param == "steps"


def test_the_stochastic_route_says_when_the_full_gradient_misses_tol(classes):
    X, y = classes
    model = est.NCA(2, stochastic_above=1000, tol=1e-9).fit(X, y)
    res = model.result_
    assert model.stochastic_
    first = res.stages[0]   # the Adam stage: its exact check, not its estimates, decides
    assert first.reason.startswith("stochastic run ended (") and not first.converged
    assert "full gradient" in first.reason and "above tol" in first.reason
    # the exact polish then certifies, by the gradient rule on the full data
    assert res.converged and res.reason.startswith("lbfgs: gradient norm")
    assert res.grad_norm <= 1e-9 * res.grad_scale
    # the reported gradient norm is the exact one at the answer
    obj = model.objective_
    assert res.grad_norm == pytest.approx(np.linalg.norm(obj.egrad(model.M_)), rel=1e-10)


def test_sampled_start_makes_no_full_evaluation_before_the_check(classes):
    X, y = classes
    obj = NCA(X, y, 2).sample_batches(128, neighbours=8)
    res = ldr.solve(obj, Adam(batch_size=100, start_terms=300, max_epochs=2), "heuristic")
    assert res.counts["cost"] == 1 and res.counts["grad"] == 1   # the driver's check
    assert res.n_iter == 2 and "max_epochs 2 reached" in res.reason


def test_bad_threshold_names_the_parameter(wine):
    with pytest.raises(ParameterError) as info:
        est.NCA(2, stochastic_above=0).fit(*wine)
    assert info.value.param == "stochastic_above"
    with pytest.raises(ParameterError) as info:
        Adam(start_terms=0)
    assert info.value.param == "start_terms"
