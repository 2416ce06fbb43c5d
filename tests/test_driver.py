import numpy as np
import pytest

import ldr
from ldr.objectives import LDA, PCA


def test_seed_makes_runs_deterministic(pca_data):
    obj = PCA(pca_data, 3)
    a = ldr.solve(obj, "gradient", start="random", random_state=7, max_iter=5)
    b = ldr.solve(obj, "gradient", start="random", random_state=7, max_iter=5)
    c = ldr.solve(obj, "gradient", start="random", random_state=8, max_iter=5)
    np.testing.assert_array_equal(a.M, b.M)
    assert not np.allclose(a.M, c.M)
    gen = np.random.default_rng(7)
    d = ldr.solve(obj, "gradient", start="random", random_state=gen, max_iter=5)
    np.testing.assert_array_equal(a.M, d.M)


def test_global_numpy_state_is_not_used(pca_data):
    obj = PCA(pca_data, 3)
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    ldr.solve(obj, "trust-region", start="random", random_state=1)
    ldr.check(obj)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


def test_start_points(pca_data):
    obj = PCA(pca_data, 3)
    res = ldr.solve(obj, "trust-region", start="heuristic")
    assert res.converged and res.n_iter == 0  # the heuristic is PCA's optimum
    M0 = ldr.manifolds.orthonormalize(np.random.default_rng(0).standard_normal((12, 3)))
    res = ldr.solve(obj, "gradient", start=M0, max_iter=1)
    assert res.trace["cost"][0] == pytest.approx(obj.cost(M0))
    with pytest.raises(ValueError, match="start"):
        ldr.solve(obj, start="eigen")
    with pytest.raises(ValueError, match="orthonormal"):
        ldr.solve(obj, start=np.ones((12, 3)))
    M0_copy = M0.copy()
    ldr.solve(obj, "gradient", start=M0, max_iter=3)
    np.testing.assert_array_equal(M0, M0_copy)


def test_budgets_stop_without_claiming_convergence(pca_data):
    obj = PCA(pca_data, 3)
    res = ldr.solve(obj, "gradient", start="random", random_state=0, max_iter=2)
    assert not res.converged and "max_iter" in res.reason and res.n_iter == 2
    res = ldr.solve(obj, "gradient", start="random", random_state=0, max_time=0.0)
    assert not res.converged and "max_time" in res.reason


def test_callback_observes_and_stops(pca_data):
    obj = PCA(pca_data, 3)
    seen = []

    def cb(state):
        seen.append(state.cost)
        return len(seen) >= 3

    res = ldr.solve(obj, "gradient", start="random", random_state=0, callback=cb)
    assert len(seen) == 3 and res.reason == "stopped by callback" and not res.converged
    with pytest.raises(ValueError, match="callback"):
        ldr.solve(obj, callback=5)


def test_subspace_change_rule_and_ftol(pca_data):
    obj = PCA(pca_data, 3)
    # a loose xtol stops before the gradient meets the tolerance: stalled, with both numbers
    res = ldr.solve(obj, "gradient", start="random", random_state=0, tol=0, xtol=1e-4)
    assert not res.converged and res.reason.startswith("stalled: step")
    assert res.trace["change"][-1] <= 1e-4 and res.grad_norm > 1e-6 * res.grad_scale
    # a loose ftol stops far from a critical point: reported as stalled, not converged; with
    # tol=0 the stop is judged against the solver's default tol (1e-6 for gradient descent)
    res = ldr.solve(obj, "gradient", start="random", random_state=0, tol=0, xtol=0, ftol=1e-6)
    assert not res.converged and res.reason.startswith("stalled: relative cost change")
    assert res.grad_norm > 1e-6 * res.grad_scale
    res = ldr.solve(obj, "gradient", start="random", random_state=0, tol=0, xtol=0, ftol=1e-14)
    assert res.converged and "relative cost change" in res.reason
    assert res.grad_norm <= 1e-6 * res.grad_scale


def test_rejected_trust_region_steps_do_not_count_as_no_change(lda_data):
    X, y = lda_data
    obj = LDA(X, y, 2)
    res = ldr.solve(obj, "trust-region", start="random", random_state=3, tol=1e-12, xtol=1e-300)
    rejected = [row for row in res.trace if row.get("rho", 1.0) <= 0.1]
    for row in rejected:
        assert row["change"] == 0.0
    assert res.converged


def test_chain_starts_where_the_previous_stopped(pca_data):
    # the first stage stops on a rule of its own (a loose ftol: stalled, not converged), and
    # the second starts where it stopped
    obj = PCA(pca_data, 3)
    first = ldr.solve(obj, "gradient", start="random", random_state=0, ftol=1e-2)
    chained = ldr.solve(obj, ["gradient", "trust-region"], start="random", random_state=0,
                        ftol=1e-2)
    assert [s.solver for s in chained.stages] == ["gradient", "trust-region"]
    stage1 = chained.trace["stage"] == 1
    assert chained.trace["cost"][stage1][0] == pytest.approx(first.cost, rel=1e-14)
    assert chained.stages[0].n_iter == first.n_iter > 0
    done = ldr.solve(obj, ["gradient", "trust-region"], start="random", random_state=0,
                     max_iter=200,
                     tol=1e-9)
    # the gradient stage certifies: the reason is its own, named by it
    assert done.converged and done.reason.startswith("gradient: gradient norm")


