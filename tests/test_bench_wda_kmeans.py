"""bench_real's counterpart for WDAClustering (benchmarks/_wda_kmeans.py): the KMeans ↔ POT
``ot.dr.wda`` alternation a user without ldr would write, set from ldr's fit."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from ldr.estimators import WDAClustering

pytest.importorskip("ot")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _wda_kmeans  # noqa: E402


def test_the_counterpart_is_the_alternation_with_ldrs_settings_on_iris():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = WDAClustering(n_clusters=3).fit(X)
    label, other = _wda_kmeans.counterpart(None, model)
    assert label == "KMeans↔POT wda"
    params = other.get_params()
    assert params["n_components"] == model.n_components_ == 2
    assert params["reg"] == model.history_[0]["reg"]
    assert params["sinkhorn_iter"] == model.sinkhorn_iter
    assert params["rounds"] == model.n_outer_ >= 2  # every round made a WDA step
    other.fit(X)
    assert 1 <= other.n_outer_ <= model.n_outer_
    P = other.P_
    assert P.shape == (4, 2)
    np.testing.assert_allclose(P.T @ P, np.eye(2), atol=1e-8)  # POT's Stiefel point
    # labels_ are k-means in the last projection, as the docstring says
    again = KMeans(3, random_state=0).fit_predict(X @ P)
    assert adjusted_rand_score(again, other.labels_) == 1.0
    # and they cluster iris (0.83; KMeans in the full space 0.62, ldr 0.90)
    assert adjusted_rand_score(y, other.labels_) > 0.75
    np.testing.assert_array_equal(X, StandardScaler().fit_transform(load_iris().data))  # untouched


def test_wda_steps_leave_out_the_round_the_guard_stopped():
    X, _ = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = WDAClustering(n_clusters=3).fit(X)
    assert _wda_kmeans.wda_steps(model) == model.n_outer_
    model.history_ = model.history_ + [{"outer": model.n_outer_ + 1, "scf_converged": None}]
    assert _wda_kmeans.wda_steps(model) == model.n_outer_  # the guard's round ran k-means only
    model.history_ = [{"outer": 1, "scf_converged": None}]
    assert _wda_kmeans.wda_steps(model) == 1  # at least one step
