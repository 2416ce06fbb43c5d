import numpy as np
import pytest

import ldr


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def pca_data():
    return ldr.datasets.make_pca(200, 12, seed=3)


@pytest.fixture
def lda_data():
    return ldr.datasets.make_lda(8, r=2, n_per_class=150, seed=4)