def test_a_budget_reached_in_a_stage_ends_the_chain(pca_data):
    # max_iter bounds the whole run: reached in the first stage, the polish is not run (it
    # used to run max_iter more iterations, each with many Hessian-vector products)
    obj = PCA(pca_data, 3)
    first = ldr.solve(obj, "gradient", start="random", random_state=0, max_iter=4)
    chained = ldr.solve(obj, ["gradient", "trust-region"], start="random", random_state=0,
                        max_iter=4)
    assert [s.solver for s in chained.stages] == ["gradient"]
    assert chained.n_iter == 4 and chained.cost == first.cost
    assert not chained.converged and chained.budget == "max_iter"
    assert "trust-region not run" in chained.reason
    assert "hvp" not in chained.counts


def test_a_stage_that_certifies_ends_the_chain_without_the_polish(pca_data):
    # one ISM step is exact on PCA: the gradient rule fires, and the trust region (which would
    # stop at its start) costs nothing — no cost or gradient evaluated for it
    obj = PCA(pca_data, 3)
    alone = ldr.solve(obj, "ism")
    chained = ldr.solve(obj, ["ism", "trust-region"])
    assert alone.converged and alone.reason.startswith("gradient norm")
    assert [(s.solver, s.n_iter, s.converged) for s in chained.stages][1] == (
        "trust-region", 0, True)
    assert chained.reason == f"ism: {alone.reason}"
    assert chained.counts == alone.counts and np.array_equal(chained.M, alone.M)
    assert set(chained.trace["stage"]) == {0}
    # a first stage that only stalled is still polished
    stalled = ldr.solve(obj, ["gradient", "trust-region"], start="random", random_state=0,
                        ftol=1e-2)
    assert stalled.stages[1].n_iter > 0 or stalled.trace["stage"][-1] == 1


def test_max_iter_counts_the_iterations_of_the_whole_run(pca_data):
    # max_iter bounds the iterations of every stage together; a stage that reaches it ends
    # the chain
    from ldr.solvers import GradientDescent

    class TwoSteps(GradientDescent):  # a first stage that ends, unconverged, after two steps
        def step(self, problem, state):
            new = super().step(problem, state)
            if new.iteration >= 2:
                new.stop_reason = "two steps taken"
            return new

    obj = PCA(pca_data, 3)
    free = ldr.solve(obj, [TwoSteps(), "trust-region"], start="random", random_state=0)
    assert free.converged and [s.n_iter for s in free.stages][0] == 2
    assert free.stages[1].n_iter >= 2
    res = ldr.solve(obj, [TwoSteps(), "trust-region"], start="random", random_state=0,
                    max_iter=3)
    assert [s.n_iter for s in res.stages] == [2, 1] and res.n_iter == 3
    assert not res.converged and res.budget == "max_iter"
    ended = ldr.solve(obj, [TwoSteps(), "trust-region"], start="random", random_state=0,
                      max_iter=1)
    assert [s.n_iter for s in ended.stages] == [1] and "trust-region not run" in ended.reason


def test_bad_solver_and_tolerances(pca_data):
    obj = PCA(pca_data, 3)
    with pytest.raises(ValueError, match="unknown name"):
        ldr.solve(obj, "newton")
    with pytest.raises(ValueError, match="empty"):
        ldr.solve(obj, [])
    with pytest.raises(ValueError, match="tol"):
        ldr.solve(obj, tol=-1)
    with pytest.raises(ValueError, match="max_iter"):
        ldr.solve(obj, max_iter=2.5)
    with pytest.raises(ValueError, match="ldr.Objective"):
        ldr.solve(lambda M: 0.0)


def test_result_reports_counts_and_certificate(pca_data):
    res = ldr.solve(PCA(pca_data, 3), "trust-region", start="random", random_state=0, certify=True)
    assert res.counts["cost"] > 0 and res.counts["hvp"] > 0
    assert res.certificate.is_local_min
    assert "converged" in repr(res)
    with pytest.raises(KeyError, match="columns"):
        res.trace["nonexistent"]


def _noisy_gradient_pca(noise: float):
    """PCA on Grassmann(6, 2) whose gradient carries a deterministic error of relative size
    ``noise`` (a floor no solver can go below, as rounding is on a real table)."""
    import autograd.numpy as anp

    C = np.diag([6.0, 5.0, 3.0, 2.0, 1.0, 0.5])

    def egrad(M):
        G = -2.0 * C @ M
        seed = int(np.frombuffer(np.round(M, 6).tobytes(), dtype=np.uint8).sum())
        E = np.random.default_rng(seed).standard_normal(M.shape)
        return G + noise * np.linalg.norm(G) * E / np.linalg.norm(E)

    return ldr.objective(lambda M: -anp.trace(M.T @ C @ M), shape=(6, 2),
                         manifold="grassmann", egrad=egrad,
                         ehvp=lambda M, V: -2.0 * C @ V)


