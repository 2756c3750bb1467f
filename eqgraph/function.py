"""``eqgraph.function``: the whole compiler on one screen.

    user graph -> FunctionGraph -> encode -> saturate -> snapshot -> extract -> fuse -> link -> Function

Each stage's result is kept in ``f.stages`` so a user can print the graph
before and after optimization, read the saturation report, open the e-graph,
and see the program that runs.
"""

from __future__ import annotations

import contextlib
import gc
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from eqgraph import egraph, graph_cache
from eqgraph.compile_io import _input_state, _unwrap_in, _unwrap_out
from eqgraph.egraph import DEFAULT_RULESETS, EncodedGraph, Limits, Report
from eqgraph.egraph.saturate import load_rulesets
from eqgraph.exec.backends import get_backend
from eqgraph.exec.dask.backend import DaskBackend
from eqgraph.exec.debugmode import DebugFunction
from eqgraph.exec.function import Function
from eqgraph.exec.fusion import fuse
from eqgraph.exec.link import Program, link
from eqgraph.exec.inplace import destroy_dead_inputs
from eqgraph.exec.profile import ProfileStats
from eqgraph.settings import COMPILE_CHOICES, config
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.sharedvar import SharedVariable
from eqgraph.extract.extraction import Extraction, extract
from eqgraph.extract.unstable import unstable_patterns
from eqgraph.terms.null_type import DisconnectedType, NullType
from eqgraph.extract.view import EGraphView
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.graph import clone_replace, toposort
from eqgraph.terms.printing import debugprint
from eqgraph.terms.type import describe_value


class UnusedInputError(ValueError):
    """An input that no output depends on (``on_unused_input="raise"``)."""


@dataclass
class Stages:
    """What each compiler stage produced, for inspection."""

    graph: FunctionGraph            # the user's graph, cloned
    encoded: EncodedGraph | None    # the e-graph; None where the graph cache had the result
    report: Report                  # why saturation stopped, which rules fired
    extraction: Extraction          # the chosen e-node per e-class, with costs
    optimized: FunctionGraph        # what extraction chose
    fused: FunctionGraph            # that graph with elementwise groups fused: what was linked
    program: Program

    @property
    def tier(self) -> str:
        """What ran the last call (on the thread that compiled the function): "numba-whole" (the
        graph as one Numba function), "numba-kernels" (the program, with Numba kernels for some
        of its nodes) or "numpy" (the program alone)."""
        return self.program.compiles.tier

    @property
    def whole_function(self) -> str | None:
        """The graph as one Numba function: None (there is none: Numba is off, or a node has no
        Numba form), "pending", "compiled", "loaded from cache" or "failed"."""
        return self.program.compiles.whole

    @property
    def egraph(self) -> EGraphView:
        """Open the e-graph: e-classes, members, costs, the rules behind them, DOT/HTML."""
        if self.encoded is None:
            raise RuntimeError("this function's optimized graph was loaded from the graph cache, so there is "
                               "no e-graph to open; compile with eqgraph.config.graph_cache = '' to see it")
        return EGraphView(self.extraction, self.report)

    def __str__(self):
        stopped = f" (extraction stopped early: {self.extraction.stopped})" if self.extraction.stopped else ""
        return (f"== graph ==\n{debugprint(self.graph, file='str')}"
                f"== saturation ==\n{self.report}\n"
                f"== optimized (cost {self.extraction.dag_cost:.0f}){stopped} ==\n"
                f"{debugprint(self.optimized, file='str')}"
                f"== fused (what runs) ==\n{debugprint(self.fused, file='str')}")


