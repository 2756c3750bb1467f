"""``eqgraph.scan``: Aesara's loop, with its signature and its ``(outputs, updates)`` result.

``fn`` is called once, on symbolic per-step variables, in Aesara's argument order: each
sequence at each of its taps, each fed-back output at each of its taps, then the
non-sequences. What it returns (outputs, an updates dict, or both) becomes the inner graph
of one ``Scan`` node (``op.py``).

Loop-invariant code motion happens here: every inner expression that depends on no per-step
variable (a non-sequence, a variable ``fn`` closes over, ``W * 2`` of those, a shared variable
the loop does not update) becomes an outer input, computed once per call rather than once
per step. Constants stay inside, where the inner e-graph folds them.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict

import eqgraph.tensor as et
from eqgraph.loops.layout import Layout
from eqgraph.loops.op import Scan
from eqgraph.tensor.sharedvar import SharedVariable
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import MissingInputError
from eqgraph.terms.graph import clone_replace, graph_inputs, toposort
from eqgraph.terms.type import describe_value


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None, truncate_gradient=-1,
         go_backwards=False, mode=None, name=None, profile=False, allow_gc=None, strict=False,
         return_list=False, return_updates=True):
    """Repeat ``fn`` over ``sequences``, feeding its outputs back; returns ``(outputs, updates)``.

    sequences : variables iterated over their first axis, or dicts ``{"input": x, "taps": [-1, 0]}``
        (step t reads ``x[t + tap - min(taps, 0)]``).
    outputs_info : per output of ``fn``, its initial state (fed back as tap -1), a dict
        ``{"initial": x, "taps": [-2, -1]}`` (``x[0]`` is the value at the lowest tap, ``x[1]`` the
        one after it...; the first ``-min(taps)`` entries are used; with taps ``[-1]``, ``x`` is
        the state itself), or None for an output that is not fed back. An initial state that
        is not a tensor (a random generator) is untraced, as in PyTensor: each step reads the
        previous value, and only the value after the last step is returned, in its place.
    non_sequences : values passed to every step unchanged (tensors, or random generators).
    n_steps : the number of steps (a Python int or an integer scalar variable); without it,
        the shortest sequence decides.
    truncate_gradient : -1 for the full gradient, k > 0 to backpropagate through the last k steps.
    go_backwards : iterate over the sequences from their end. As in PyTensor, each tap's slice
        is reversed: step t reads ``x[len(x) - 1 - max(taps, 0) + tap - t]``, so tap +1 is still
        the entry after tap 0 in ``x`` as given.
    strict : refuse a fn that reads variables (shared ones included) not passed in
        ``sequences``, ``outputs_info`` or ``non_sequences``.
    mode, profile, allow_gc : accepted for Aesara compatibility; the step is compiled by
        ``eqgraph.function`` with its defaults.

    Returns the outputs (one variable, or a list when ``fn`` has several outputs or
    ``return_list``; None when it has none), each with ``n_steps`` entries along a new first axis, and an
    ``OrderedDict`` ``{shared variable: its value after the last step}`` to pass to
    ``eqgraph.function(..., updates=...)``.  With ``return_updates=False`` (PyTensor 3's
    signature) only the outputs are returned; the updates stay attached to the loop's node
    (``node.tag["updates"]``), and ``eqgraph.function`` applies them to the shared variables
    of every such loop its outputs use, unless its ``updates`` or ``no_default_updates`` say
    otherwise.
    """
    seqs = _sequences(sequences)
    if n_steps is None and not seqs:
        raise ValueError("scan needs sequences or n_steps to know how many steps to run")
    if n_steps is not None:
        n_steps = n_steps_variable(n_steps)
    if not isinstance(truncate_gradient, int) or not (truncate_gradient == -1 or truncate_gradient > 0):
        raise ValueError(f"scan: truncate_gradient must be -1 or a positive int, got {truncate_gradient!r}")
    non_seqs = [_as_any_variable(v, f"non_sequences[{i}]") for i, v in enumerate(as_list(non_sequences))]
    step_args, states, outputs, updates, condition = _trace_step(fn, seqs, outputs_info, non_seqs)
    untraced = [o for o, (init, _) in enumerate(states) if _is_untraced(init)]
    traced = [o for o in range(len(states)) if o not in untraced]
    shared, invariants, inner_inputs, inner_outputs, condition = _inner_graph(
        step_args, [outputs[o] for o in traced], [outputs[o] for o in untraced], updates, condition,
        non_seqs if strict else None)

    layout = Layout(seq_taps=tuple(taps for _, taps in seqs), out_taps=tuple(states[o][1] for o in traced),
                    n_shared=len(untraced) + len(shared), n_invariant=len(invariants),
                    has_n_steps=n_steps is not None, go_backwards=bool(go_backwards),
                    truncate_gradient=truncate_gradient)
    op = Scan(inner_inputs, inner_outputs, layout, name=name, until=condition)
    outer = ([n_steps] if n_steps is not None else []) + [x for x, _ in seqs]
    outer += [states[o][0] for o in traced if states[o][1]] + [states[o][0] for o in untraced]
    results = op(*outer, *shared, *invariants, return_list=True)
    # the outputs in fn's order: each untraced state's value after the last step in its place
    by_output = dict(zip(traced + untraced, results))
    outs = [by_output[o] for o in range(len(states))]
    new_values = OrderedDict(zip(shared, results[len(states):]))
    # as PyTensor and Aesara: a loop of updates only has None for outputs
    outs = None if not outs else outs[0] if len(outs) == 1 and not return_list else outs
    if not return_updates:
        results[0].owner.tag["updates"] = new_values
        return outs
    return outs, new_values


def _trace_step(fn, seqs: list, outputs_info, non_seqs: list) -> tuple:
    """Call ``fn`` once, on symbolic per-step variables: ``(its arguments for the sequences' and the
    fed-back outputs' taps, the states (initial value, taps) per output, its outputs, its updates
    with the shared variables it updates by default, its stop condition or None)``."""
    seq_args = [TensorType(x.dtype, x.type.shape[1:])(_tap_name(x, tap)) for x, taps in seqs for tap in taps]
    states = _outputs_info(outputs_info)
    state_args = [_state_arg(init, tap) for init, taps in states for tap in taps]
    _check_arity(fn, seqs, states, non_seqs)
    made_before = _creation_mark()
    returned = fn(*seq_args, *state_args, *non_seqs)
    outputs, updates, condition = _split_result(returned)
    if not outputs and not updates:
        raise ValueError("scan: fn returned no outputs and no updates, so the loop would compute nothing; "
                         "return the step's new values (and/or an updates dict)")
    if outputs_info is None or (not as_list(outputs_info) and outputs):
        states = [(None, ())] * len(outputs)
    if len(outputs) != len(states):
        raise ValueError(f"scan: fn returned {len(outputs)} outputs but outputs_info describes {len(states)}; "
                         "give one entry per output (None for an output that is not fed back)")
    for o, (out, (init, taps)) in enumerate(zip(outputs, states)):
        _check_output(o, out, init)
    # shared variables the loop updates are states: each step reads what the previous one wrote
    updates.update(_default_updates(outputs + list(updates.values()), updates, made_before))
    # fn's arguments in its order; an untraced state's goes with the shared variables' in the loop
    arg_states = [init for init, taps in states for _ in taps]
    untraced_args = [a for a, init in zip(state_args, arg_states) if _is_untraced(init)]
    step_args = seq_args + [a for a, init in zip(state_args, arg_states) if not _is_untraced(init)]
    return (step_args, untraced_args), states, outputs, updates, condition


def _inner_graph(step_args: tuple, outputs: list, untraced: list, updates: OrderedDict, condition,
                 strict_non_seqs) -> tuple:
    """The loop's inner graph, with an input of its own per untraced state, per shared variable it
    updates and per loop invariant: ``(the shared variables, the invariants, the inner inputs, the
    inner outputs, the inner stop condition or None)``. ``step_args``: (the arguments of the
    sequences and traced states, those of the untraced states); ``outputs``: the traced ones;
    ``untraced``: the untraced states' new values. ``strict_non_seqs``: the non-sequences, where
    ``strict`` refuses any other invariant; None otherwise."""
    shared = list(updates)
    shared_args = [s.type(s.name) for s in shared]
    # the stop condition travels with the outputs through the substitutions below, last
    inner_outputs = outputs + untraced + list(updates.values()) + ([condition] if condition is not None else [])
    inner_outputs = clone_replace(inner_outputs, dict(zip(shared, shared_args)))
    step_args = step_args[0] + step_args[1] + shared_args
    invariants = _loop_invariants(inner_outputs, step_args)
    if strict_non_seqs is not None:
        _check_strict(invariants, strict_non_seqs)
    invariant_args = [v.type(v.name) for v in invariants]
    inner_outputs = clone_replace(inner_outputs, dict(zip(invariants, invariant_args)))
    if condition is not None:
        inner_outputs, condition = inner_outputs[:-1], inner_outputs[-1]
    return shared, invariants, step_args + invariant_args, inner_outputs, condition


# -- arguments --------------------------------------------------------------------------------
def as_list(x) -> list:
    """None -> [], a list or tuple -> a list, anything else -> a list of it."""
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _as_variable(value, what: str):
    try:
        return et.as_tensor_variable(value)
    except TypeError as err:
        raise TypeError(f"scan: {what} must be a tensor or a value, not {describe_value(value)}: {err}") from err


def _as_any_variable(value, what: str):
    """A value fn returned, as a variable: a variable of any type (a random generator, say)
    as it is, anything else as a tensor."""
    return value if isinstance(value, Variable) else _as_variable(value, what)


def _tap_name(x, tap: int) -> str | None:
    return f"{x.name}[t{tap:+d}]" if x.name else None


def _taps(value, what: str, negative: bool) -> tuple:
    taps = [value] if isinstance(value, int) else value
    if not isinstance(taps, (list, tuple)) or not taps or not all(isinstance(t, int) for t in taps):
        raise TypeError(f"scan: {what} taps must be a non-empty list of ints, got {value!r}")
    if len(set(taps)) != len(taps):
        raise ValueError(f"scan: {what} lists a tap twice: {list(taps)}")
    if negative and any(t >= 0 for t in taps):
        raise ValueError(f"scan: {what} taps must be negative (a step reads outputs of earlier steps), got {list(taps)}")
    return tuple(taps)


def _sequences(sequences) -> list:
    """(variable, taps) per sequence."""
    out = []
    for i, seq in enumerate(as_list(sequences)):
        what = f"sequences[{i}]"
        if isinstance(seq, dict):
            unknown = set(seq) - {"input", "taps"}
            if "input" not in seq or unknown:
                raise ValueError(f"scan: {what} must be a variable or a dict with keys 'input' and 'taps', "
                                 f"got keys {sorted(seq)}")
            x, taps = _as_variable(seq["input"], what), _taps(seq.get("taps", [0]), what, negative=False)
        else:
            x, taps = _as_variable(seq, what), (0,)
        if x.ndim < 1:
            raise ValueError(f"scan: {what} ({x}, type {x.type}) is a scalar; a sequence is iterated over its first axis")
        out.append((x, taps))
    return out


def _outputs_info(outputs_info) -> list:
    """(initial states with a leading axis over the taps, taps) per output; (None, ()) if not fed back."""
    out = []
    for o, info in enumerate(as_list(outputs_info)):
        what = f"outputs_info[{o}]"
        if isinstance(info, dict):
            unknown = set(info) - {"initial", "taps"}
            if unknown:
                raise ValueError(f"scan: {what} has unknown keys {sorted(unknown)}; expected 'initial' and 'taps'")
            if info.get("initial") is None:
                out.append((None, ()))
                continue
            init, taps = _as_any_variable(info["initial"], what), _taps(info.get("taps", [-1]), what, negative=True)
            if _is_untraced(init):
                out.append(_untraced_state(init, taps, what))
                continue
            if taps == (-1,):  # as in Aesara, the initial value is then the state itself
                init = et.expand_dims(init, 0)
            elif init.ndim < 1:
                raise ValueError(f"scan: {what}'s initial value ({init}) needs a leading axis over its "
                                 f"{-min(taps)} past values")
            out.append((init, taps))
        elif info is None:
            out.append((None, ()))
        elif _is_untraced(info):
            out.append(_untraced_state(info, (-1,), what))
        else:
            out.append((et.expand_dims(_as_variable(info, what), 0), (-1,)))
    return out


def _is_untraced(init) -> bool:
    """Whether a state's initial value is of a type that cannot be stacked over steps (a random
    generator): PyTensor's untraced state, whose value after the last step alone is returned."""
    return isinstance(init, Variable) and not isinstance(init.type, TensorType)


