"""scikit-learn estimators (``fit``/``transform``; ``fit_predict`` for clustering)."""

from ldr.estimators.dml import NCA, LargeMarginDML
from ldr.estimators.hsic import KDAC, SemiSupervisedHSIC, SupervisedHSIC, UnsupervisedHSIC
from ldr.estimators.ica import UndercompleteICA
from ldr.estimators.linear import (
    LPP,
    MAF,
    MDS,
    NPE,
    PCA,
    PPCA,
    SFA,
    FactorAnalysis,
    KernelSDR,
    LinearDR,
    OrthogonalLDA,
)
from ldr.estimators.regression import ReducedRankRegression
from ldr.estimators.two_view import CCA, OrthogonalCCA
from ldr.estimators.wda import WassersteinDA, WDAClustering

__all__ = ["KDAC", "SemiSupervisedHSIC", "SupervisedHSIC", "UnsupervisedHSIC", "WDAClustering",
           "WassersteinDA"]
__all__ += ["CCA", "FactorAnalysis", "KernelSDR", "LPP", "LinearDR", "MAF", "MDS", "NPE",
            "OrthogonalCCA", "OrthogonalLDA", "PCA", "PPCA", "SFA"]
__all__ += ["LargeMarginDML", "NCA", "ReducedRankRegression", "UndercompleteICA"]
