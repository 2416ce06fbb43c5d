"""The HSIC clustering family's approximate W-step at scale (issue 25): the per-class sums of
class-score columns, the feature blocks kept between the two passes, and ISM's tolerances at
the approximate Φ's rounding floor — each the same answer as the plain route."""

import warnings

import dask.array as da
import numpy as np
import pytest
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

from ldr.core.errors import ParameterError
from ldr.estimators import SemiSupervisedHSIC, UnsupervisedHSIC
from ldr.estimators.hsic import APPROXIMATE_CYCLE_TOL, APPROXIMATE_XTOL, w_step_solve_args
from ldr.kernels.features import approximate_sums, grouped_columns, make_features
from ldr.manifolds import sin_largest_angle
from ldr.objectives.chunked_rows import ChunkedRows, RowBlocks
from ldr.objectives.hsic import HSIC, ApproximateHSIC
from ldr.solvers import ISM


def _factor(n=240, seed=0):
    """A SemiSupervisedHSIC-like Γ factor: 3 dense columns beside 4 centered class scores."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    W = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    labels = rng.integers(0, 4, n)
    Y = np.eye(4)[labels] / np.array([1.0, 2.0, 0.5, 1.5])
    F = np.column_stack([rng.standard_normal((n, 3)), Y - Y.mean(axis=0)])
    s = rng.uniform(-1.0, 1.0, F.shape[1]) / n**2
    return X, W, F, s


def test_grouped_columns_finds_the_class_scores_only():
    X, W, F, s = _factor()
    dense, grouped, gid, R = grouped_columns(F)
    np.testing.assert_array_equal(dense, [0, 1, 2])
    np.testing.assert_array_equal(grouped, [3, 4, 5, 6])
    np.testing.assert_array_equal(R[gid], F[:, 3:])          # F's score columns are E R
    assert grouped_columns(F[:, :3]) is None                  # nothing grouped
    assert grouped_columns(F[:, 3:]) is None                  # all grouped: Tiles' class Γ
    many = np.eye(10)[np.arange(F.shape[0]) % 10]           # 10 groups of 24 rows: n < 32·10
    assert grouped_columns(np.column_stack([F[:, :3], many])) is None


def test_grouped_columns_finds_groups_beyond_the_first_rows():
    """Rows sorted by class (the first rows hold one value of each score column): the groups
    are still every class, as the rows' distinct values say."""
    X, W, F, s = _factor(n=2000)
    F = F[np.lexsort(F[:, 3:].T)]
    dense, grouped, gid, R = grouped_columns(F)
    np.testing.assert_array_equal(grouped, [3, 4, 5, 6])
    np.testing.assert_array_equal(R[gid], F[:, 3:])
    assert R.shape[0] == np.unique(F[:, 3:], axis=0).shape[0] == 4


@pytest.mark.parametrize("approximation, m", [("nystroem", 40), ("rff", 40), ("nystroem", 10)])
def test_split_and_kept_blocks_give_the_dense_sums(approximation, m):
    """(Σ Γ⊙K̃, Xᵀ diag((Γ⊙K̃)1) X, Xᵀ(Γ⊙K̃)X) with K̃ = CACᵀ formed densely, against the
    blocked sums with and without the grouped columns and the kept feature blocks (with 10
    features of 5 columns, Γ's dense columns go 2 at a time through the first pass)."""
    X, W, F, s = _factor()
    n = X.shape[0]
    feats = make_features(approximation, 1.5, m, X, 0)
    features, A = feats.at(W)
    C = features(X)
    K = C @ (np.eye(C.shape[1]) if A is None else A) @ C.T
    GK = (F * s) @ F.T * K
    dense = (GK.sum(), X.T @ (GK.sum(axis=1)[:, None] * X), X.T @ GK @ X)
    split = grouped_columns(F)
    blocks = RowBlocks(X, 70)
    for sp, cache in [(None, 0), (split, 0), (split, C.nbytes / 2), (split, 2 * C.nbytes)]:
        got = approximate_sums(blocks, W, feats, (F, s), None, sp, cache_bytes=cache)
        for a, b in zip(got, dense):
            assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b))
    # the same sums over the chunks of a Dask array, standardized in the chunks' tasks
    mean = np.linspace(-1.0, 1.0, X.shape[1])
    scale = np.linspace(0.5, 2.0, X.shape[1])
    chunks = ChunkedRows(da.from_array(X * scale + mean, chunks=(90, -1)), mean, scale)
    got = approximate_sums(chunks, W, feats, (F, s), None, split, cache_bytes=C.nbytes)
    for a, b in zip(got, dense):
        assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b))
    # row weights w (KDAC's D^{-1/2}): Γ = diag(w) F S Fᵀ diag(w), the features scaled instead
    w = np.random.default_rng(1).uniform(0.5, 2.0, n)
    GK = w[:, None] * GK * w[None, :]
    dense = (GK.sum(), X.T @ (GK.sum(axis=1)[:, None] * X), X.T @ GK @ X)
    for sp, cache in [(None, 0), (split, 0), (split, C.nbytes / 2), (split, 2 * C.nbytes)]:
        got = approximate_sums(blocks, W, feats, (F, s), None, sp, cache_bytes=cache,
                               row_weight=w)
        for a, b in zip(got, dense):
            assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b))


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_weighted_factor_is_the_weighted_rows_factor(approximation):
    """Γ given as (F, s, w) is diag(w) F diag(s) Fᵀ diag(w): the same cost and Φ as (wF, s),
    approximate and exact, with its class columns summed per class."""
    X, W, F, s = _factor(n=400)
    w = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0])
    weighted = ApproximateHSIC(X, (F, s, w), 2, approximation=approximation, n_features=30)
    plain = ApproximateHSIC(X, (w[:, None] * F, s), 2, approximation=approximation,
                            n_features=30)
    assert weighted.cost(W) == pytest.approx(plain.cost(W), rel=1e-10)
    np.testing.assert_allclose(weighted.phi(W), plain.phi(W), rtol=0,
                               atol=1e-10 * np.abs(plain.phi(W)).max())
    exact = HSIC(X, (F, s, w), 2)
    assert exact.cost(W) == pytest.approx(HSIC(X, (w[:, None] * F, s), 2).cost(W), rel=1e-12)
    with pytest.raises(ParameterError, match="row weights"):
        HSIC(X, (F, s, w[:-1]), 2)


