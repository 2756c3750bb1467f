"""Pick the cheapest equivalent graph out of an e-graph: ``extract`` (in ``extraction.py``),
the cost model (``costs.py``) and the optional exact choice (``exact.py``)."""

from eqgraph.extract.costs import CostModel as CostModel
from eqgraph.extract.extraction import Extraction as Extraction, extract as extract
from eqgraph.extract.exact import ExactExtractionUnavailable as ExactExtractionUnavailable

__all__ = ["extract", "Extraction", "CostModel", "ExactExtractionUnavailable"]