def function(inputs, outputs=None, updates=None, givens=None, name=None, on_unused_input="raise",
             allow_input_downcast=None, profile=False, trust_input=False, backend="numpy",
             allow_gc=True, rulesets=DEFAULT_RULESETS, limits=Limits(), cost_model=None,
             exact_extraction=False, no_default_updates=False, mode=None, fusion=True,
             chunks=None, assume_finite=None, compile=None, rebuild_strict=True) -> Function:
    """Compile ``outputs`` as a function of ``inputs``.

    Parameters
    ----------
    inputs : list of Variables (or ``In``), the arguments in order (shared variables are implicit).
    outputs : a Variable or a list of them; the call returns the same structure.
    updates : ``{shared: new value expression}``, applied together after each call.
    givens : ``{variable: replacement}`` substituted before compiling.
    rebuild_strict : each ``givens`` replacement must fit the type of the variable it replaces;
        False lets it have another type (a matrix for a vector), and the graph is rebuilt with it.
    on_unused_input : "raise", "warn" or "ignore" for inputs no output needs.
    trust_input : skip checking arguments (faster; wrong values give wrong answers).
    profile : time every node at run time (``f.profile``) and every rewrite rule while compiling.
    backend : "numpy", "cupy" or "dask" (Dask arguments give lazy Dask results; NumPy ones are
        chunked by ``chunks``, what ``dask.array.from_array`` takes, and give NumPy results).
    rulesets : built-in ruleset names, ``.egg`` paths or rule strings; ``[]`` for no rewrites.
    limits : ``eqgraph.Limits(iterations, nodes, seconds)`` bounding saturation; ``seconds`` bounds
        saturation and extraction together (``f.stages.extraction.stopped`` says when it ran out).
    cost_model : how extraction prices a node (default ``eqgraph.extract.CostModel()``).
    exact_extraction : extract the cheapest graph by integer programming (needs SciPy; e-graphs
        up to a few thousand e-nodes) rather than cheapest-first plus local search.
    allow_input_downcast : how a call converts arguments (PyTensor's rules): True casts every
        value; False only converts safely; None (the default) also rounds a Python float into floatX.
    no_default_updates : True: do not apply the ``default_update`` of the shared variables used; a
        list of shared variables: not theirs; False (the default): apply every one not in ``updates``.
    mode : None (or "FAST_RUN"), or "debug" (or "DebugMode"): run every op's ``debug_perform`` and
        check, after each call, every e-class extraction touched by evaluating several of its
        terms; a disagreement raises ``eqgraph.DebugModeError`` naming the rule behind it.
    fusion : fuse connected elementwise nodes into one ``Composite`` node each (not in debug mode).
    assume_finite : True also applies the rewrites that assume finite values and nonzero divisors
        (``x - x -> 0``, ``x / x -> 1``), as PyTensor does (docs/numerics.md); None reads
        ``eqgraph.config.assume_finite``; ``f.stages.report.assumed()`` lists those that fired.
    compile : when the Numba forms (the whole graph as one function, fused kernels) are built:
        "background" (the NumPy program runs until they are ready, then they take over),
        "eager" (before this returns) or "deferred" (when ``f.wait_compiled()`` asks); None reads
        ``eqgraph.config.compile``.  ``f.stages.tier`` says what ran the last call.

    The result pickles as the graph and these arguments, and is recompiled when loaded.
    """
    arguments = dict(locals())   # what pickling keeps
    inputs, specs = _unwrap_in(inputs)
    given_outputs, (outputs, borrowed) = outputs, _unwrap_out(outputs)
    inputs = _check_inputs(inputs)
    single, outputs = _check_outputs(outputs)
    _check_options(name, rulesets, limits, cost_model, allow_input_downcast)
    assume_finite, debug, compile = _check_assume_finite(assume_finite), _check_mode(mode), _check_compile(compile)
    arguments.update(outputs=given_outputs if borrowed else outputs[0] if single else outputs,
                     assume_finite=assume_finite, compile=compile)
    input_defaults, input_updates, input_names = _input_state(inputs, specs)
    targets, update_pairs, used = _targets(inputs, outputs, updates, givens, no_default_updates, input_updates,
                                           rebuild_strict)
    _check_defined(used)
    _check_unused(inputs, used, on_unused_input)
    runtime = _runtime(backend, chunks)
    if cost_model is None and hasattr(runtime, "cost_model"):  # e.g. Dask weighs intermediates more
        cost_model = runtime.cost_model()
    graph = FunctionGraph(inputs + [v for v in used if isinstance(v, SharedVariable) and v not in inputs], targets)
    stages = _optimize_and_link(graph, rulesets, limits, cost_model, exact_extraction, assume_finite,
                                fusion and not debug, dict(allow_gc=allow_gc, profile=profile, compile=compile,
                                                           impl="debug" if debug else runtime.name), runtime)
    compiled = (DebugFunction if debug else Function)(
        stages.program, inputs, len(outputs), single, [s for s, _ in update_pairs], runtime, stages=stages, name=name,
        allow_input_downcast=allow_input_downcast, trust_input=trust_input,
        profile=ProfileStats(stages.program, name) if profile else None)
    compiled.compiled_from = (function, arguments)
    if input_defaults or input_names:
        compiled.set_input_defaults(input_defaults, input_names)
    conversions = {i: (s.strict, s.allow_downcast) for i, s in enumerate(specs)
                   if s is not None and (s.strict or s.allow_downcast is not None)}
    if conversions or borrowed:
        compiled.set_conversions(conversions, borrowed)
    return compiled