def _untraced_state(init, taps: tuple, what: str) -> tuple:
    if taps != (-1,):
        raise ValueError(f"scan: {what} ({init}, type {init.type}) is a state of a type that is not stacked "
                         f"over steps, so each step reads the previous value only (taps [-1]), not {list(taps)}")
    return init, taps


def _state_arg(init, tap: int):
    """fn's argument for a state at ``tap``: of the state's type, without the leading axis of a
    traced state's initial entries."""
    if _is_untraced(init):
        return init.type(f"{init.name}[t-1]" if init.name else None)
    return TensorType(init.dtype, init.type.shape[1:])(_tap_name(init, tap))


def n_steps_variable(n_steps):
    """``n_steps`` as an int64 scalar variable; anything else is refused."""
    n = _as_variable(n_steps, "n_steps")
    if n.ndim != 0 or n.dtype[:3] not in ("int", "uin"):
        raise TypeError(f"scan: n_steps must be an integer scalar, got {n} of type {n.type}")
    if isinstance(n, Constant) and int(n.data) < 0:
        raise ValueError(f"scan: n_steps must be >= 0, got {int(n.data)}")
    return et.cast(n, "int64") if n.dtype != "int64" else n


def _check_arity(fn, seqs, states, non_seqs) -> None:
    """A fn that cannot take scan's arguments gets an error listing them, in order."""
    roles = [f"sequences[{i}] at tap {tap}" for i, (_, taps) in enumerate(seqs) for tap in taps]
    roles += [f"outputs_info[{o}] at tap {tap}" for o, (_, taps) in enumerate(states) for tap in taps]
    roles += [f"non_sequences[{j}]" for j in range(len(non_seqs))]
    try:
        inspect.signature(fn).bind(*roles)
    except TypeError as err:
        raise TypeError(f"scan calls fn with {len(roles)} arguments, in this order: {', '.join(roles) or 'none'}; "
                        f"{getattr(fn, '__name__', 'fn')} cannot take them ({err})") from None
    except ValueError:  # a builtin without a signature: let the call itself tell
        pass


