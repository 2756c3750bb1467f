"""Loops: ``eqgraph.scan`` (Aesara's ``scan``, defined here in ``eqgraph.loops``) and the ``Scan`` op behind it.

``build.py`` turns ``fn`` into an inner graph (pulling loop-invariant work out), ``op.py`` runs
it (the inner graph compiled by ``eqgraph.function``, so this package sits above ``function``
in the layers), ``grad.py`` is the reverse mode through the loop (``backward.py`` the same
written as a scan, for second derivatives), ``shorthands.py`` has Aesara's ``map``,
``reduce``, ``foldl`` and ``foldr``, ``checkpoints.py`` ``scan_checkpoints``.
"""

from eqgraph.loops.build import scan, until
from eqgraph.loops.checkpoints import scan_checkpoints
from eqgraph.loops.grad import ScanGrad
from eqgraph.loops.layout import Layout
from eqgraph.loops.op import Scan
from eqgraph.loops.shorthands import foldl, foldr, map, reduce

# map, reduce, foldl and foldr (Aesara's names) stay here: in eqgraph's namespace, a star
# import would shadow Python's built-in map
__all__ = ["scan", "scan_checkpoints", "until", "map", "reduce", "foldl", "foldr", "Scan", "ScanGrad", "Layout"]