def _targets(inputs, outputs, updates, givens, no_default_updates, input_updates,
             rebuild_strict=True) -> tuple[list, list, dict]:
    """``(the variables to compute, (shared variable, new value) pairs, every variable they use)``:
    the outputs and every update (explicit, attached to loops, default, of ``In`` inputs), with
    ``givens`` substituted."""
    update_pairs, given_pairs = _check_updates(updates), _check_givens(givens, rebuild_strict)
    for var, _ in given_pairs:
        if var in inputs:  # PyTensor's refusal: the replacement would have no effect on the argument
            raise RuntimeError(f"givens cannot replace {var}: {var} is an input of the function. To compute with "
                               f"g({var}) in its place, give a new input y and givens={{{var}: g(y)}}")
    suppressed = _check_no_default_updates(no_default_updates)

    def replaced(expressions):
        return clone_replace(expressions, given_pairs) if given_pairs and expressions else expressions

    targets = replaced(outputs + [expr for _, expr in update_pairs])
    used = _variables(targets, inputs)   # one walk; it refuses a graph edited into a cycle
    attached = _attached_updates(used, update_pairs, suppressed)  # scan(..., return_updates=False)
    if attached:
        update_pairs = update_pairs + attached
        targets += [expr for _, expr in attached]
        used = _variables(targets, inputs)
    while suppressed is not None:  # a random draw's generator, say; walks again only if there are some
        defaults = _default_updates(used, update_pairs, suppressed)
        if not defaults:
            break
        update_pairs = update_pairs + defaults
        targets += replaced([expr for _, expr in defaults])
        used = _variables(targets, inputs)  # a default update may use more (shared) variables
    if input_updates:  # an In's update is one more update, into the container its default lives in
        update_pairs = update_pairs + input_updates
        targets += replaced([expr for _, expr in input_updates])
        used = _variables(targets, inputs)
    return targets, update_pairs, used


def _optimize_and_link(graph, rulesets, limits, cost_model, exact_extraction, assume_finite, fusion, link_options,
                       runtime) -> Stages:
    """The compiler's stages on ``graph``: encode, saturate, snapshot, extract, fuse, link."""
    with _no_garbage_collection():  # compiling allocates many small objects that live on
        # read once: each stage finds its rules among these
        rulesets = [r.granting(("finite",) if assume_finite else ()) for r in load_rulesets(rulesets)]
        # what another process chose for this graph and these settings (graph_cache.py); not
        # when profiling or debugging, which look into the e-graph
        key = None if link_options["profile"] or link_options["impl"] == "debug" else graph_cache.key(
            graph, rulesets, limits, cost_model, exact_extraction, link_options["impl"])
        cached = graph_cache.load(key, graph)
        if cached is not None:
            encoded, report, extraction = None, cached.report, cached.extraction
        else:
            # encode, saturate, snapshot (egraph/sessions.py); profiling also times each rule
            encoded, report, snapshot, started = egraph.optimize(graph, rulesets, limits,
                                                                 time_rules=link_options["profile"])
            deadline = started + limits.seconds  # saturation and extraction share the time limit
            # extract/extraction.py, avoiding what the rule files declare unstable (extract/unstable.py)
            extraction = extract(snapshot, cost_model, exact_extraction, deadline, unstable_patterns(rulesets))
            graph_cache.store(key, graph, report, extraction)
        optimized = extraction.fgraph
        # exec/fusion.py, then fused nodes that overwrite dead inputs (exec/inplace.py)
        fused = destroy_dead_inputs(fuse(optimized)) if fusion else optimized
        # cells of its own for every input: a call reads the shared values into them;
        # "debug": ops run debug_perform
        transfer = getattr(runtime, "constant_to_device", runtime.to_device)
        program = link(fused, transfer=transfer, **link_options)
    return Stages(graph, encoded, report, extraction, optimized, fused, program)


