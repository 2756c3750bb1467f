"""Pick the cheapest equivalent graph out of an e-graph."""

from eqgraph.extract.costs import CostModel as CostModel
from eqgraph.extract.extract import Extraction as Extraction, extract as extract
from eqgraph.extract.exact import ExactExtractionUnavailable as ExactExtractionUnavailable

__all__ = ["extract", "Extraction", "CostModel", "ExactExtractionUnavailable"]