class until:
    """``return outputs, eg.until(condition)`` from a scan's ``fn`` (also after the updates):
    the loop stops after the first step whose ``condition``, a scalar, is true, as Aesara's
    ``until``. The outputs then have one entry per step that ran; ``n_steps`` or the sequences
    bound the loop. Gradients run back through the steps that ran (as in PyTensor); second
    derivatives through such a loop are not implemented."""

    def __init__(self, condition):
        self.condition = condition


def _split_result(returned) -> tuple[list, OrderedDict, Variable | None]:
    """fn's outputs, updates and stop condition (None without ``until``), from any of the
    forms PyTensor and Aesara accept: outputs, updates (a dict or a list of pairs), or both in
    that order (or updates first), in a list or a tuple, optionally followed by an ``until``."""
    condition = None
    if isinstance(returned, (tuple, list)) and returned and isinstance(returned[-1], until):
        condition = _as_variable(returned[-1].condition, "the condition of until")
        if condition.ndim != 0:
            raise TypeError(f"scan: until takes a scalar condition, got {condition} of type {condition.type}")
        returned = returned[0] if len(returned) == 2 else tuple(returned[:-1])
    outputs, updates = _outputs_and_updates(returned)
    outputs = [_as_any_variable(v, f"output {o} of fn") for o, v in enumerate(as_list(outputs))]
    checked = OrderedDict()
    for key, value in updates:
        if not isinstance(key, SharedVariable):
            raise TypeError(f"scan: fn's updates must update shared variables; {key} is not one")
        try:
            checked[key] = key.type.filter_variable(_as_any_variable(value, f"the update of {key}"))
        except (TypeError, ValueError) as err:
            raise TypeError(f"scan: fn's update of {key} (type {key.type}) has the wrong type: {err}") from err
    return outputs, checked, condition


