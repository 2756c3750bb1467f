"""Running a program that holds lazy thunks (Aesara's lazy protocol): only what the outputs ask for runs.

A lazy thunk (``thunk.lazy``, made by an op with ``lazy = True`` such as ``IfElse``) does not
need all its inputs: called, it returns the indices of the inputs it still needs (reading
``compute_map``), or ``[]`` once it has computed its outputs. ``lazy_run`` is the per-call
loop for such programs, in place of the straight loop over all thunks: a stack starting
from the outputs, where a node runs once its inputs are computed, and a lazy node is asked
again after the inputs it named are computed. Nodes that only an untaken branch needs are
never reached.

Intermediate values are not freed at their last reader (that position belongs to the static
order, and a lazy run takes another one); they are dropped when the call ends instead.
"""

from __future__ import annotations

from eqgraph.exec.node_errors import raise_with_node


def is_lazy(nodes) -> bool:
    """Whether a graph with these nodes needs the lazy loop."""
    return any(getattr(node.op, "lazy", False) for node in nodes)


def lazy_run(program, free_after: bool = True):
    """The ``run`` callable of ``program`` (an ``exec.link.Program`` built without freeing)."""
    compute_map, storage_map = program.compute_map, program.storage_map
    fgraph = program.fgraph
    steps = {}  # node -> (thunk, is lazy, input compute flags, output compute flags)
    for node, thunk in zip(program.order, program.thunks):
        steps[node] = (thunk, bool(getattr(node.op, "lazy", False)),
                       [compute_map[v] for v in node.inputs], [compute_map[v] for v in node.outputs])
    wanted = [o.owner for o in fgraph.outputs if o.owner in steps]
    flags = program.reset_flags
    outputs = set(fgraph.outputs)
    temporaries = [storage_map[v] for node in program.order for v in node.outputs if v not in outputs]

    def run() -> None:
        for flag in flags:
            flag[0] = 0
        stack = list(wanted)
        node = None
        try:
            while stack:
                node = stack[-1]
                thunk, lazy, in_flags, out_flags = steps[node]
                if all(flag[0] for flag in out_flags):
                    stack.pop()  # computed already, for another client
                    continue
                if lazy:
                    needed = thunk()
                    if not needed:
                        stack.pop()
                        continue
                    missing = [node.inputs[j] for j in needed if not in_flags[j][0]]
                    if not missing:
                        raise RuntimeError(f"the lazy thunk of {node.op} asked for inputs {list(needed)}, "
                                           "which are computed already (it must compute its outputs then)")
                else:
                    missing = [v for v, flag in zip(node.inputs, in_flags) if not flag[0]]
                    if not missing:
                        thunk()
                        stack.pop()
                        continue
                stack.extend(v.owner for v in missing)
        except Exception as err:  # noqa: BLE001  (re-raised, naming the node)
            raise_with_node(node, [storage_map[v][0] for v in node.inputs], err)
        finally:
            if free_after:
                for cell in temporaries:
                    cell[0] = None

    return run