def _runtime(backend, chunks):
    """The backend object for ``function(backend=..., chunks=...)``."""
    if backend == "dask":
        return DaskBackend(chunks)
    runtime = get_backend(backend)
    if chunks is not None and runtime.name != "dask":
        raise ValueError(f'chunks={chunks!r} is for backend="dask"; backend is {runtime.name!r}')
    return runtime


@contextlib.contextmanager
def _no_garbage_collection():
    """Pause Python's cyclic GC: its passes over the compiler's many live objects made
    compile time grow faster than the graph (bench/compile_time.py measures it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_inputs(inputs) -> list:
    if isinstance(inputs, Variable):
        raise TypeError("function() takes a list of inputs, e.g. function([x], y), not a single variable")
    if not isinstance(inputs, (list, tuple, Iterator)):
        raise TypeError("function() inputs must be a list of Variables, e.g. function([x], y), "
                        f"not {describe_value(inputs)}")
    inputs = list(inputs)
    for i, var in enumerate(inputs):
        if not isinstance(var, Variable):
            raise TypeError(f"Input #{i} of function() must be a symbolic Variable, not {describe_value(var)}")
        if isinstance(var, Constant):
            raise TypeError(f"Input #{i} ({var}) is a Constant; constants are part of the graph "
                            "and cannot be inputs")
        if isinstance(var, SharedVariable):
            raise TypeError(f"Cannot use a shared variable ({var}) as explicit input #{i}: shared variables "
                            "are implicit inputs. To substitute one, use givens={shared: other}")
    seen = set()
    for i, var in enumerate(inputs):
        if var in seen:
            raise UnusedInputError(f"Variable {var} is used twice in inputs to the function (input #{i} is "
                                   "listed more than once)")
        seen.add(var)
    return inputs


def _check_outputs(outputs) -> tuple[bool, list]:
    """(whether a single Variable was given, the output Variables)."""
    if outputs is None:
        return False, []
    if isinstance(outputs, Variable):
        return True, [outputs]
    expected = "function() outputs must be a Variable or a list of Variables"
    if isinstance(outputs, dict):
        raise TypeError(f"{expected}, not a dict; pass list(d.values()) and zip the results with the keys")
    if not isinstance(outputs, (list, tuple, Iterator)):
        # an array or a string is iterable, but its items are not outputs
        raise TypeError(f"{expected}, not {describe_value(outputs)}; to return a fixed value, "
                        "make it a constant with et.constant(value)")
    outputs = list(outputs)
    for i, var in enumerate(outputs):
        if not isinstance(var, Variable):
            raise TypeError(f"Output #{i} of function() must be a symbolic Variable, not "
                            f"{describe_value(var)}; wrap a value in et.constant(value)")
    return False, outputs


def _check_options(name, rulesets, limits, cost_model, allow_input_downcast) -> None:
    """The compile options whose misuse would otherwise fail deep inside the compiler."""
    _check_downcast(allow_input_downcast)
    if name is not None and not isinstance(name, str):
        raise TypeError(f"function() name must be a string or None, not {describe_value(name)}")
    expected = "rulesets must be a list of ruleset names, .egg paths, rule strings or (ruleset, mode) pairs"
    if isinstance(rulesets, str):
        raise TypeError(f"{expected}, not the string {rulesets[:40]!r}; write rulesets=[{rulesets[:40]!r}] "
                        "([] for no rewrites)")
    if not isinstance(rulesets, (list, tuple)):
        raise TypeError(f"{expected} ([] for no rewrites), not {describe_value(rulesets)}")
    if not isinstance(limits, Limits):
        raise TypeError("limits must be an eqgraph.Limits(iterations=..., nodes=..., seconds=...), "
                        f"not {describe_value(limits)}")
    if cost_model is not None and not callable(getattr(cost_model, "node_cost", None)):
        raise TypeError("cost_model must be None or an object with a node_cost(enode, op, in_types, "
                        f"out_type, child_ops) method, like eqgraph.CostModel(); not {describe_value(cost_model)}")


def _check_assume_finite(assume_finite) -> bool:
    """``assume_finite`` as given, or ``config.assume_finite`` for None."""
    if assume_finite is None:
        return config.assume_finite
    if not isinstance(assume_finite, bool):
        raise TypeError(f"function() assume_finite must be True, False or None (read eqgraph.config.assume_finite), "
                        f"not {describe_value(assume_finite)}")
    return assume_finite


def _check_compile(compile) -> str:
    """``compile`` as given, or ``config.compile`` for None."""
    if compile is None:
        return config.compile
    if compile not in COMPILE_CHOICES:
        raise ValueError(f"function() compile must be one of {', '.join(map(repr, COMPILE_CHOICES))} or None "
                         f"(read eqgraph.config.compile), not {compile!r}")
    return compile


MODES = {None: False, "FAST_RUN": False, "debug": True, "DebugMode": True, "DEBUG_MODE": True}


def _check_mode(mode) -> bool:
    """Whether ``mode`` asks for debug mode."""
    if mode not in MODES:
        raise ValueError(f"function() mode must be one of {', '.join(repr(m) for m in MODES)}, not {mode!r}")
    return MODES[mode]


def _check_givens(givens, rebuild_strict: bool = True) -> list:
    """``givens`` as (variable, replacement) pairs, each replacement of a type the variable
    accepts: the variable type's ``filter_variable`` narrows a compatible type (static shapes, checked
    at run time) and refuses another one; a value becomes a constant of the variable's type."""
    return _typed_pairs(givens, "givens", "variable: replacement", Variable,
                        not_a_key="givens keys must be symbolic Variables; {key} is not one",
                        twice="givens replaces {key} twice",
                        refused="givens cannot replace {key} (type {type}) with {value}",
                        typed=rebuild_strict)