def _outputs_and_updates(returned) -> tuple:
    """(fn's outputs, its updates as (shared variable, new value) pairs)."""
    if _is_updates(returned):
        return [], _pairs(returned)
    if isinstance(returned, (tuple, list)) and len(returned) == 2:
        first, second = returned
        if _is_updates(second):
            return first, _pairs(second)
        if isinstance(first, dict):
            return second, _pairs(first)
    return returned, []


def _is_updates(value) -> bool:
    """A dict, or a non-empty list or tuple of (variable, new value) pairs."""
    if isinstance(value, dict):
        return True
    return (isinstance(value, (tuple, list)) and bool(value)
            and all(isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[0], Variable) for p in value))


def _pairs(updates) -> list:
    return list(updates.items()) if isinstance(updates, dict) else [tuple(p) for p in updates]


def _check_output(o: int, out, init) -> None:
    """An output fed back must have its state's type (a traced one: its dtype and number of
    dimensions); an output not fed back is stacked over steps, so it must be a tensor."""
    if _is_untraced(init) or not isinstance(out.type, TensorType):
        _check_untraced(o, out, init)
    elif init is not None:
        _check_fed_back(o, out, init)


def _check_untraced(o: int, out, init) -> None:
    if init is None:
        raise TypeError(f"scan: output {o} of fn ({out}) is a {out.type}, which cannot be stacked over steps; "
                        f"give its initial value in outputs_info[{o}] to carry it from step to step "
                        "(its value after the last step is then returned)")
    state = _state_arg(init, -1).type
    if out.type != state:
        raise TypeError(f"scan: output {o} of fn ({out}) has type {out.type}, but it is fed back as a state of "
                        f"type {state} (from outputs_info[{o}]); they must be of the same type")


