"""Old module paths of the e-graph modules that moved from ``eqgraph.rules`` to ``eqgraph.egraph``."""

import importlib
import sys
import warnings


def alias(old: str, new: str) -> None:
    """Make ``old`` another name for the module ``new`` (the same module object, so that
    setting an attribute through either name changes both), with a DeprecationWarning."""
    warnings.warn(f"{old} moved to {new}; import it from there", DeprecationWarning, stacklevel=3)
    sys.modules[old] = importlib.import_module(new)
