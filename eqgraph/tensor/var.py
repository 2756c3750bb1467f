"""Old path of ``eqgraph.tensor.variable``: ``et.var`` is the variance function, which shadowed
this module's name in the package."""

import importlib
import sys
import warnings

warnings.warn("eqgraph.tensor.var moved to eqgraph.tensor.variable; import it from there",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = importlib.import_module("eqgraph.tensor.variable")