def _check_fed_back(o: int, out, init) -> None:
    """A traced output fed back must have its state's dtype and number of dimensions."""
    state = TensorType(init.dtype, init.type.shape[1:])
    if out.dtype != state.dtype or out.ndim != state.ndim:
        raise TypeError(f"scan: output {o} of fn ({out}) has type {out.type}, but it is fed back as a state of "
                        f"type {state} (from outputs_info[{o}]); they must agree in dtype and dimensions "
                        f"(cast one, e.g. et.cast(out, {state.dtype!r}))")
    for axis, (a, b) in enumerate(zip(out.type.shape, state.shape)):
        if a is not None and b is not None and a != b:
            raise ValueError(f"scan: output {o} of fn has {a} entries on axis {axis}, its initial state "
                             f"(outputs_info[{o}]) {b}; a state keeps its shape")


def _creation_mark() -> int:
    """A number below that of every Variable made from now on (Variables are numbered in the
    order they are made: ``auto_name``)."""
    return _creation_number(Variable(None))


def _creation_number(v: Variable) -> int:
    return int(v.auto_name.removeprefix("auto_"))


def _default_updates(expressions, updates, made_before: int) -> list:
    """(shared variable, its default_update) for each one that a node ``fn`` made reads, that
    has one and that fn does not update: a random draw's generator, say. As in PyTensor, it
    is then a loop state (each step draws anew, and the generator after the last step is in
    the returned updates); left alone it would be loop-invariant, and every step would get
    the same draw. A draw made before the loop (numbered below ``made_before``) is a value
    the steps read, one for all of them: its generator is not the loop's to advance."""
    found, seen = [], set(updates)
    todo = _read_by_new_nodes(expressions, made_before)
    while todo:  # a default update may read other shared variables that have one
        new = [v for v in graph_inputs(todo) if isinstance(v, SharedVariable) and v not in seen
               and getattr(v, "default_update", None) is not None]
        seen.update(new)
        found += [(v, v.default_update) for v in new]
        todo = [v.default_update for v in new]
    return found


def _read_by_new_nodes(expressions, made_before: int) -> list:
    """The shared variables read by the nodes made since ``made_before`` that ``expressions``
    depend on; the walk stops at variables made earlier (the outer graph)."""
    shared, seen, todo = {}, set(), [v for v in expressions if _creation_number(v) > made_before]
    while todo:
        node = todo.pop().owner
        if node is None or node in seen:
            continue
        seen.add(node)
        for v in node.inputs:
            if isinstance(v, SharedVariable):
                shared[v] = None
            elif _creation_number(v) > made_before:
                todo.append(v)
    return list(shared)


def _check_strict(invariants, non_seqs) -> None:
    passed = set(non_seqs)
    unlisted = [v for v in graph_inputs(invariants, passed) if v not in passed and not isinstance(v, Constant)]
    if unlisted:
        raise MissingInputError(f"scan(strict=True): fn reads {', '.join(map(str, unlisted))}, which is not in "
                                "non_sequences; pass it there, or use strict=False")


def _loop_invariants(outputs, step_args) -> list:
    """The non-constant variables the loop reads that depend on no per-step variable: the
    outermost such expressions, in a fixed order; each becomes an outer input."""
    varying, constant = set(step_args), set()
    nodes = toposort(outputs, step_args)
    for node in nodes:
        if any(v in varying for v in node.inputs):
            varying.update(node.outputs)
        elif all(isinstance(v, Constant) or v in constant for v in node.inputs):
            # a function of constants only (a broadcast exponent, say): it stays inside, where
            # the inner e-graph folds it; as an input it would be a variable to differentiate
            constant.update(node.outputs)

    def hoisted(v) -> bool:
        return v not in varying and v not in constant and not isinstance(v, Constant)

    found: dict[Variable, None] = {}
    for node in nodes:
        if node.outputs[0] in varying:
            found.update((v, None) for v in node.inputs if hoisted(v))
    found.update((v, None) for v in outputs if hoisted(v))
    return list(found)

