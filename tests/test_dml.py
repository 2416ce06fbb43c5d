"""Distance metric learning: NCA against scikit-learn's NCA (its objective, its start, its
answer within the spread of exact solvers), the large-margin objective against a brute-force
triple loop, gradients and Hessians against finite differences, units, the estimators, their
parameters and errors."""

import warnings

import numpy as np
import pytest
import scipy.special
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neighbors import NeighborhoodComponentsAnalysis as SkNCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import ldr
import ldr.estimators as est
from ldr.objectives import NCA, LargeMarginDML
from ldr.objectives.lmnn import huber_hinge


def _subsample(loader, n_per_class, seed=0):
    X, y = loader(return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), n_per_class, replace=False)
                          for c in np.unique(y)])
    return StandardScaler().fit_transform(X[idx]), y[idx]


def _nca_objective(L, X, y):
    """scikit-learn's NCA objective Σ_i Σ_{j: y_j = y_i} p_ij, written out independently."""
    U = X @ L.T
    D = np.sum((U[:, None, :] - U[None, :, :]) ** 2, axis=2)
    np.fill_diagonal(D, np.inf)
    P = scipy.special.softmax(-D, axis=1)
    return float(np.sum(P * (y[:, None] == y[None, :])))


@pytest.mark.parametrize("loader", [load_iris, load_wine])
def test_nca_reaches_scikit_learns_objective_from_the_same_start(loader):
    X, y = _subsample(loader, 20)
    obj = NCA(X, y, 2)
    M0 = obj.heuristic()
    # the start is scikit-learn's init="auto" (LDA here): the same map L
    sk0 = SkNCA(2, max_iter=1).fit(X, y)  # one iteration from its own start ...
    lda_start = obj.components(M0)
    assert _nca_objective(lda_start, X, y) == pytest.approx(-obj.cost(M0), rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk = SkNCA(2, init=lda_start, tol=1e-13, max_iter=5000).fit(X, y)
    f_sk = _nca_objective(sk.components_, X, y)
    # ... and ldr's cost is −(its objective) at any L, e.g. scikit-learn's answers
    for L in (sk.components_, sk0.components_):
        assert -obj.cost(obj.point(L)) == pytest.approx(_nca_objective(L, X, y), rel=1e-12)
    res = ldr.solve(obj, None, M0)
    assert res.converged, res.reason
    assert -res.cost >= f_sk * (1 - 1e-6), (-res.cost, f_sk)
    assert abs(-res.cost - f_sk) <= 1e-6 * f_sk


def _anes96(label, n, seed):
    """A stratified, seeded subsample of n rows of statsmodels' anes96 (bench_dml's table:
    ``logpopul`` dropped, the class column ``label``), standardized."""
    anes = pytest.importorskip("statsmodels.datasets.anes96").load_pandas().data.dropna()
    y = anes[label].to_numpy()
    X = anes.drop(columns=[label, "logpopul"]).to_numpy(dtype=float)
    keep, _ = train_test_split(np.arange(len(X)), train_size=n, stratify=y, random_state=seed)
    keep = np.sort(keep)
    return StandardScaler().fit_transform(X[keep]), y[keep]


def _sk_value(X, y, r):
    """Σ_i p_i of scikit-learn's default fit (its L padded with zero rows to r: at full rank
    its LDA start may have fewer rows, which leave Σ_i p_i unchanged)."""
    L = SkNCA(r).fit(X, y).components_
    d = X.shape[1]
    return _nca_objective(np.vstack([L, np.zeros(((r or d) - L.shape[0], d))]), X, y)


@pytest.mark.parametrize("r", [2, None])
@pytest.mark.parametrize("loader, per_class, seed", [
    (load_iris, 20, 0), (load_iris, 20, 2), (load_wine, 20, 1), (load_wine, 20, 2),
    (load_breast_cancer, 40, 1), (load_breast_cancer, 40, 2)])
def test_nca_default_route_reaches_scikit_learns_objective_on_nearly_separable_data(
        loader, per_class, seed, r):
    """Where the classes nearly separate, both defaults climb to about the count of samples a
    map separates: ldr's route (L-BFGS, strong Wolfe, the relative-progress stop) ends within
    a stated spread of scikit-learn's default fit — one sample in 50 (Σ_i p_i counts samples:
    two exact solvers may leave one sample on the other side of its nearest neighbour).  The
    verdict is converged, or — the supremum lying at ‖L‖ → ∞ — stalled at the
    relative-progress stop with a ConvergenceWarning that says so."""
    X, y = _subsample(loader, per_class, seed)
    f_sk = _sk_value(X, y, r)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = est.NCA(r).fit(X, y)
    res = model.result_
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    if res.converged:
        assert not messages
    else:
        assert res.reason.startswith("stalled: relative cost change"), res.reason
        assert res.grad_norm > model.tol * res.grad_scale
        assert len(messages) == 1 and "nears n only as the map grows" in messages[0]
    assert model.objective_value_ == pytest.approx(_nca_objective(model.components_, X, y),
                                                   rel=1e-12)
    assert model.objective_value_ >= f_sk - 0.02 * len(y), (model.objective_value_, f_sk)


def test_nca_default_route_within_the_spread_of_exact_solvers_where_classes_overlap():
    """Where the classes overlap (150-row subsamples of anes96) Σ_i p_i has many local maxima
    and which one a run reaches depends on its path: two exact solvers from the same start end
    up to about a tenth apart either way.  ldr's route stays within that spread of
    scikit-learn's default on each draw (10%) and within 2% of it on average."""
    gaps = []
    for label, seed in [("PID", 0), ("PID", 1), ("PID", 2), ("vote", 0), ("vote", 1),
                        ("vote", 3)]:
        X, y = _anes96(label, 150, seed)
        f_sk = _sk_value(X, y, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = est.NCA(2).fit(X, y)
        gaps.append(model.objective_value_ / f_sk - 1.0)
    assert min(gaps) >= -0.10 and np.mean(gaps) >= -0.02, gaps


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nca_default_route_ends_converged_or_clearly_stalled(seed):
    """The route's verdict is one of two: converged — the gradient rule, or the
    relative-progress stop where the gradient meets tol · scale too — or stalled, said in
    the reason with both numbers and a ConvergenceWarning; never a budget.  On integer-valued
    features with label noise (rows that duplicate rows of other classes, whose p_i no map
    changes)."""
    X, y = make_classification(400, 6, n_informative=3, n_redundant=0, n_classes=3,
                               flip_y=0.2, random_state=seed)
    X = np.round(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = est.NCA(2).fit(X, y)
    res = model.result_
    near = res.grad_norm <= model.tol * res.grad_scale
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if res.converged:
        assert res.reason.startswith(("gradient norm", "relative cost change")), res.reason
        assert near and not warned
    else:
        assert res.reason.startswith("stalled") and not near and warned, res.reason
    assert res.n_iter < 1000


def test_nca_plateau_rule_stops_near_the_supremum_with_its_reason():
    """On separable data Σ p_i → n only as ‖L‖ → ∞, and the gradient vanishes along the ray:
    the default route ends by the gradient rule within 1e-6·n of n.  scikit-learn's
    relative-progress stop (progress over 5 steps ≤ 1e-5, through ``solver_params``) stops
    earlier — not at max_iter — and, the gradient still above tol there, says so: stalled,
    with a warning that explains it."""
    X, y = _subsample(load_wine, 20)
    n = X.shape[0]
    default = est.NCA(2).fit(X, y)
    assert default.result_.converged and default.result_.reason.startswith("gradient norm")
    assert n - default.objective_value_ <= 1e-6 * n
    progress = {"ftol": 1e-5, "fwindow": 5}
    with pytest.warns(ConvergenceWarning, match="before the gradient met tol"):
        model = est.NCA(2, tol=0.0, solver_params=progress).fit(X, y)
    res = model.result_
    assert res.reason.startswith("stalled: relative cost change") and \
        "over the last 5 steps" in res.reason, res.reason
    assert res.n_iter < default.n_iter_ and n - model.objective_value_ <= 1e-6 * n
    assert float(res.reason.split()[4]) <= 1e-5
    costs = res.trace["cost"]
    assert abs(costs[-1] - costs[-6]) <= 1e-5 * abs(costs[-1])
    assert abs(costs[-2] - costs[-7]) > 1e-5 * abs(costs[-2])   # it fired at the first chance
    # one step's progress is a noisy measure: with a window of 1 the same ftol fires early,
    # lower, while the gradient is still large
    with pytest.warns(ConvergenceWarning, match="stalled: relative cost change"):
        one = est.NCA(2, tol=0.0, solver_params={**progress, "fwindow": 1}).fit(X, y)
    assert one.n_iter_ < model.n_iter_ and one.objective_value_ < model.objective_value_
    with pytest.raises(ValueError, match="fwindow: must be a positive integer"):
        est.NCA(2, solver_params={"fwindow": 0}).fit(X, y)


@pytest.mark.parametrize("r, n_per_class, scale", [(2, 150, 1.0), (2, 150, 25.0), (9, 20, 1.0),
                                                    (9, 150, 6.0)])
def test_nca_kernels_against_the_dense_formulas(r, n_per_class, scale):
    """Every evaluation path — one block or strips of rows (n = 300 > 256), the symmetric
    softmax or the row-stabilized one (a large map: nearest distances spread over > 1200),
    r < 8 or the wide path (S formed once) — gives scikit-learn's objective, and gradients
    and Hessian-vector products that match finite differences."""
    X, y = _subsample(load_breast_cancer, n_per_class)
    X = X[:, :12]
    obj = NCA(X, y, r)
    M = scale * np.random.default_rng(0).standard_normal((12, r)) / np.sqrt(r)
    st = obj._state(M)
    assert st["symmetric"] == (scale < 10)
    assert -obj.cost(M) == pytest.approx(_nca_objective(obj.components(M), X, y), rel=1e-12)
    assert ldr.check(obj, M, random_state=1)


@pytest.mark.parametrize("scale", [0.5, 3.0, 25.0])
def test_nca_small_table_path_equals_the_symmetric_form(scale):
    """Up to SMALL rows (r < WIDE) the softmax is the plain row-stabilized one with a
    same-class mask (objectives/pairwise.py, nca_small): the same p_i, q_i (summed directly:
    accurate where p_i ≈ 1 at the large scale), nearest rows, objective, gradient and
    Hessian-vector product as the symmetric form of (P1), and finite differences agree."""
    from ldr.objectives.pairwise import SMALL
    X, y = _subsample(load_wine, 20, seed=4)           # 60 rows ≤ SMALL
    assert len(y) <= SMALL
    small, general = NCA(X, y, 2), NCA(X, y, 2)
    general._same = None                                # the symmetric / general dense form
    rng = np.random.default_rng(5)
    M, V = scale * rng.standard_normal((13, 2)) / 3, rng.standard_normal((13, 2))
    a, b = small._state(M), general._state(M)
    assert "blk" in a and "blk" not in b
    np.testing.assert_array_equal(a["nearest"], b["nearest"])
    for key in ("p", "q"):
        np.testing.assert_allclose(a[key], b[key], rtol=1e-11, atol=1e-250)  # (clip level)
    assert small.cost(M) == pytest.approx(general.cost(M), rel=1e-13)
    g = general.egrad(M)
    np.testing.assert_allclose(small.egrad(M), g, rtol=0, atol=1e-11 * np.abs(g).max())
    h = general.ehvp(M, V)
    np.testing.assert_allclose(small.ehvp(M, V), h, rtol=0, atol=1e-10 * np.abs(h).max())
    if scale < 10:   # at the large scale the derivatives are at rounding level
        assert ldr.check(small, M, random_state=1)
    # above SMALL rows the symmetric form runs
    X2, y2 = _subsample(load_breast_cancer, 70)
    assert NCA(X2, y2, 2)._same is None


def test_nca_start_is_scikit_learns_auto_init():
    """scikit-learn's init="auto": LDA's scalings for r <= C − 1, else PCA's components."""
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y = _subsample(load_wine, 20)
    lda = LinearDiscriminantAnalysis(n_components=2).fit(X, y).scalings_.T[:2]
    pca = SkPCA(4).fit(X).components_
    for r, L_sk in [(2, lda), (4, pca)]:
        obj = NCA(X, y, r)
        # standardized data: c = 1, so the start is scikit-learn's map itself
        assert obj.unit_ == pytest.approx(1.0, rel=1e-12)
        np.testing.assert_allclose(obj.components(obj.heuristic()), L_sk, atol=1e-10)


def test_costs_as_functions_of_M_do_not_depend_on_the_data_units():
    X, y = _subsample(load_iris, 15)
    M = np.random.default_rng(0).standard_normal((4, 2))
    for cls in (NCA, LargeMarginDML):
        a, b = cls(X, y, 2), cls(1e3 * X + 7.0, y, 2)
        assert b.cost(M) == pytest.approx(a.cost(M), rel=1e-10)
        np.testing.assert_allclose(b.egrad(M), a.egrad(M), rtol=1e-8, atol=1e-10)
        # at a fixed map L the costs do change with the units (the softmax, the margin)
        L = a.components(M)
        assert abs(b.cost(b.point(L)) - a.cost(M)) > 1e-3 * abs(a.cost(M))


def test_huber_hinge_pieces_and_derivatives():
    z = np.array([-1.0, 0.0, 0.1, 0.25, 0.5, 2.0])
    h, dh, d2h = huber_hinge(z, 0.5)
    np.testing.assert_allclose(h, [0, 0, 0.01, 0.0625, 0.25, 1.75])
    np.testing.assert_allclose(dh, [0, 0, 0.2, 0.5, 1.0, 1.0])
    np.testing.assert_allclose(d2h, [0, 0, 2, 2, 0, 0])
    t = 1e-7  # C¹: h′ is the derivative of h on every piece
    zs = np.linspace(-1, 2, 61)
    fd = (huber_hinge(zs + t, 0.5)[0] - huber_hinge(zs - t, 0.5)[0]) / (2 * t)
    np.testing.assert_allclose(fd, huber_hinge(zs, 0.5)[1], atol=1e-6)


def test_large_margin_cost_equals_eq27_by_a_triple_loop():
    X, y = _subsample(load_wine, 6, seed=1)
    k, lam, delta = 2, 0.7, 0.3
    obj = LargeMarginDML(X, y, 2, n_neighbors=k, impostor_weight=lam, smoothing=delta)
    M = 0.4 * np.random.default_rng(1).standard_normal((X.shape[1], 2))
    L = obj.components(M)
    n = X.shape[0]
    Dx = np.sum((X[:, None] - X[None]) ** 2, axis=2)
    total, zs = 0.0, []
    for i in range(n):
        mates = [j for j in np.argsort(Dx[i], kind="stable") if j != i and y[j] == y[i]][:k]
        assert set(mates) == set(obj.targets_[i][obj.target_mask_[i]])
        for j in mates:
            dij = np.sum((L @ (X[i] - X[j])) ** 2)
            total += dij
            for m in range(n):
                if y[m] != y[i]:
                    z = 1 + dij - np.sum((L @ (X[i] - X[m])) ** 2)
                    total += lam * huber_hinge(np.array(z), delta)[0]
                    zs.append(z)
    assert obj.cost(M) == pytest.approx(total, rel=1e-12)
    # triples on every piece of the hinge (inactive, quadratic band, linear): the test
    # exercises each, and the gradient and Hessian match finite differences there
    zs = np.array(zs)
    assert (zs <= 0).any() and ((zs > 0) & (zs < delta)).any() and (zs >= delta).any()
    assert ldr.check(obj, M, random_state=0)


@pytest.mark.parametrize("loader", [load_iris, load_wine])
def test_large_margin_default_solver_reaches_the_trust_regions_minimum(loader):
    """The default L-BFGS and the trust region stop at the same minimizer from the same start:
    the same cost and the same metric LᵀL (the cost is invariant to L → RL)."""
    X, y = _subsample(loader, 15)
    obj = LargeMarginDML(X, y, 2)
    assert list(LargeMarginDML.default_solver) == ["lbfgs", "trust-region"]
    ours = ldr.solve(obj, None, "heuristic", tol=1e-9)
    tr = ldr.solve(obj, "trust-region", "heuristic", tol=1e-9)
    assert ours.converged and tr.converged, (ours.reason, tr.reason)
    assert ours.cost == pytest.approx(tr.cost, rel=1e-10)
    np.testing.assert_allclose(ours.M @ ours.M.T, tr.M @ tr.M.T, rtol=1e-5, atol=1e-7)


def test_large_margin_with_a_tiny_class_and_the_checks():
    X, y = _subsample(load_iris, 10)
    y = y.copy()
    y[0] = 7  # a class of one sample: no target neighbours for it
    obj = LargeMarginDML(X, y, 3, n_neighbors=3)
    assert not obj.target_mask_[0].any() and obj.target_mask_[1:].all()
    assert ldr.check(obj, random_state=2)
    assert ldr.check(NCA(X, y, 4), random_state=2)  # r = d: a full-rank metric


def test_estimators_on_wine_and_their_layout():
    X, y = load_wine(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    for Est in (est.NCA, est.LargeMarginDML):
        with warnings.catch_warnings():  # NCA may stall near its supremum (test above)
            warnings.simplefilter("ignore", ConvergenceWarning)
            pipe = make_pipeline(StandardScaler(), Est(2), KNeighborsClassifier(3)).fit(Xtr,
                                                                                        ytr)
        model = pipe[1]
        res = model.result_
        assert res.converged or res.reason.startswith("stalled: relative cost change"), \
            res.reason
        assert model.components_.shape == (2, 13) and model.M_.shape == (13, 2)
        Z = pipe[:-1].transform(Xte)
        np.testing.assert_allclose(Z, pipe[0].transform(Xte) @ model.components_.T)
        assert pipe.score(Xte, yte) >= 0.9
    full = est.NCA().fit(StandardScaler().fit_transform(X), y)
    assert full.components_.shape == (13, 13) and full.objective_value_ > 170


def test_estimator_init_array_and_errors():
    X, y = _subsample(load_iris, 10)
    L0 = np.eye(2, 4)
    model = est.NCA(2, start=L0).fit(X, y)
    assert model.result_.trace[0]["cost"] == pytest.approx(-_nca_objective(L0, X, y),
                                                           rel=1e-12)
    with pytest.raises(ValueError, match="n_components"):
        est.NCA(5).fit(X, y)
    with pytest.raises(ValueError, match="start: an array must be finite with shape"):
        est.NCA(2, start=np.eye(4)).fit(X, y)
    with pytest.raises(ValueError, match="start: expected one of"):
        est.NCA(2, start="spectral").fit(X, y)
    # init, scikit-learn's name, is a deprecated alias of start: it warns and is used
    with pytest.warns(FutureWarning, match="NCA: the parameter 'init' is deprecated"):
        old = est.NCA(2, init=L0).fit(X, y)
    np.testing.assert_array_equal(old.components_, model.components_)
    with pytest.raises(ValueError, match="n_neighbors"):
        est.LargeMarginDML(2, n_neighbors=0).fit(X, y)
    with pytest.raises(ValueError, match="impostor_weight"):
        est.LargeMarginDML(2, impostor_weight=0.0).fit(X, y)
    with pytest.raises(ValueError, match="smoothing"):
        LargeMarginDML(X, y, 2, smoothing=-1.0)
    with pytest.raises(ValueError, match="same point"):
        NCA(np.ones((10, 3)), np.repeat([0, 1], 5), 2)


def test_large_margin_renamed_parameters_and_their_deprecated_aliases():
    """``n_neighbors`` and ``impostor_weight`` (the objective's and the estimator's names);
    the former ``k`` and ``lam`` still work for one release, each with a FutureWarning that
    names its replacement, and give the same fit."""
    X, y = _subsample(load_wine, 12)
    new = est.LargeMarginDML(2, n_neighbors=2, impostor_weight=0.5).fit(X, y)
    assert new.get_params()["n_neighbors"] == 2
    assert new.objective_.n_neighbors == 2 and new.objective_.impostor_weight == 0.5
    with pytest.warns(FutureWarning) as caught:
        old = est.LargeMarginDML(2, k=2, lam=0.5).fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
    assert any("'k' is deprecated" in m and "n_neighbors" in m for m in messages)
    assert any("'lam' is deprecated" in m and "impostor_weight" in m for m in messages)
    np.testing.assert_array_equal(old.components_, new.components_)
    with pytest.warns(FutureWarning, match="LargeMarginDML: the parameter 'k' is deprecated"):
        obj = LargeMarginDML(X, y, 2, k=2)
    np.testing.assert_array_equal(obj.targets_, new.objective_.targets_)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="n_neighbors"):
        est.LargeMarginDML(2, k=0).fit(X, y)


@pytest.mark.parametrize("make", [lambda: est.LargeMarginDML(2, solver="lbfgs"),
                                  lambda: est.NCA(2, solver="lbfgs")])
def test_a_dask_array_is_refused_with_the_memory_needed(make):
    """An exact route asked for by name needs the rows in memory (the default reads chunks:
    ``tests/test_nca_chunks.py``, ``tests/test_lmnn_chunks.py``)."""
    da = pytest.importorskip("dask.array")
    X, y = _subsample(load_iris, 10)
    with pytest.raises(ValueError, match="memory|bytes|GB|MB"):
        make().fit(da.from_array(X, chunks=10), y)


@pytest.mark.parametrize("cls", [est.NCA, est.LargeMarginDML])
def test_a_continuous_target_is_refused(cls):
    """A float y would make every sample its own class (a constant cost): refused, as
    scikit-learn's NCA does."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    with pytest.raises(ValueError, match="continuous"):
        cls(2, start="pca").fit(X, X[:, 0] + 0.1 * rng.standard_normal(50))


def test_lda_start_without_within_class_spread_falls_back_to_pca():
    # soak counterexample: a class of identical rows and two one-sample classes left
    # scikit-learn's LDA (the "auto" start) no within-class spread: an IndexError in its SVD
    X = np.array([[0.12573022, -0.13210486, 0.64042265, 0.10490012, -0.53566937],
                  [0.36159505, 1.30400005, 0.94708096, -0.70373524, -1.26542147],
                  [0.12573022, -0.13210486, 0.64042265, 0.10490012, -0.53566937],
                  [0.12573022, -0.13210486, 0.64042265, 0.10490012, -0.53566937]])
    y = np.array([0, 1, 2, 0])
    for Objective in (ldr.objectives.LargeMarginDML, ldr.objectives.NCA):
        obj = Objective(X, y, 1)
        start = obj.heuristic()
        assert start.shape == (5, 1) and np.all(np.isfinite(start))
        res = ldr.solve(obj, max_iter=50)
        assert np.isfinite(res.cost) and np.all(np.isfinite(res.M))


@pytest.mark.parametrize("make", [est.NCA, est.LargeMarginDML])
def test_auto_start_when_lda_has_fewer_directions_than_components(make):
    """init="auto" picks LDA for r <= C − 1, but scikit-learn's LDA keeps only the numerical
    rank of the within-class scatter: a feature constant within each class (grunfeld's firm
    data) leaves it 3 directions for r = 4.  The start falls through to the next rule."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(6), 20)
    X = np.column_stack([rng.standard_normal((120, 3)) + y[:, None], 0.5 * y])
    fitted = make().fit(X, y)
    assert fitted.components_.shape == (4, 4)
    assert np.isfinite(fitted.result_.cost)


def test_softmax_entries_past_the_clip_are_zero_and_the_others_exact():
    """exp_neg exponentiates only the entries below CLIP (bit for bit np.exp's), sets the
    rest — +∞ on a diagonal included — to 0 without a floating-point warning, and an NCA whose
    map puts most entries past the clip keeps the exact objective and its derivatives."""
    from ldr.objectives.pairwise import CLIP, MASKED_EXP_BELOW, exp_neg
    for top in (1.2 * CLIP, 4.0 * CLIP):              # the plain call, then the masked one
        S = np.random.default_rng(2).uniform(0.0, top, (9, 40))
        S[np.arange(9), np.arange(9)] = np.inf
        keep = S < CLIP
        assert (keep.mean() > MASKED_EXP_BELOW) == (top < 2 * CLIP)
        with np.errstate(all="raise"):
            out = exp_neg(S.copy(), np.empty(S.shape, dtype=bool))
        np.testing.assert_array_equal(out[keep], np.exp(-S[keep]))
        assert np.all(out[~keep] == 0.0)
    X, y = _subsample(load_breast_cancer, 150)
    for block_size in (None, 64):                     # the dense path and the strips
        obj = NCA(X[:, :12], y, 2, block_size=block_size)
        M = 25.0 * np.random.default_rng(0).standard_normal((12, 2)) / np.sqrt(2)
        U = obj._Xo @ M
        D = ((U[:, None] - U[None]) ** 2).sum(-1)
        np.fill_diagonal(D, np.inf)
        R = D - D.min(1)[:, None]
        assert np.mean(R >= CLIP) > 0.8               # most entries past the clip
        P = np.exp(-R)                                # every entry exponentiated
        P /= P.sum(1)[:, None]
        same = obj._zo[:, None] == obj._zo[None, :]
        p = (P * same).sum(1)
        assert -obj.cost(M) == pytest.approx(p.sum(), rel=1e-13)
        A = P * (p[:, None] - same)                   # the gradient of Σ_i p_i (module doc)
        G = 2.0 * (A.sum(0)[:, None] * U - A @ U - A.T @ U)
        ref = -obj._Xo.T @ G
        np.testing.assert_allclose(obj.egrad(M), ref, rtol=0, atol=1e-11 * np.abs(ref).max())

