"""The stochastic solvers (sgd, adam, svrg) and the sum-of-terms protocol (issue 25 item 2):
batches that add up to the full cost, answers within 1e-3 relative objective of the exact
solvers' (PCA against eigh, NCA against L-BFGS) with fixed seeds, and a driver that never
reports a stochastic run converged without its full-gradient check."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_blobs
from sklearn.preprocessing import StandardScaler

import ldr
from ldr.core.errors import ParameterError
from ldr.objectives import NCA, PCA
from ldr.solvers import SGD, SVRG, Adam, State
from ldr.solvers.stochastic import StochasticSolver

STOCHASTIC = ["sgd", "adam", "svrg"]


@pytest.fixture(scope="module")
def wine_pca():
    X = StandardScaler().fit_transform(load_wine(return_X_y=True)[0])
    return PCA(X, 3)


@pytest.fixture(scope="module")
def blobs_nca():
    X, y = make_blobs(n_samples=150, n_features=3, centers=2, cluster_std=2.0, random_state=1)
    return NCA(X, y, 1)


@pytest.mark.parametrize("which", ["pca", "nca"])
def test_batches_over_a_partition_add_up_to_the_full_cost_and_gradient(which, wine_pca,
                                                                       blobs_nca):
    obj = wine_pca if which == "pca" else blobs_nca
    rng = np.random.default_rng(0)
    M = obj.heuristic() + 0.2 * rng.standard_normal(obj.shape)
    if which == "pca":
        M = np.linalg.qr(M)[0]
    parts = np.array_split(rng.permutation(obj.n_terms), 7)
    cost = sum(obj.batch(M, idx)[0] for idx in parts)
    G = sum(obj.batch(M, idx)[1] for idx in parts)
    assert cost == pytest.approx(obj.cost(M), rel=1e-12)
    np.testing.assert_allclose(G, obj.egrad(M), rtol=1e-10, atol=1e-12 * np.abs(G).max())
    # one term's gradient against central differences of its cost (a wrong term formula that
    # still summed right would be caught here)
    idx = parts[0][:3]
    V = rng.standard_normal(obj.shape)
    h = 1e-6
    fd = (obj.batch(M + h * V, idx)[0] - obj.batch(M - h * V, idx)[0]) / (2 * h)
    assert np.sum(obj.batch(M, idx)[1] * V) == pytest.approx(fd, rel=1e-4, abs=1e-9)


@pytest.mark.parametrize("solver", STOCHASTIC)
def test_pca_answer_within_1e3_of_eigh(solver, wine_pca):
    best = wine_pca.cost(wine_pca.heuristic())  # eigh: the global optimum
    exact = ldr.solve(wine_pca, "trust-region", start="random", random_state=0)
    assert exact.cost == pytest.approx(best, rel=1e-10)
    res = ldr.solve(wine_pca, solver, start="random", random_state=0, max_iter=40)
    assert (res.cost - best) / abs(best) <= 1e-3
    assert res.counts["batch"] > 0 and res.counts["terms"] >= 40 * wine_pca.n_terms
    if solver == "svrg":  # variance reduced: converges, certified by the full gradient
        res = ldr.solve(wine_pca, solver, start="random", random_state=0, max_iter=200)
        assert res.converged and res.reason.startswith("gradient norm")
        assert res.cost == pytest.approx(best, rel=1e-12)
    else:  # the full gradient is far above 1e-8 relative: said so, not converged
        assert not res.converged and res.budget == "max_iter"
        assert res.reason.startswith("stochastic run ended (max_iter 40 reached")
        assert "above tol" in res.reason and res.trace[-1]["full_check"]
        assert res.grad_norm == pytest.approx(
            np.linalg.norm(wine_pca.egrad(res.M) - res.M @ (res.M.T @ wine_pca.egrad(res.M))),
            rel=1e-10)


@pytest.mark.parametrize("solver", STOCHASTIC)
def test_nca_answer_within_1e3_of_lbfgs(solver, blobs_nca):
    exact = ldr.solve(blobs_nca, "lbfgs", start="heuristic")
    assert exact.converged
    res = ldr.solve(blobs_nca, solver, start="heuristic", max_iter=30)
    assert (res.cost - exact.cost) / abs(exact.cost) <= 1e-3


def test_the_same_seed_gives_the_same_run(wine_pca):
    runs = [ldr.solve(wine_pca, SGD(random_state=s), start="random", random_state=0, max_iter=3)
            for s in (7, 7, 8)]
    np.testing.assert_array_equal(runs[0].M, runs[1].M)
    assert not np.allclose(runs[0].M, runs[2].M)


def test_a_loose_batch_tol_never_certifies_against_a_strict_full_tol(wine_pca):
    res = ldr.solve(wine_pca, SGD(batch_tol=0.5), start="random", random_state=0, tol=1e-12)
    assert res.reason.startswith("stochastic run ended (estimated gradient norm")
    assert "batch_tol" in res.reason and "above tol" in res.reason
    assert not res.converged and res.n_iter < 1000
    assert res.grad_norm > 1e-12 * res.grad_scale


class _Liar(StochasticSolver):
    """Reports an estimated gradient of 0 after one epoch without moving."""

    name = "liar"

    def step(self, problem, state):
        return State(M=state.M, cost=state.cost, egrad=state.egrad, grad=state.grad,
                     grad_norm=0.0, iteration=state.iteration + 1, exact=False)


def test_the_driver_certifies_only_on_the_full_gradient(wine_pca):
    res = ldr.solve(wine_pca, _Liar(), start="random", random_state=0)
    assert not res.converged
    assert res.reason.startswith("stochastic run ended (estimated gradient norm 0.000e+00")
    assert "above tol" in res.reason and res.grad_norm > 0.1
    # at the optimum the same lie is checked, and the full gradient confirms it
    ok = ldr.solve(wine_pca, _Liar(), start=wine_pca.heuristic())
    assert ok.converged or ok.reason.startswith("gradient norm")


def test_stochastic_solvers_in_a_chain_and_in_compare(wine_pca):
    # SGD to a loose batch tolerance, then the trust region from its (full-checked) point
    res = ldr.solve(wine_pca, [SGD(batch_tol=0.05), "trust-region"], start="random", random_state=0)
    assert [s.solver for s in res.stages] == ["sgd", "trust-region"]
    assert not res.stages[0].converged and "above tol" in res.stages[0].reason
    assert res.converged and res.reason.startswith("trust-region")
    # a budget set by the user ends the chain in the stochastic stage, after its full check
    short = ldr.solve(wine_pca, ["sgd", "trust-region"], start="random", random_state=0, max_iter=5)
    assert [s.solver for s in short.stages] == ["sgd"] and short.budget == "max_iter"
    assert "trust-region not run" in short.reason and "full gradient" in short.reason
    cmp = ldr.compare(wine_pca, ["svrg", "adam", "trust-region"], n_starts=1, max_iter=300,
                      certify=False, progress=False)
    costs = {row["solver"]: row["cost"] for row in cmp.rows}
    assert set(costs) == {"svrg", "adam", "trust-region"}
    assert abs(costs["svrg"] - costs["trust-region"]) <= 1e-9 * abs(costs["trust-region"])


@pytest.mark.parametrize("solver", STOCHASTIC)
def test_an_objective_without_batches_is_refused_naming_what_is_missing(solver, wine_pca):
    no_rows = PCA.from_covariance(wine_pca.C, 3)
    with pytest.raises(ParameterError, match=r"n_terms .*ldr.Objective.*'lbfgs'") as info:
        ldr.solve(no_rows, solver)
    assert info.value.param == "solver"
    plain = ldr.objective(lambda M: -np.trace(M.T @ wine_pca.C @ M), shape=(13, 3))
    with pytest.raises(ParameterError, match=r"n_terms .* and batch\(M, indices\)"):
        ldr.solve(plain, solver)


def test_pickled_pca_keeps_no_rows(wine_pca):
    again = pickle.loads(pickle.dumps(wine_pca))
    assert again.n_terms is None and "_rows" not in again.__dict__
    np.testing.assert_array_equal(again.C, wine_pca.C)


def test_bad_options_name_the_parameter():
    for make, param in ((lambda: SGD(batch_size=0), "batch_size"), (lambda: SGD(lr=-1), "lr"),
                        (lambda: SVRG(decay=-1), "decay"),
                        (lambda: Adam(betas=(0.9, 1.0)), "betas")):
        with pytest.raises(ParameterError) as info:
            make()
        assert info.value.param == param



class CountedPCA(PCA):
    """PCA's sum of terms, recording the batches done each time a solver refreshes its
    batches' candidates."""

    def batch(self, M, indices):
        self.batches_done = getattr(self, "batches_done", 0) + 1
        return super().batch(M, indices)

    def refresh_batches(self, M):
        self.told = getattr(self, "told", []) + [getattr(self, "batches_done", 0)]


@pytest.mark.parametrize("solver, decay, epochs", [
    (Adam, 1.0, [0, 1, 3, 7]),      # each time the step η₀/(1 + t) has halved
    (SGD, 3.0, [0, 1, 5]),          # shrunk by 1 + decay = 4: 1 + 3t = 1, 4, 16
    (Adam, 0.0, list(range(10))),   # a constant step: every epoch
])
def test_the_candidates_are_refreshed_each_time_the_step_shrinks_by_the_first_epochs_factor(
        solver, decay, epochs):
    X = StandardScaler().fit_transform(load_wine(return_X_y=True)[0])
    obj = CountedPCA(X, 3)
    ldr.solve(obj, solver(batch_size=60, decay=decay, max_epochs=10, batch_tol=1e-300),
              start="random", random_state=0, max_iter=10, tol=1e-300)
    per_epoch = -(-obj.n_terms // 60)
    assert obj.batches_done == 10 * per_epoch
    assert obj.told == [per_epoch * t for t in epochs]
