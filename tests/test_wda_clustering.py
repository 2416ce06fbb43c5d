"""WDAClustering's guard against partitions that collapse into tiny clusters (issue 23).

The guard's cases run at reg = 1, the former absolute default, small against these data's
projected distances (the default "auto" starts at their within-cluster spread, where they do
not collapse: the last test).  On scikit-learn's digits the alternation used to converge to
one cluster of almost every sample and a few clusters of 1–18 (adjusted Rand index 0.0003
against k-means' 0.56): WDA at reg = 1 favours directions that isolate a few samples, and the
next k-means keeps them.  The cases below are digits subsets on which the code before the
guard collapsed (checked on main: ARI 0.21 and 0.52 where k-means reaches 0.80 and 0.79) and
a seeded set that is degenerate at reg = 1, where the fit must say so."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from ldr.core.errors import ParameterError
from ldr.estimators import WDAClustering
from ldr.estimators.wda_alternation import min_cluster_size, within_spread
from ldr.manifolds import sin_largest_angle


def _digits(n: int, k: int):
    """The first n digits of the classes 0, …, k − 1, constant pixels dropped, standardized."""
    X, y = load_digits(return_X_y=True)
    X, y = X[y < k][:n], y[y < k][:n]
    return StandardScaler().fit_transform(X[:, X.std(axis=0) > 0]), y


def _sizes(labels, k):
    return np.bincount(labels, minlength=k)


def test_the_guard_stops_a_collapse_and_says_so():
    """With ``adapt_reg=False`` (the default raises reg instead: the test after this one)."""
    X, y = _digits(250, 5)
    with pytest.warns(ConvergenceWarning, match="stopped the alternation at round 2") as rec:
        model = WDAClustering(n_clusters=5, reg=1.0, adapt_reg=False).fit(X)
    # the warning names the scale reg is small against: the mean squared distance between
    # the samples projected by WDA step 1 (the subspace a one-round fit returns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        step1 = WDAClustering(n_clusters=5, reg=1.0, max_outer=1, min_cluster_size=1,
                              adapt_reg=False).fit(X).M_
    spread = 2 * np.sum(np.var((X - X.mean(axis=0)) @ step1, axis=0))
    assert spread > 1 and f"by WDA step 1 ({spread:.3g})" in str(rec[0].message)
    n_min = model.min_cluster_size_
    assert n_min == 5  # p + 1 = 5 > ⌈0.03 · 250 / 5⌉ = 2
    assert model.stopped_at_ == 2 and not model.converged_ and model.n_outer_ == 2
    assert model.history_[0]["tiny_clusters"] == 0 and model.history_[1]["tiny_clusters"] > 0
    # round 2's collapse came from WDA step 1: the answer is the start (PCA), where k-means
    # found round 1's clusters
    assert model.step_result_ is None
    assert sin_largest_angle(model.M_, PCA(4).fit(X).components_.T) < 1e-8
    assert _sizes(model.labels_, 5).min() >= n_min and not model.degenerate_
    kmeans = adjusted_rand_score(y, KMeans(5, n_init=10, random_state=0).fit_predict(X))
    assert adjusted_rand_score(y, model.labels_) >= 0.6  # 0.21 before the guard
    assert kmeans >= 0.75
    # without the guard (min_cluster_size=1) the alternation collapses, as it did before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        off = WDAClustering(n_clusters=5, reg=1.0, min_cluster_size=1).fit(X)
    assert off.stopped_at_ is None and off.reg_ == 1.0
    assert _sizes(off.labels_, 5).min() < n_min
    assert adjusted_rand_score(y, off.labels_) < 0.5


def test_within_spread_is_the_mean_squared_distance_within_clusters():
    rng = np.random.default_rng(3)
    Z, labels = rng.standard_normal((40, 3)) * [1.0, 2.0, 0.5], rng.integers(0, 4, 40)
    pairs = sum(np.sum((Z[labels == c][:, None] - Z[labels == c][None]) ** 2) / np.sum(labels == c)
                for c in range(4)) / len(Z)
    assert within_spread(Z, labels) == pytest.approx(pairs, rel=1e-12)
    assert within_spread(3.0 * Z, labels) == pytest.approx(9.0 * pairs, rel=1e-12)


def test_a_collapse_raises_reg_to_the_within_cluster_spread():
    """The case above with the default ``adapt_reg=True``: round 2's collapse came from WDA
    step 1 at reg = 1, far below s, the mean squared distance between two samples of one of
    round 1's clusters in the start subspace (k-means' clusters in PCA's); reg becomes s, the
    step on round 1's clusters is made again, and the alternation converges, without a
    warning, at a higher adjusted Rand index than the guard's stop (0.687 against 0.657)."""
    X, y = _digits(250, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = WDAClustering(n_clusters=5, reg=1.0).fit(X)
    Z = (X - X.mean(axis=0)) @ PCA(4).fit(X).components_.T
    round1 = KMeans(5, n_init=10, random_state=0).fit(Z)
    s = 2.0 * round1.inertia_ / len(X)  # twice k-means' mean cost
    assert model.reg_ == pytest.approx(s, rel=1e-6) and s > 10
    assert model.converged_ and model.stopped_at_ is None and not model.degenerate_
    assert [h["reg_raised"] for h in model.history_[:2]] == [False, True]
    assert [h["reg"] for h in model.history_] == [1.0] + [model.reg_] * (model.n_outer_ - 1)
    assert model.history_[1]["tiny_clusters"] > 0  # the collapse that raised it
    assert adjusted_rand_score(y, model.labels_) >= 0.68
    for bad in (1, "yes", None):
        with pytest.raises(ParameterError, match="adapt_reg"):
            WDAClustering(n_clusters=5, adapt_reg=bad).fit(X)


def test_the_guard_still_stops_a_collapse_at_the_raised_reg():
    """Ten clusters of six digit classes: round 2 collapses at reg = 1, reg is raised to the
    within-cluster spread of round 1's clusters, and the step made again collapses them too
    (round 3): no larger reg is justified by that spread, so the guard stops and says so."""
    X, y = _digits(300, 6)
    with pytest.warns(ConvergenceWarning, match="stopped the alternation at round 3") as rec:
        model = WDAClustering(n_clusters=10, reg=1.0).fit(X)
    assert "reg was raised to" in str(rec[0].message)
    assert model.stopped_at_ == 3 and not model.converged_ and model.reg_ > 10
    assert model.history_[1]["reg_raised"] and model.history_[2]["reg"] is None
    assert np.isnan(model.history_[2]["ratio"])  # round 3 ran k-means only
    assert model.step_result_ is None  # round 1's clusters were found in the start
    assert sin_largest_angle(model.M_, PCA(9).fit(X).components_.T) < 1e-8


def test_the_guard_counts_tiny_clusters():
    """Eight clusters of six digit classes: k-means in the start subspace already isolates 4
    samples, WDA's step then makes five tiny clusters; the guard stops there (a rule that
    waited for a round without tiny clusters let the alternation go on to 291 of 300 samples
    in one cluster, ARI 0.001).  The returned partition keeps its cluster of 4, which k-means
    on the data isolates as well: the data's outliers, listed in ``tiny_clusters_`` but not a
    degenerate partition (the guard's warning says what went wrong).  ``adapt_reg=False``:
    by default reg is raised at round 2 and the fit converges (ARI 0.775) to a partition with
    a singleton cluster, which warns as degenerate."""
    X, y = _digits(300, 6)
    with pytest.warns(ConvergenceWarning) as record:
        model = WDAClustering(n_clusters=8, reg=1.0, adapt_reg=False).fit(X)
    messages = " ".join(str(w.message) for w in record)
    assert "stopped the alternation at round 2" in messages and "degenerate" not in messages
    assert model.min_cluster_size_ == 8  # p + 1
    assert model.stopped_at_ == 2
    assert 0 < model.history_[0]["tiny_clusters"] < model.history_[1]["tiny_clusters"]
    assert not model.degenerate_ and len(model.tiny_clusters_) == 1
    plain = KMeans(8, n_init=10, random_state=0).fit_predict(X)
    assert _sizes(plain, 8).min() < model.min_cluster_size_
    assert adjusted_rand_score(y, model.labels_) >= 0.7


def test_final_labels_avoid_tiny_clusters():
    """labels_: ten fresh k-means starts in M_ found a lower cost with two singleton clusters
    here (ARI 0.52 before); k-means from the alternation's last clusters has none."""
    X, y = _digits(200, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # converged, nothing degenerate
        model = WDAClustering(n_clusters=5).fit(X)
    assert model.converged_ and model.stopped_at_ is None and not model.degenerate_
    assert _sizes(model.labels_, 5).min() >= model.min_cluster_size_
    assert adjusted_rand_score(y, model.labels_) >= 0.75


def test_a_degenerate_partition_warns():
    """Three blobs in two of eight standardized features, the other six rare large spikes:
    PCA's first subspace is the spikes', and k-means there isolates a few samples from round 1
    on, so no round is clean (the guard has nothing to return); the final labels hold tiny
    clusters and the fit says so."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 60)
    centers = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    spikes = 8 * rng.standard_normal((180, 6)) * (rng.random((180, 6)) < 0.03)
    X = StandardScaler().fit_transform(np.column_stack([
        centers[y] + rng.standard_normal((180, 2)), spikes]))
    with pytest.warns(ConvergenceWarning, match="degenerate partition"):
        model = WDAClustering(n_clusters=3, reg=1.0).fit(X)
    sizes = _sizes(model.labels_, 3)
    assert model.degenerate_ and model.min_cluster_size_ == 3  # p + 1 = 3
    np.testing.assert_array_equal(model.tiny_clusters_, np.flatnonzero(sizes < 3))
    assert sizes.max() > 0.9 * len(X)  # genuinely degenerate: one cluster holds almost all
    assert adjusted_rand_score(y, model.labels_) < 0.05
    plain = KMeans(3, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, plain) > 0.4
    # k-means on the data has a cluster of 2 too, of other samples: the rule compares the
    # samples, not the count (a count would have excused this partition)
    mine = np.flatnonzero(model.labels_ == model.tiny_clusters_[0])
    theirs = [np.flatnonzero(plain == c) for c in range(3) if np.sum(plain == c) < 3]
    assert len(theirs) == len(model.tiny_clusters_) == 1
    assert set(theirs[0]) != set(mine)


def test_min_cluster_size_rule_and_bad_values():
    assert min_cluster_size("auto", 1797, 10, 9) == 10     # digits: p + 1
    assert min_cluster_size("auto", 3000, 5, 4) == 18      # ⌈0.03 · 600⌉
    assert min_cluster_size("auto", 72, 2, 1) == 2
    assert min_cluster_size("auto", 30, 3, 20) == 5        # at most half the mean size
    assert min_cluster_size("auto", 8, 4, 1) == 2          # never below 2
    assert min_cluster_size(7, 100, 3, 2) == 7
    X, _ = _digits(60, 3)
    for bad in (0, -1, 2.5, "big", True, None):
        with pytest.raises(ParameterError, match="min_cluster_size") as info:
            WDAClustering(n_clusters=3, min_cluster_size=bad).fit(X)
        assert info.value.param == "min_cluster_size"


def test_the_datas_own_outliers_are_no_degenerate_partition():
    """statsmodels' grunfeld (bench_real's grunfeld/firm): 220 firm-years, 11 firms.  General
    Motors' 1953 and 1954 (investment 1304 and 1487; the next largest 891) form a cluster of 2,
    below min_cluster_size = p + 1 = 4, for WDAClustering and for k-means on the data alike.
    The fit used to call that a degenerate partition (a ConvergenceWarning advising to compare
    with k-means, which gives the same); it lists the cluster in ``tiny_clusters_`` and does
    not warn."""
    sm = pytest.importorskip("statsmodels.datasets.grunfeld")
    frame = sm.load_pandas().data.dropna()
    X = StandardScaler().fit_transform(frame.drop(columns=["firm"]).to_numpy(dtype=float))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = WDAClustering(n_clusters=11).fit(X)
    assert model.converged_ and not model.degenerate_ and model.min_cluster_size_ == 4
    assert len(model.tiny_clusters_) == 1
    tiny = np.flatnonzero(model.labels_ == model.tiny_clusters_[0])
    assert frame["firm"].iloc[tiny].tolist() == ["General Motors"] * 2
    assert sorted(frame["year"].iloc[tiny].tolist()) == [1953, 1954]
    plain = KMeans(11, n_init=10, random_state=0).fit_predict(X)
    assert set(np.flatnonzero(plain == plain[tiny[0]])) == set(tiny)


@pytest.mark.parametrize("n,k", [(250, 5), (300, 6)])
def test_the_default_reg_follows_the_within_cluster_spread_and_does_not_collapse(n, k):
    """reg="auto": WassersteinDA's rule on round 1's clusters, (p/d) · s with s their mean
    squared distance between two samples of one cluster in the whole space; on the digits
    subsets that collapse at reg = 1 (above) the default converges without a tiny cluster."""
    X, y = _digits(n, k)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = WDAClustering(n_clusters=k).fit(X)
    Xc = X - X.mean(axis=0)
    round1 = KMeans(k, n_init=10, random_state=0).fit(Xc @ PCA(k - 1).fit(X).components_.T)
    expected = (k - 1) / X.shape[1] * within_spread(Xc, round1.labels_)
    assert model.history_[0]["reg"] == pytest.approx(expected, rel=1e-6)
    assert model.converged_ and model.stopped_at_ is None and not model.degenerate_
    assert _sizes(model.labels_, k).min() >= model.min_cluster_size_
    assert adjusted_rand_score(y, model.labels_) >= 0.6


def _three_groups(n=2400, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 6))
    X[:, 0] += 3.0 * y
    X[:, 1] += 2.0 * (y == 1)
    return X


def test_a_dask_array_is_clustered_from_its_chunks_on_a_cluster(monkeypatch, tmp_path, gathers):
    """Past n_clusters · EXACT_MAX_CLASS rows a Dask array (on a LocalCluster) or memmap
    stays out of memory: each round projects it and takes its cluster scatters over the
    chunks, each WDA step gathers only its batches' rows — the in-memory fit's subspace and
    labels, transform lazy; a small one is read whole."""
    distributed = pytest.importorskip("distributed")
    import dask.array as da

    import ldr.estimators.wda as wda_estimator
    import ldr.objectives.wda as wda_objective

    monkeypatch.setattr(wda_estimator, "EXACT_MAX_CLASS", 200)  # stay lazy past 600 rows
    X = _three_groups()
    gathered = gathers(wda_objective)
    settings = {"n_clusters": 3, "batch_size": 100, "max_outer": 4}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = WDAClustering(2, **settings).fit(X)
        assert not gathered  # in memory: nothing gathered
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster):
            lazy = WDAClustering(2, **settings).fit(da.from_array(X, chunks=300))
            Z = lazy.transform(da.from_array(X, chunks=300))
            assert isinstance(Z, da.Array)
            np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=1e-8, atol=1e-10)
        path = tmp_path / "x.npy"
        np.save(path, X)
        mapped = WDAClustering(2, **settings).fit(np.load(path, mmap_mode="r"))
        small = WDAClustering(2, n_clusters=3, max_outer=2).fit(
            da.from_array(X[:500], chunks=100))
        in_memory = WDAClustering(2, n_clusters=3, max_outer=2).fit(X[:500])
    steps = sum(row["p_change"] == row["p_change"] for row in lazy.history_)  # WDA steps
    assert len(gathered) == 2 * steps  # one gather a step, Dask and memmap
    assert max(k for _, k in gathered) <= 3 * 2 * 100 < X.shape[0]  # two batches a cluster
    for fit in (lazy, mapped):
        assert sin_largest_angle(fit.M_, ref.M_) < 1e-8
        np.testing.assert_array_equal(fit.labels_, ref.labels_)
        assert fit.n_outer_ == ref.n_outer_
    assert sin_largest_angle(small.M_, in_memory.M_) < 1e-10
    with pytest.raises(ValueError, match="in memory"):
        WDAClustering(2, batch_size=None).fit(da.from_array(X, chunks=300))
