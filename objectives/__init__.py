"""Objectives, one module per method family (installed as ``ldr.objectives``)."""

from ldr.objectives.hsic import HSIC
from ldr.objectives.lda import LDA
from ldr.objectives.pca import PCA
from ldr.objectives.quotient import QuotientOfTraces
from ldr.objectives.wda import WDA

__all__ = ["HSIC", "LDA", "PCA", "QuotientOfTraces", "WDA"]
