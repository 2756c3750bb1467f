"""How the program's NumPy lays each value of the whole Numba function out in memory
(``Writer.layout``), and the float sums that read it.

NumPy adds a float array in the order it lies in memory, and lays an elementwise result out as its
operands lie (a transposed matrix gives a Fortran-ordered result); the whole function's loops
write C order.  ``numpy_layout`` follows NumPy's layout through the graph: ``(order, conditions)``,
``order`` "C" or "T" (a matrix lying as the transpose of a C-ordered one) where the run-time
``conditions`` hold (the function raises otherwise, and the program runs); None where unknown.
"""

from __future__ import annotations

from eqgraph.exec.composite import Composite
from eqgraph.exec.numpy.kernels import BLOCKED_FROM
from eqgraph.tensor.dimshuffle_op import DimShuffle
from eqgraph.tensor.elemwise import Cast, Elemwise


def numpy_layout(w, var):
    """``Writer.layout`` of ``var``, from the layouts of its node's inputs."""
    owner = var.owner
    if owner is None or var.ndim < 2:
        return "C", ()
    op, inputs = owner.op, owner.inputs
    if isinstance(op, DimShuffle):
        source = w.layout(inputs[0])
        kept = [o for o in op.new_order if o != "x"]
        if source is None or kept != sorted(kept) and op.new_order != (1, 0):
            return None
        if op.new_order == (1, 0):
            return {"C": "T", "T": "C"}[source[0]], source[1]
        return source if source[0] == "C" or op.new_order == (0, 1) else None
    if isinstance(op, (Elemwise, Cast, Composite)):
        return _elementwise_layout(w, var, inputs)
    if not getattr(op, "view_map", None):   # a new array, in C order
        return "C", ()
    layouts = [w.layout(x) for x in inputs if getattr(x.type, "ndim", 0) >= 2]
    if any(layout is None or layout[0] != "C" for layout in layouts):   # a view of a value NumPy lays otherwise
        return None
    return "C", tuple(c for layout in layouts for c in layout[1])


def _elementwise_layout(w, var, inputs):
    """NumPy's ufuncs lay a result out as the operands that span it lie (each axis of length
    other than 1 in every operand: a broadcast axis has stride 0, which casts no vote); where they
    disagree, an operand in C order wins; with no vote, C order."""
    voters = [x for x in inputs if x.ndim == var.ndim and 1 not in x.type.shape and w.one_element(x) is None]
    layouts = [w.layout(x) for x in voters]
    if any(layout is None for layout in layouts):
        return None
    conditions = tuple(c for layout in layouts for c in layout[1])
    orders = {layout[0] for layout in layouts}
    if orders <= {"C"}:
        return "C", conditions
    if var.ndim != 2:
        return None
    order = "C" if "C" in orders else "T"
    spanning = " or ".join(f"({w.value(x)}.shape[0] != 1 and {w.value(x)}.shape[1] != 1)"
                           for x, layout in zip(voters, layouts) if layout[0] == order)
    if order == "T" and isinstance(var.owner.op, Composite):
        # the program's fused kernel calls NumPy's ufuncs on arrays this small, and on larger ones
        # computes blocks of C-ordered copies into a C-ordered result
        name = w.value(voters[0])
        spanning = f"({spanning}) and {name}.shape[0] * {name}.shape[1] < {BLOCKED_FROM}"
    return order, (*conditions, spanning)


def checks(conditions) -> list:
    """Lines raising where a layout's conditions fail (the program then sums as NumPy lays it)."""
    return [f"if not ({condition}): raise ValueError('memory order')" for condition in conditions]


def c_ordered(w, x, translate, node):
    """``translate(w, node)``, a float sum adding ``x`` in C order, where NumPy lays ``x`` out in
    C order; else None (a Python call: NumPy's own order)."""
    layout = w.layout(x)
    if layout is None or layout[0] != "C":
        return None
    lines = translate(w, node)
    return None if lines is None else [*checks(layout[1]), *lines]


#: a transposed matrix's sums are the matrix's own: its rows' sums are the matrix's columns'
_TRANSPOSED_KIND = {("whole", False): ("whole", False), ("rows", False): ("columns", False),
                    ("columns", False): ("rows", False)}


def memory_ordered(w, x, kind):
    """``(checks, the C-contiguous array NumPy adds in memory order, the kernel adding it)``: ``x``
    itself where NumPy lays it out in C order, its transpose summed the other way where it lies as
    the transpose of a C-ordered matrix (a view of one needs no copy); None where unknown."""
    layout = w.layout(x)
    if layout is None or layout[0] == "T" and kind not in _TRANSPOSED_KIND:
        return None
    order, conditions = layout
    if order == "C":
        return checks(conditions), f"np.ascontiguousarray({w.value(x)})", kind
    return checks(conditions), f"np.ascontiguousarray({w.value(x)}.T)", _TRANSPOSED_KIND[kind]
