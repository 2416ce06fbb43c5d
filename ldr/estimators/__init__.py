"""scikit-learn estimators (``fit``/``transform``; ``fit_predict`` for clustering), one module
per family; :mod:`ldr.estimators._base` holds what they share (the generic
:class:`LinearDR`, its fit template, the solver settings and the projection API).
"""

from ldr.estimators.base import LinearDR
from ldr.estimators.dml import NCA, LargeMarginDML
from ldr.estimators.graph import LPP, NPE
from ldr.estimators.hsic import KDAC, SemiSupervisedHSIC, SupervisedHSIC, UnsupervisedHSIC
from ldr.estimators.ica import UndercompleteICA
from ldr.estimators.ksdr import KernelSDR
from ldr.estimators.latent import PPCA, FactorAnalysis
from ldr.estimators.lda import OrthogonalLDA
from ldr.estimators.mds import MDS
from ldr.estimators.pca import PCA
from ldr.estimators.regression import ReducedRankRegression
from ldr.estimators.temporal import MAF, SFA
from ldr.estimators.two_view import CCA, OrthogonalCCA
from ldr.estimators.wda import WassersteinDA, WDAClustering

__all__ = ["CCA", "KDAC", "LPP", "MAF", "MDS", "NCA", "NPE", "PCA", "PPCA", "SFA",
           "FactorAnalysis", "KernelSDR", "LargeMarginDML", "LinearDR", "OrthogonalCCA",
           "OrthogonalLDA", "ReducedRankRegression", "SemiSupervisedHSIC", "SupervisedHSIC",
           "UndercompleteICA", "UnsupervisedHSIC", "WDAClustering", "WassersteinDA"]