def _check_updates(updates) -> list:
    """``updates`` as (shared variable, new value) pairs, each value of the variable's type
    (narrowed as for givens; a value becomes a constant)."""
    pairs = _typed_pairs(updates, "updates", "shared variable: new value", SharedVariable,
                         not_a_key="updates must update shared variables; {key} is not one",
                         twice="{key} is updated twice",
                         refused="The update of {key} (type {type}) is {value}")
    for var, value in pairs:
        _check_static_ones(var, value)
    return pairs


def _check_static_ones(var, value) -> None:
    """PyTensor's rule (``in_same_class``): an update may change a shared variable's lengths
    but not which axes are statically 1. An update whose type pins an axis to length 1 where
    the variable's type does not is a reduction or broadcast that would shrink the value (a
    (1, 1) sum stored into a (10, 10) variable); one with an axis of unknown length where the
    variable's is 1 is narrowed and checked at call time by ``filter_variable``."""
    shape, new = getattr(var.type, "shape", None), getattr(value.type, "shape", None)
    if shape is None or new is None:
        return
    pinned = [i for i, (s, n) in enumerate(zip(shape, new)) if n == 1 and s != 1]
    if pinned:
        axes = ", ".join(map(str, pinned))
        raise TypeError(f"The update of {var} (type {var.type}) has static shape {tuple(new)}: length 1 on "
                        f"axes {axes}, where {var} has no fixed length, would change the shape of its "
                        f"value; broadcast the update to {var}'s shape (et.broadcast_to(update, {var}.shape)) "
                        "or give the shared variable that static shape")


def _typed_pairs(mapping, argument: str, form: str, key_class, not_a_key: str, twice: str,
                 refused: str, typed: bool = True) -> list:
    """``mapping``'s (key, value) pairs with each value passed through its key's
    ``filter_variable`` (with ``typed``; else only made a variable); the messages name what is
    wrong with a pair."""
    out, seen = [], set()
    for key, value in _pairs(mapping, argument, form):
        if not isinstance(key, key_class):
            raise TypeError(not_a_key.format(key=_what(key)))
        if key in seen:
            raise ValueError(twice.format(key=key))
        seen.add(key)
        try:
            narrowed = key.type.filter_variable(value) if typed else as_tensor_variable(value)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{refused.format(key=key, type=key.type, value=_what(value))}: {err}") from err
        if isinstance(value, Variable) and narrowed is not value and narrowed.name is None:
            narrowed.name = f"{argument}[{key}]"  # a call whose value breaks the narrowing names it
        out.append((key, narrowed))
    return out


