"""Objectives, one module per method family (installed as ``ldr.objectives``)."""

from ldr.objectives.cca import OrthogonalCCA, TraditionalCCA
from ldr.objectives.dml import NCA, LargeMarginDML
from ldr.objectives.graph import LPP, NPE
from ldr.objectives.hsic import HSIC
from ldr.objectives.ica import UndercompleteICA
from ldr.objectives.ksdr import KernelSDR
from ldr.objectives.latent import PPCA, FactorAnalysis
from ldr.objectives.lda import LDA
from ldr.objectives.maf import MAF
from ldr.objectives.mds import MDS
from ldr.objectives.pca import PCA
from ldr.objectives.quotient import QuotientOfTraces
from ldr.objectives.rrr import ReducedRankRegression
from ldr.objectives.sfa import SFA
from ldr.objectives.wda import WDA

__all__ = ["KernelSDR", "LPP", "MDS", "NPE",
           "FactorAnalysis", "PPCA",
           "HSIC", "LDA", "MAF", "OrthogonalCCA", "PCA", "QuotientOfTraces", "SFA",
           "TraditionalCCA", "WDA"]
__all__ += ["LargeMarginDML", "NCA", "ReducedRankRegression", "UndercompleteICA"]