def test_w_step_tolerances_apply_to_the_default_approximate_solver_only():
    est = UnsupervisedHSIC(2, approximation="nystroem")
    solver, options = w_step_solve_args(est, True)
    assert isinstance(solver, ISM) and solver.cycle_tol == APPROXIMATE_CYCLE_TOL
    assert options["xtol"] == APPROXIMATE_XTOL
    est.set_params(solver_params={"xtol": 1e-12})
    assert w_step_solve_args(est, True)[1]["xtol"] == 1e-12
    assert w_step_solve_args(UnsupervisedHSIC(2, approximation="nystroem", solver="ism"),
                             True)[0] == "ism"
    solver, options = w_step_solve_args(UnsupervisedHSIC(2), False)
    assert solver is None and "xtol" not in options


@pytest.mark.parametrize("cls", [UnsupervisedHSIC, SemiSupervisedHSIC])
def test_approximate_clustering_answers_match_the_plain_route(cls):
    """The new route (grouped sums, kept blocks, ISM's tolerances at the rounding floor) against
    the per-column sums with ISM's and the driver's own tolerances: the same clusters."""
    X, y = make_classification(n_samples=800, n_features=12, n_informative=6, n_redundant=0,
                               n_classes=4, n_clusters_per_class=1, class_sep=2.0,
                               random_state=0)
    kw = dict(n_clusters=4, max_outer=3, approximation="nystroem", n_kernel_features=128,
              spectral="nystroem")
    args = (X,) if cls is UnsupervisedHSIC else (X, y)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the default W-step's solver and tolerances, named: so that both routes solve every
        # round's W-step (the default solver's rounds are one ISM step each until the
        # alternation settles, and max_outer=3 stops it before then)
        new = cls(2, solver=ISM(cycle_tol=APPROXIMATE_CYCLE_TOL),
                  solver_params={"xtol": APPROXIMATE_XTOL}, **kw).fit(*args)
        old = cls(2, solver=ISM(), solver_params={"xtol": 1e-10}, memory_budget=1e5,
                  **kw).fit(*args)
    assert sin_largest_angle(new.M_, old.M_) < 1e-6
    np.testing.assert_array_equal(new.labels_, old.labels_)


def test_wda_clustering_takes_mini_batches_past_the_exact_size():
    """batch_size="auto" is exact at these sizes (the answer is batch_size=None's); a forced
    mini-batch finds the same clusters of well-separated blobs."""
    from sklearn.datasets import make_blobs
    from sklearn.metrics import adjusted_rand_score

    from ldr.estimators import WDAClustering

    X, y = make_blobs(900, n_features=6, centers=3, cluster_std=1.5, random_state=0)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = WDAClustering(2, n_clusters=3, max_outer=4).fit(X)
        exact = WDAClustering(2, n_clusters=3, max_outer=4, batch_size=None).fit(X)
        batch = WDAClustering(2, n_clusters=3, max_outer=4, batch_size=60).fit(X)
    assert auto.batch_size_ is None and batch.batch_size_ == 60
    np.testing.assert_array_equal(auto.M_, exact.M_)
    assert adjusted_rand_score(y, exact.labels_) > 0.95
    assert adjusted_rand_score(exact.labels_, batch.labels_) > 0.95
