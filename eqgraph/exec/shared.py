"""Deprecated: shared variables moved to ``eqgraph.tensor.sharedvar`` (issue 10: a graph
object, not execution). The same classes and function, with a DeprecationWarning."""

import warnings

from eqgraph.tensor.sharedvar import (Container as Container, SharedVariable as SharedVariable,
                                      TensorSharedVariable as TensorSharedVariable, shared as shared)

warnings.warn("eqgraph.exec.shared moved to eqgraph.tensor.sharedvar; import it from there (or use eg.shared)",
              DeprecationWarning, stacklevel=2)