def _pairs(mapping, argument: str, form: str) -> list:
    """``mapping`` (None, a dict, or a list or tuple of 2-item pairs) as a list of pairs."""
    if mapping is None:
        return []
    if isinstance(mapping, dict):
        return list(mapping.items())
    key, value = form.split(": ")
    expected = f"{argument} must be a dict {{{form}}} or a list of ({key}, {value}) pairs"
    if not isinstance(mapping, (list, tuple)):
        raise TypeError(f"{expected}, not {describe_value(mapping)}")
    for i, pair in enumerate(mapping):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise TypeError(f"{expected}; item #{i} is {describe_value(pair)}")
    return [tuple(pair) for pair in mapping]


def _what(x) -> str:
    """A variable with its type, or a value, for error messages."""
    return f"{x} of type {x.type}" if isinstance(x, Variable) else f"the value {describe_value(x)}"


def _check_downcast(allow_input_downcast) -> None:
    """PyTensor's three settings; another value (a string, a number) would be read as one of them."""
    if allow_input_downcast is not None and not isinstance(allow_input_downcast, bool):
        raise TypeError("allow_input_downcast must be None, True or False, not "
                        f"{describe_value(allow_input_downcast)}")


def _check_no_default_updates(no_default_updates) -> set | None:
    """The shared variables whose ``default_update`` is suppressed, or None for all of them:
    ``True`` suppresses every one, ``False`` none, a list or tuple of shared variables
    (a random stream's generators, say) exactly those."""
    if no_default_updates is True:
        return None
    if no_default_updates is False:
        return set()
    if not isinstance(no_default_updates, (list, tuple)):
        raise TypeError("no_default_updates must be True, False or a list of shared variables, "
                        f"not {describe_value(no_default_updates)}")
    for i, var in enumerate(no_default_updates):
        if not isinstance(var, SharedVariable):
            what = var if isinstance(var, Variable) else describe_value(var)
            raise TypeError(f"no_default_updates item #{i} ({what}) is not a shared variable; "
                            "list the shared variables whose default_update must not apply")
    return set(no_default_updates)


def _attached_updates(used, update_pairs, suppressed) -> list:
    """(shared variable, new value) that loops built with ``scan(..., return_updates=False)`` keep
    on their node, for the loops ``used`` reaches; those ``updates`` already give, or that
    ``no_default_updates`` suppresses (None: all), are left out."""
    if suppressed is None:
        return []
    skipped = {var for var, _ in update_pairs} | suppressed
    nodes = dict.fromkeys(v.owner for v in used if v.owner is not None and "updates" in v.owner.tag)
    return _check_updates([(var, new) for node in nodes for var, new in node.tag["updates"].items()
                           if var not in skipped])


def _default_updates(used, update_pairs, suppressed: set) -> list:
    """(shared variable, its ``default_update``) for each used shared variable that has one,
    no update yet and is not ``suppressed``, checked like ``updates``."""
    skipped = {var for var, _ in update_pairs} | suppressed
    return _check_updates([(var, var.default_update) for var in used if isinstance(var, SharedVariable)
                           and var.default_update is not None and var not in skipped])


def _variables(targets, inputs) -> dict:
    """Every variable ``targets`` depend on, not looking past ``inputs``, in a fixed order
    (a dict used as an ordered set); toposort raises GraphCycleError on a cycle."""
    used = dict.fromkeys(targets)
    for node in toposort(targets, inputs):
        for var in node.inputs:
            used[var] = None
        for var in node.outputs:
            used[var] = None
    return used


def _check_defined(used) -> None:
    """A graph with an undefined (NullType) or disconnected gradient in it cannot run."""
    for var in used:
        if isinstance(var.type, NullType):
            raise TypeError(f"Cannot compile a graph that uses an undefined gradient ({var}): {var.type.why_null}")
        if isinstance(var.type, DisconnectedType):
            raise TypeError(f"Cannot compile a graph that uses a disconnected gradient ({var}); "
                            'ask grad for return_disconnected="zero"')


def _check_unused(inputs, used, policy) -> None:
    if policy not in ("raise", "warn", "ignore"):
        raise ValueError(f'on_unused_input must be "raise", "warn" or "ignore", not {policy!r}')
    if policy == "ignore" or not inputs:
        return
    for i, var in enumerate(inputs):
        if var not in used:
            msg = (f"Input #{i} ({var}) is not used to compute any output. "
                   'Pass on_unused_input="ignore" (or "warn") if that is intended.')
            if policy == "raise":
                raise UnusedInputError(msg)
            warnings.warn(msg, stacklevel=3)