def test_a_run_at_the_rounding_floor_stops_within_a_few_iterations():
    """A gradient that cannot fall below its floor: the trust region stops after
    floor_patience flat iterations with 'stalled at rounding level' and a certificate, not
    at max_iter; converged only when the floor lies within tol·scale."""
    obj = _noisy_gradient_pca(1e-6)
    tight = ldr.solve(obj, "trust-region", start="random", tol=1e-10)  # floor above tol
    assert tight.reason.startswith("stalled at rounding level") and not tight.converged
    assert tight.n_iter < 60 and tight.certificate is not None
    assert tight.certificate.psd  # a minimum: the floor, not the landscape, stopped it
    loose = ldr.solve(obj, "trust-region", start="random", tol=1e-5)  # floor within tol
    assert loose.converged and loose.n_iter < 60
    assert loose.reason.startswith(("stalled at rounding level", "gradient norm"))
    # the rule can be switched off: then the run goes on to its budget
    off = ldr.solve(obj, "trust-region", start="random", tol=1e-10, floor_patience=0,
                    max_iter=80)
    assert off.reason.startswith("max_iter 80 reached")
    with pytest.raises(ValueError, match="floor_patience: must be a non-negative integer"):
        ldr.solve(obj, floor_patience=-1)


@pytest.mark.parametrize("solver", ["trust-region", "gradient", "conjugate-gradient"])
def test_a_shape_that_does_not_fit_the_cost_names_shape(solver):
    """ldr.objective(cost, shape=(12, 2)) on 13-feature data: the first evaluation's NumPy
    matmul error (from inside autograd) becomes a ValueError about shape=, with the sizes."""
    import autograd.numpy as anp

    X = np.random.default_rng(0).standard_normal((50, 13))
    C = X.T @ X
    costs = [lambda M: -anp.trace(M.T @ C @ M), lambda M: -anp.sum((X @ M) ** 2)]
    for cost in costs:
        with pytest.raises(ValueError, match=r"^shape: \(12, 2\) does not match what the cost "
                           r"of FunctionObjective multiplies M by \(it meets a dimension of 13 "
                           r"where M has 12 rows\).*matmul.*shape=\(d, r\)") as info:
            ldr.solve(ldr.objective(cost, shape=(12, 2)), solver)
        assert info.value.param == "shape" and "matmul" in str(info.value.__cause__)
        assert ldr.solve(ldr.objective(cost, shape=(13, 2)), solver).converged
    # an error that is not about shapes is left as it is
    def broken(M):
        raise ValueError("the data are bad")
    with pytest.raises(ValueError, match="^the data are bad$"):
        ldr.solve(ldr.objective(broken, shape=(13, 2)), solver)


def test_a_chain_goes_on_after_a_stage_that_stalled(pca_data):
    # a first stage that stalled (a cost-change stop far from a critical point) hands its
    # point to the next stage, which goes on from it; the reason names that stage
    obj = PCA(pca_data, 3)
    stalled = dict(start="random", random_state=0, ftol=1e-2)
    first = ldr.solve(obj, "gradient", **stalled)
    chain = ldr.solve(obj, ["gradient", "trust-region"], **stalled)
    assert not first.converged and first.reason.startswith("stalled")
    assert chain.stages[0].n_iter == first.n_iter and chain.stages[1].n_iter > 0
    assert chain.reason.startswith("trust-region: ")
    assert chain.cost < first.cost and chain.grad_norm < first.grad_norm


def test_gradient_scale_includes_the_mean_slope_to_the_start():
    """On features over eight decades the gradient at the random reference point R is far
    below the cost's variation; the scale then takes the mean slope |f(R) − f(M₀)|/dist, a
    lower bound on the largest gradient along the geodesic, so that tol·scale stays above
    rounding; like the rest of the scale it does not change with the data's units."""
    from ldr.core.problem import Problem

    rng = np.random.default_rng(0)
    X = np.vstack([rng.uniform(-1, 1, (50, 3)), rng.uniform(-1, 1, (50, 3)) + [10, 0, 0]])
    X *= [1.0, 100.0, 10000.0]
    y = np.repeat([0, 1], 50)
    problem = Problem(LDA(X, y, 1))
    M0 = problem.objective.heuristic()
    f0 = problem.cost(M0)
    R = problem.manifold.random_point(np.random.default_rng(0))  # the reference point
    plain = problem.gradient_scale()
    slope = abs(problem.cost(R) - f0) / problem.manifold.dist(R, M0)
    assert slope > 1e3 * plain
    assert problem.gradient_scale(start=(M0, f0)) == pytest.approx(slope, rel=1e-12)
    scaled = Problem(LDA(3.0 * X, y, 1))  # a cost of degree 0: the same scale
    assert scaled.gradient_scale(start=(M0, scaled.cost(M0))) == pytest.approx(slope, rel=1e-9)
    res = ldr.solve(problem.objective)
    assert res.converged and res.grad_scale >= slope * (1 - 1e-12)
