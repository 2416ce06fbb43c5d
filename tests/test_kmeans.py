"""k-means in the rows' namespace (ldr/estimators/kmeans.py): NumPy rows through
scikit-learn's KMeans, rows of another namespace through the array API Lloyd iteration from
greedy k-means++ seeds — the same partition where the clusters are separated, a local minimum
of the same quality where they are not, labels named by first appearance."""

import importlib.util

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from ldr.estimators.kmeans import centroids, first_seen, kmeans

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_STRICT = importlib.util.find_spec("array_api_strict") is not None
SPACES = [
    pytest.param("torch", marks=pytest.mark.skipif(not HAS_TORCH, reason="torch")),
    pytest.param("array_api_strict", marks=pytest.mark.skipif(not HAS_STRICT,
                                                              reason="array-api-strict")),
]


def _as(name, X):
    if name == "torch":
        import torch

        return torch.as_tensor(X)
    import array_api_strict as xs

    return xs.asarray(X)


def _inertia(X, labels, k):
    return float(np.sum((X - centroids(X, labels, k)[labels]) ** 2))


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(2000, 4, centers=5, cluster_std=1.0, random_state=0)[0]


def test_numpy_rows_are_scikit_learns_partition_named_by_first_appearance(blobs):
    labels = kmeans(blobs, 5, random_state=0)
    theirs = KMeans(5, n_init=10, random_state=0).fit_predict(blobs)
    assert adjusted_rand_score(labels, theirs) == 1.0
    first = [int(np.flatnonzero(labels == c)[0]) for c in range(5)]
    assert first == sorted(first) and labels[0] == 0


@pytest.mark.parametrize("name", SPACES)
def test_the_namespace_finds_the_separated_clusters_and_their_inertia(blobs, name):
    labels = kmeans(_as(name, blobs), 5, random_state=0)
    assert isinstance(labels, np.ndarray)
    np.testing.assert_array_equal(labels, kmeans(blobs, 5, random_state=0))
    inertia = KMeans(5, n_init=10, random_state=0).fit(blobs).inertia_
    assert _inertia(blobs, labels, 5) == pytest.approx(inertia, rel=1e-10)


@pytest.mark.parametrize("name", SPACES)
def test_on_overlapping_rows_a_local_minimum_of_the_same_quality(name):
    X = np.random.default_rng(0).standard_normal((1500, 3))
    ours = _inertia(X, kmeans(_as(name, X), 4, random_state=1), 4)
    theirs = KMeans(4, n_init=10, random_state=1).fit(X).inertia_
    assert ours <= 1.01 * theirs
    # near a fixed point of Lloyd's map (it stops at scikit-learn's tolerance on the centers'
    # shift): the rows are nearest their own cluster's mean, a few at the borders aside
    labels = kmeans(_as(name, X), 4, random_state=1)
    C = centroids(X, labels, 4)
    nearest = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(axis=2), axis=1)
    assert np.mean(nearest == labels) >= 0.99


@pytest.mark.parametrize("name", SPACES)
def test_from_given_centers_lloyds_fixed_point_is_scikit_learns(blobs, name):
    rng = np.random.default_rng(2)
    init = blobs[rng.choice(blobs.shape[0], 5, replace=False)]
    ours = kmeans(_as(name, blobs), 5, init=init)
    theirs = KMeans(5, init=init, n_init=1).fit_predict(blobs)
    assert adjusted_rand_score(ours, theirs) == 1.0


@pytest.mark.parametrize("name", SPACES)
def test_centroids_are_each_labels_mean_on_the_host(name):
    X = np.arange(12.0).reshape(6, 2)
    labels = np.array([0, 1, 0, 2, 1, 0])
    C = centroids(_as(name, X), labels, 4)
    assert isinstance(C, np.ndarray)
    np.testing.assert_allclose(C[:3], [X[[0, 2, 5]].mean(0), X[[1, 4]].mean(0), X[3]])
    assert np.all(np.isnan(C[3]))   # a label without rows


def test_first_seen_renames_by_first_row():
    np.testing.assert_array_equal(first_seen(np.array([2, 2, 0, 1, 0])), [0, 0, 1, 2, 1])
