"""Every solver on problems with a known optimum, and against pymanopt."""

import numpy as np
import pymanopt
import pytest

import ldr
from ldr.objectives import LDA, PCA
from ldr.solvers import LBFGS, ConjugateGradient, GradientDescent, Pymanopt, TrustRegion

SOLVERS = {
    "gradient": lambda: GradientDescent(),
    "gradient-armijo": lambda: GradientDescent(step="armijo"),
    "gradient-qr": lambda: GradientDescent(retraction="qr"),
    "conjugate-gradient": lambda: ConjugateGradient(),
    "lbfgs": lambda: LBFGS(),
    "trust-region": lambda: TrustRegion(),
    "trust-region-qr": lambda: TrustRegion(retraction="qr"),
    "pymanopt": lambda: Pymanopt(pymanopt.optimizers.TrustRegions(verbosity=0)),
}


@pytest.mark.parametrize("manifold", ["grassmann", "stiefel"])
@pytest.mark.parametrize("name", list(SOLVERS))
@pytest.mark.parametrize("seed", [0, 1])
def test_pca_every_solver_reaches_eigh_optimum_on_the_manifold(name, manifold, seed):
    X = ldr.datasets.make_pca(300, 15, seed=seed)
    obj = PCA(X, 4, manifold=manifold)
    f_star = -np.sum(np.linalg.eigvalsh(obj.C)[-4:])
    feasibility = []

    def watch(state):
        feasibility.append(np.linalg.norm(state.M.T @ state.M - np.eye(4)))

    # plain Armijo steps converge linearly at rate ~ 1 − gap/λ_max: give them the budget (CG's
    # line search is Armijo's too; on seed 1's tiny eigengap it needs ~700 iterations)
    max_iter = 20000 if name in ("gradient-armijo", "conjugate-gradient") else 1000
    res = ldr.solve(obj, SOLVERS[name](), start="random", random_state=seed + 10,
                    callback=watch,  # the solver's default tol: one it reaches
                    max_iter=max_iter)
    assert res.converged, res.reason
    assert abs(res.cost - f_star) <= 1e-8 * abs(f_star)
    assert max(feasibility) <= 1e-12
    assert len(feasibility) == len(res.trace)
    # trace is consistent with the result: the point returned is a traced iterate, the last one
    # or, at the rounding floor (rule 7), the one with the smallest gradient norm
    rows = np.flatnonzero(res.trace["cost"] == res.cost)
    assert rows.size and res.trace["grad_norm"][rows[-1]] == res.grad_norm
    if "rounding" not in res.reason:
        assert res.trace["cost"][-1] == res.cost
    else:
        assert res.grad_norm == np.min(res.trace["grad_norm"][res.trace["stage"] == 0])
    assert res.n_iter == res.trace["iteration"][-1]


def test_trust_region_converges_superlinearly_on_pca():
    X = ldr.datasets.make_pca(400, 30, seed=5)
    res = ldr.solve(PCA(X, 5), "trust-region", start="random", random_state=0, tol=1e-10)
    g = res.trace["grad_norm"]
    assert res.converged and res.n_iter < 25
    # the last accepted steps shrink the gradient much faster than linearly
    accepted = g[np.r_[True, np.diff(g) != 0]]
    assert accepted[-1] < 10 * accepted[-2] ** 1.5 or accepted[-2] < 1e-8


def test_lda_trust_region_never_below_heuristic_and_matches_pymanopt():
    for seed in range(20):
        X, y = ldr.datasets.make_lda(6, r=2, n_per_class=100, seed=seed)
        obj = LDA(X, y, 2)
        heur = obj.heuristic()
        ours = ldr.solve(obj, "trust-region", start=heur, tol=1e-10)
        assert ours.converged, ours.reason
        assert obj.ratio(ours.M) >= obj.ratio(heur) - 1e-12
        problem = ldr.solvers.pymanopt_adapter.pymanopt_problem(obj, backend="autograd")
        opt = pymanopt.optimizers.TrustRegions(verbosity=0, min_gradient_norm=1e-10)
        theirs = opt.run(problem, initial_point=heur)
        assert abs(ours.cost - theirs.cost) <= 1e-8 * abs(theirs.cost)
        assert ldr.manifolds.sin_largest_angle(ours.M, theirs.point) <= 1e-6


def test_lda_improves_on_the_heuristic_somewhere():
    # the survey's point: the eigenvector recipe is not the optimum of the quotient of traces
    gains = []
    for seed in range(5):
        X, y = ldr.datasets.make_lda(10, r=2, n_per_class=200, seed=seed)
        obj = LDA(X, y, 2)
        res = ldr.solve(obj, "trust-region", start="heuristic")
        gains.append((obj.ratio(res.M) - obj.ratio(obj.heuristic())) / obj.ratio(obj.heuristic()))
    assert min(gains) >= -1e-12
    assert max(gains) > 1e-3


def test_gradient_and_trust_region_agree_on_lda(lda_data):
    X, y = lda_data
    obj = LDA(X, y, 2)
    a = ldr.solve(obj, "trust-region", start="heuristic", tol=1e-9)
    b = ldr.solve(obj, "gradient", start="heuristic", tol=1e-9, max_iter=5000)
    assert a.converged and b.converged
    assert abs(a.cost - b.cost) <= 1e-10 * abs(a.cost)
    assert ldr.manifolds.sin_largest_angle(a.M, b.M) < 1e-5


def test_line_search_failure_is_reported_not_converged(pca_data):
    class WrongGradient(PCA):
        def egrad(self, M):
            return 2.0 * (self.C @ M)  # sign error: ascent direction

    res = ldr.solve(WrongGradient(pca_data, 3), "gradient", start="random", random_state=0)
    assert not res.converged
    assert "line search failed" in res.reason


def test_solver_options_are_validated():
    with pytest.raises(ValueError, match="retraction"):
        GradientDescent(retraction="cayley")
    with pytest.raises(ValueError, match="step"):
        GradientDescent(step="newton")
    with pytest.raises(ValueError, match="retraction"):
        TrustRegion(retraction="exp")
    with pytest.raises(ValueError, match="optimizer"):
        Pymanopt(optimizer="TrustRegions")


def test_conjugate_gradient_beats_steepest_descent_on_an_ill_conditioned_lda():
    """CG's directions carry curvature information: far fewer iterations than steepest descent
    with Armijo steps, to the same optimum (and the trust region's)."""
    X, y = ldr.datasets.make_lda(30, r=3, n_per_class=200, seed=7)
    obj = LDA(X, y, 3)
    cg = ldr.solve(obj, "conjugate-gradient", start="random", random_state=0)
    sd = ldr.solve(obj, GradientDescent(step="armijo"), start="random", random_state=0,
                   max_iter=20000)
    tr = ldr.solve(obj, "trust-region", start="random", random_state=0)
    assert cg.converged and sd.converged and tr.converged
    assert cg.cost == pytest.approx(tr.cost, rel=1e-12)
    assert cg.n_iter < sd.n_iter / 2
    assert max(cg.trace["beta"][1:]) > 0          # it did take conjugate steps


def test_conjugate_gradient_rejects_a_bad_restart_threshold():
    with pytest.raises(ValueError, match="orthogonality"):
        ConjugateGradient(orthogonality=0)
