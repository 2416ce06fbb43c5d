"""The papers' data generators (ldr.datasets) match what the papers say about their data.

Notebook 07 reproduces the papers' tables on these generators, so each test checks the
statistics the paper states: sizes, the number of clusters, which dimensions carry which
clustering, what is noise.
"""

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import normalized_mutual_info_score
from sklearn.neighbors import KNeighborsClassifier

import ldr
from ldr.core.errors import ParameterError
from ldr.data.datasets import (
    make_gaussian_clusters,
    make_moons4d,
    make_rotated_gaussian_clusters,
    make_wda,
)


def linear_accuracy(X, y):
    return LinearDiscriminantAnalysis().fit(X, y).score(X, y)


def test_wda_data_is_the_wda_papers_three_class_set():
    # Liu et al. §4.1 / Flamary et al.: 3 classes, not linearly separable, 2 discriminant
    # features and 8 dimensions of Gaussian noise
    X, y = make_wda(3000, seed=0)
    assert X.shape == (3000, 10)
    assert np.array_equal(np.bincount(y), [1000, 1000, 1000])
    radius = np.linalg.norm(X[:, :2], axis=1)
    for c in range(3):
        assert abs(np.median(radius[y == c]) - (c + 1)) < 0.05      # circles of radius 1, 2, 3
        assert np.linalg.norm(X[y == c, :2].mean(axis=0)) < 0.25    # class means coincide
    noise = X[:, 2:]
    assert np.abs(noise.mean(axis=0)).max() < 0.1                   # standard normal noise
    assert np.abs(noise.std(axis=0) - 1).max() < 0.06
    # not linearly separable, but separable in the two discriminant features
    assert linear_accuracy(X, y) < 0.5
    Xtest, ytest = make_wda(1000, seed=1)
    knn = KNeighborsClassifier(10).fit(X[:, :2], y)
    assert knn.score(Xtest[:, :2], ytest) > 0.97
    # the noise carries no class information
    knn_noise = KNeighborsClassifier(10).fit(noise, y)
    assert knn_noise.score(Xtest[:, 2:], ytest) < 0.45


def test_small_gaussian_sg_has_two_views_one_per_feature():
    # KDAC §4: four Gaussian clusters, 40 samples, two features; feature 2 gives the original
    # clustering, feature 1 the alternative
    X, labels_x, labels_y = make_gaussian_clusters(10, seed=0)
    assert X.shape == (40, 2)
    assert np.array_equal(np.bincount(2 * labels_x + labels_y), [10, 10, 10, 10])
    assert linear_accuracy(X[:, [1]], labels_y) == 1.0
    assert linear_accuracy(X[:, [0]], labels_x) == 1.0
    assert linear_accuracy(X[:, [1]], labels_x) < 0.8
    assert normalized_mutual_info_score(labels_x, labels_y) < 1e-12   # independent views


def test_large_gaussian_lg_clusters_reside_in_a_tilted_plane_of_3d():
    X, a, b = make_rotated_gaussian_clusters(1000, seed=0)
    assert X.shape == (1000, 4)
    assert np.array_equal(np.bincount(2 * a + b), [250, 250, 250, 250])
    means = np.array([X[(a == i) & (b == j), :3].mean(axis=0) for i in (0, 1) for j in (0, 1)])
    centered = means - means.mean(axis=0)
    s = np.linalg.svd(centered, compute_uv=False)
    assert s[2] < 0.05 * s[1]                                  # the means span a plane...
    basis = np.linalg.svd(centered)[2][:2].T
    tilted = np.array([0.0, np.cos(np.pi / 4), np.sin(np.pi / 4)])
    for v in (np.eye(3)[0], tilted):                           # ...spanned by e1, (0, 1, 1)/√2
        assert np.linalg.norm(basis @ (basis.T @ v) - v) < 0.05
    assert np.ptp(means[:, 2]) > 1.5                           # truly using the third axis
    noise = X[:, 3]
    assert noise.min() >= -3.0 and noise.max() <= 3.0          # uniform on [−spread, spread]
    counts = np.histogram(noise, bins=5, range=(-3, 3))[0]
    assert counts.min() > 150                                  # flat
    assert normalized_mutual_info_score(a, b) < 1e-12
    for labels in (a, b):                                      # each view linear in 3-d
        assert linear_accuracy(X[:, :3], labels) > 0.99
        assert linear_accuracy(X[:, [3]], labels) < 0.6        # the noise dimension: none
    with pytest.raises(ParameterError, match="multiple of 4"):
        make_rotated_gaussian_clusters(10)


@pytest.mark.parametrize("noise_dims", [0, 3])
def test_moons_4d_parabolas_in_dims_1_2_gaussians_in_3_4(noise_dims):
    # KDAC Fig. 1: 400 points in R^4; dims 1-2 two intertwining parabolas (clustering A),
    # dims 3-4 two Gaussian clusters (B); MoonN adds three uniform noise dimensions
    X, a, b = make_moons4d(400, noise_dims=noise_dims, seed=0, intertwined=True)
    assert X.shape == (400, 4 + noise_dims)
    assert normalized_mutual_info_score(a, b) < 0.02           # the views are independent

    def knn(cols, labels):
        return KNeighborsClassifier(5).fit(X[:, cols], labels).score(X[:, cols], labels)

    assert knn([0, 1], a) > 0.99 and knn([2, 3], b) > 0.99      # each view in its dimensions
    assert linear_accuracy(X[:, [0, 1]], a) < 0.95              # the parabolas intertwine
    assert linear_accuracy(X[:, [2, 3]], a) < 0.6               # and are invisible in 3-4
    assert linear_accuracy(X[:, [0, 1]], b) < 0.6
    if noise_dims:
        noise = X[:, 4:]
        assert noise.min() >= -1 and noise.max() <= 1
        assert knn(list(range(4, 4 + noise_dims)), a) < 0.8      # noise: no clustering


def test_moons_4d_default_parabolas_are_separated_by_a_line():
    # the default geometry (earlier versions'): the cap lies below y = 0, the cup above
    X, a, _ = make_moons4d(400, seed=0)
    assert linear_accuracy(X[:, [0, 1]], a) == 1.0
    Xi = make_moons4d(400, seed=0, intertwined=True)[0]
    assert np.array_equal(X[:, 2:], Xi[:, 2:])                   # only the cap moves


def test_generators_are_seeded():
    for make in (lambda s: make_rotated_gaussian_clusters(200, seed=s),
                 lambda s: ldr.datasets.make_moons4d(100, seed=s)):
        assert np.array_equal(make(3)[0], make(3)[0])
        assert not np.array_equal(make(3)[0], make(4)[0])
