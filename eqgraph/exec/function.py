"""`Function`: the callable that ``eqgraph.function`` returns.

A call filters its arguments into the input cells, reads the shared variables'
values, runs the program, applies the updates of shared variables (all
together, after every output is computed) and returns the outputs.

Threads: each thread calling a Function gets its own storage cells (a program
relinked over the same graph on its first call), so calls run in parallel; a
call that updates shared variables holds their locks from reading them to
writing them, so concurrent updates are applied one call after the other.

Memory: outputs and new shared values are copied only where they would share
memory with the caller's arguments, constants, shared values that outlive the
call, or another result (``_ResultCopies``).
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

from eqgraph.exec.link import Program
from eqgraph.exec.profile import ProfileStats
from eqgraph.terms.basic import Constant
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.printing import debugprint
from eqgraph.terms.type import describe_value
from eqgraph.xp import copy_array


def _expected(var) -> str:
    describe = getattr(var.type, "describe", None)
    return describe() if describe else str(var.type)


class _Storage:
    """One thread's view of a program: its cells for arguments, shared values and results."""

    __slots__ = ("program", "run", "call", "args", "shared", "outputs", "updates")

    def __init__(self, program: Program, n_inputs: int, n_outputs: int, containers):
        self.program = program
        self.run = program.run
        self.call = program.call     # the generated program without cells, or None
        self.args = program.input_cells[:n_inputs]
        self.shared = list(zip(program.input_cells[n_inputs:], containers))  # (cell, container)
        self.outputs = program.output_cells[:n_outputs]
        self.updates = program.output_cells[n_outputs:]


@dataclass
class Maker:
    """``f.maker``, as in PyTensor: ``f.maker.fgraph`` is the compiled graph."""

    fgraph: FunctionGraph
    inputs: list                    # the explicit inputs, in order


class Function:
    """A compiled graph: ``f(*args, **kwargs)`` returns its output(s)."""

    def __init__(self, program: Program, inputs, n_outputs: int, single_output: bool, updated_shared,
                 backend, stages=None, name=None, allow_input_downcast=None, trust_input=False,
                 profile=None, shared_containers=None):
        self.program = program
        self.fgraph = program.fgraph
        self.maker = Maker(program.fgraph, list(inputs))
        self.inputs = list(inputs)                 # the user's explicit inputs, in order
        self.name = name
        self.stages = stages
        self.profile = profile
        self.trust_input = trust_input
        self._n_outputs = n_outputs
        self._single = single_output
        self._backend = backend
        self._n_inputs = len(self.inputs)
        self._filters = [v.type.filter for v in self.inputs]
        self._downcast = allow_input_downcast
        named = [v.name for v in self.inputs]
        # a name several inputs share names none of them: a keyword with it is refused, as in PyTensor
        self._ambiguous = {n: [i for i, m in enumerate(named) if m == n] for n in named if n and named.count(n) > 1}
        self._positions = {n: i for i, n in enumerate(named) if n and n not in self._ambiguous}
        # the shared variables read, in the program's input order (clones share the container);
        # ``copy(swap=...)`` passes other containers in the same order
        if shared_containers is None:
            shared_containers = [v.container for v in program.fgraph.inputs[self._n_inputs:]]
        self._containers = list(shared_containers)
        self._updated = [getattr(s, "container", s) for s in updated_shared]  # variables or containers
        # an updating call locks every shared value it reads or writes, in one global order
        held = {id(c): c for c in self._containers + self._updated}
        self._locks = [held[k].lock for k in sorted(held)]
        if len(self._containers) == 1 and not self._updated:
            self._locks = []  # reading one value is atomic by itself
        self._lock_whole_call = bool(self._updated)
        copies = _ResultCopies(program, self._n_inputs, n_outputs, self._updated)
        self._copy_outputs, self._copy_updates = copies.outputs, copies.updates
        self._on_device = backend.name != "numpy"
        # optional backend hooks: Dask runs the program refusing to compute, and computes
        # all results in one pass (exec/dask/backend.py)
        self._run_program = getattr(backend, "run", None)
        self._all_to_host = getattr(backend, "all_to_host", None)
        self._local = threading.local()
        self._local.storage = _Storage(program, self._n_inputs, n_outputs, self._containers)
        # no shared values read or updated, on the host, not profiled: run, return the outputs
        self._plain = not (self._containers or self._updated or self._on_device or profile is not None)
        self._simple = self._plain and single_output and n_outputs == 1 and not self._copy_outputs
        # the generated program takes the arguments and returns the outputs: no cells in between
        self._direct = self._plain and program.call is not None
        # the same with shared values: they are read into its arguments, and its last results
        # are their updates, so the whole Numba function serves these calls too
        self._direct_shared = (not self._plain and program.call is not None and not self._on_device
                               and profile is None and self._run_program is None)

    # -- calling ----------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        try:
            storage = self._local.storage
        except AttributeError:  # this thread's first call
            storage = self._new_thread_storage()
        if kwargs or len(args) != self._n_inputs:
            args = self._merge_keywords(args, kwargs)
        if self._direct:  # the common case: arguments in, outputs out
            if not self.trust_input:
                args = self._filtered(args)
            outputs = _copied(storage.call(*args), self._copy_outputs)
            return outputs[0] if self._single else outputs
        if self._direct_shared:
            return self._call_with_shared(storage, args if self.trust_input else self._filtered(args))
        for cell, value in zip(storage.args, args if self.trust_input else self._filtered(args)):
            cell[0] = value
        if self._simple:  # one output, nothing to copy, read or update
            storage.run()
            return storage.outputs[0][0]
        if self._plain:  # no shared values to read or update
            storage.run()
            outputs = self._outputs(storage)
            return outputs[0] if self._single else outputs
        return self._call(storage, args)

    def _filtered(self, args) -> list:
        """The arguments as the inputs' types take them (``filter``), or a TypeError naming the bad one."""
        downcast = self._downcast
        try:
            return [filt(value, False, downcast) for filt, value in zip(self._filters, args)]
        except (TypeError, ValueError) as err:
            raise self._bad_argument(args, err) from None

    def _new_thread_storage(self) -> _Storage:
        program = self.program.relink()
        if self.profile is not None:
            self.profile.add_program(program)
        self._local.storage = storage = _Storage(program, self._n_inputs, self._n_outputs, self._containers)
        return storage

    def _call(self, storage: _Storage, args):
        locks = self._lock_shared()
        try:
            if self._on_device:  # moved once: the device copy becomes the shared value
                to_device = self._backend.to_device
                for container in self._containers:
                    container[0] = to_device(container[0])
            for cell, container in storage.shared:
                cell[0] = container[0]
            locks = self._shared_read(locks)
            to_host = None
            if self._on_device:
                backend = self._backend
                if not any(backend.is_device_array(a) for a in args):
                    to_host = backend.to_host
                for cell in storage.args:
                    cell[0] = backend.to_device(cell[0])
            if self._run_program is not None:
                self._run_program(storage.run)
            else:
                storage.run()
            outputs = self._outputs(storage, to_host)
            if storage.updates:
                self._store_updates([cell[0] for cell in storage.updates])
        finally:
            _release(locks)
        if self.profile is not None:
            self.profile.calls += 1
        return outputs[0] if self._single else outputs

    def _call_with_shared(self, storage: _Storage, args):
        """``_call`` on the host without cells: the arguments and the shared values in, the
        outputs and the updates out."""
        locks = self._lock_shared()
        try:
            shared = [container[0] for container in self._containers]
            locks = self._shared_read(locks)
            results = storage.call(*args, *shared)
            outputs = _copied(results[:self._n_outputs], self._copy_outputs)
            self._store_updates(results[self._n_outputs:])
        finally:
            _release(locks)
        return outputs[0] if self._single else outputs

    def _lock_shared(self) -> list:
        """Takes the locks of the shared values this function reads or updates."""
        for lock in self._locks:
            lock.acquire()
        return self._locks

    def _shared_read(self, locks):
        """Called once the shared values are read: a call that updates none lets other calls
        update them from here on; one that updates them keeps the locks to the end."""
        if self._lock_whole_call:
            return locks
        _release(locks)
        return ()

    def _outputs(self, storage: _Storage, to_host=None) -> list:
        """The call's outputs, copied where they would share memory (``_ResultCopies``)."""
        outputs = _copied([cell[0] for cell in storage.outputs], self._copy_outputs)
        if to_host is not None:
            outputs = self._all_to_host(outputs) if self._all_to_host else [to_host(o) for o in outputs]
        return outputs

    def _store_updates(self, values: list):
        # every new value is read before any is written: an update may be another shared variable
        for container, value in zip(self._updated, _copied(values, self._copy_updates)):
            container[0] = value

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Wait until the Numba forms of this function (and of this thread's copy of its program)
        are compiled or loaded and in use, up to ``timeout`` seconds (None: for good); whether
        they are.  With ``compile="deferred"`` they are compiled now, on this thread."""
        programs = [self.program]
        storage = getattr(self._local, "storage", None)
        if storage is not None and storage.program is not self.program:
            programs.append(storage.program)
        return all([program.compiles.wait(timeout) for program in programs])

    # -- inputs given with eqgraph.In ----------------------------------------------------
    #: {input position: Container of its default}; an In's update writes the container
    _defaults: dict = {}
    _borrowed: frozenset = frozenset()

    def set_input_defaults(self, defaults: dict, names: dict):
        """Defaults for inputs a call may leave out, and the keywords (``In(name=...)``) naming
        inputs; ``eqgraph.function`` sets them for its ``In`` inputs."""
        self._defaults = dict(defaults)
        self._positions = {**self._positions, **names}

    def set_conversions(self, conversions: dict, borrowed=frozenset()):
        """``{input position: (strict, allow_downcast)}`` of the ``In`` inputs that convert their
        arguments their own way (``allow_downcast=None``: the function's way), and the positions
        of the outputs returned without the copy that keeps them the caller's own (``Out(borrow=True)``)."""
        for i, (strict, downcast) in conversions.items():
            self._filters[i] = functools.partial(_convert, self._filters[i], strict, downcast)
        kept = self._kept_memory()
        self._copy_outputs = [i for i in self._copy_outputs if i not in borrowed or self._root(i) not in kept]
        self._borrowed = frozenset(borrowed)
        self._simple = self._plain and self._single and self._n_outputs == 1 and not self._copy_outputs

    def _kept_memory(self) -> set:
        """The memory a borrowed output may share: the constants' and folded values' (never an
        argument's or a shared value's, which the caller owns)."""
        roots, fgraph = self.program.roots, self.program.fgraph
        return {roots[v] for v in fgraph.variables if isinstance(v, Constant)} | {roots[v] for v in self.program.folded}

    def _root(self, output: int):
        return self.program.roots[self.program.fgraph.outputs[output]]

    def dprint(self, **kwargs):
        """PyTensor's ``f.dprint()``: ``eqgraph.debugprint`` of this function (the graph that runs)."""
        return debugprint(self, **kwargs)

    def __getitem__(self, key):
        """The current default of the input named ``key`` (or that variable), as PyTensor's ``f[key]``."""
        return self._default_cell(key)[0]

    def __setitem__(self, key, value):
        i = self._input_position(key)
        self._default_cell(key)[0] = self.inputs[i].type.filter(value, False, True)

    def _default_cell(self, key):
        i = self._input_position(key)
        if i not in self._defaults:
            raise KeyError(f"{self._title()}: input {self._arg_name(i)} has no default value")
        return self._defaults[i]

    def _input_position(self, key) -> int:
        if isinstance(key, str) and key in self._positions:
            return self._positions[key]
        for i, var in enumerate(self.inputs):
            if var is key:
                return i
        raise KeyError(f"{self._title()} has no input {key!r}")

    # -- argument errors ------------------------------------------------------------
    def _merge_keywords(self, args, kwargs):
        if len(args) > len(self.inputs) or (not kwargs and not self._defaults and len(args) < len(self.inputs)):
            self._wrong_count(len(args))
        merged = list(args) + [_MISSING] * (len(self.inputs) - len(args))
        for key, value in kwargs.items():
            if key in self._ambiguous and key not in self._positions:
                positions = [f"#{i}" for i in self._ambiguous[key]]
                raise TypeError(f"{self._title()}: the keyword {key!r} names inputs {', '.join(positions[:-1])} and "
                                f"{positions[-1]}; pass them by position")
            if key not in self._positions:
                names = ", ".join(repr(n) for n in self._positions) or "none"
                raise TypeError(f"{self._title()} got an unknown keyword argument {key!r} "
                                f"(named inputs: {names})")
            i = self._positions[key]
            if i < len(args):
                raise TypeError(f"{self._title()} got input {key!r} twice (by position and by name)")
            merged[i] = value
        for i, cell in self._defaults.items():
            if merged[i] is _MISSING and cell[0] is not None:  # None: an In's update before its first call
                merged[i] = cell[0]
        missing = [self._arg_name(i) for i, v in enumerate(merged) if v is _MISSING]
        if missing:
            raise TypeError(f"{self._title()} is missing input(s): {', '.join(missing)}")
        return merged

    def _wrong_count(self, given: int):
        expected = ", ".join(self._arg_name(i) for i in range(len(self.inputs))) or "no inputs"
        kind = "Too many" if given > self._n_inputs else "Too few"
        raise TypeError(f"{kind} arguments to {self._title()}: expected {self._n_inputs} "
                        f"({expected}), got {given}")

    def _bad_argument(self, args, err) -> TypeError:
        i = next((i for i, (f, a) in enumerate(zip(self._filters, args)) if not _accepts(f, a, self._downcast)),
                 0)
        value, var = args[i], self.inputs[i]
        return TypeError(f"Bad argument {self._arg_name(i)} to {self._title()}: expected a "
                         f"{_expected(var)}, got {describe_value(value)}. {err}")

    def _arg_name(self, i: int) -> str:
        name = self.inputs[i].name
        return f"#{i} ({name!r})" if name else f"#{i}"

    def _title(self) -> str:
        return f"function {self.name!r}" if self.name else "the compiled function"

    def __repr__(self):
        return f"<eqgraph Function {self.name or ''} {len(self.inputs)} inputs -> {self._n_outputs} outputs>"

    # -- copies -------------------------------------------------------------------------
    def copy(self, share_memory: bool = False, swap=None, delete_updates: bool = False, name=None):
        """A copy of this function, as PyTensor's ``Function.copy``.

        share_memory : the copy uses this function's storage cells (calls of one overwrite the
            other's intermediate values; not for use from two threads); otherwise cells of its own.
        swap : ``{shared variable: other shared variable of the same type}``: the copy reads and
            updates the other variables instead (the compiled graph is reused, not recompiled).
        delete_updates : the copy computes the outputs only, updating nothing.
        name : the copy's name (default: this function's).
        """
        swapped = _swapped_containers(swap, self.program.fgraph.inputs[self._n_inputs:], self._title())
        program = self.program if share_memory else self.program.relink()
        containers = [swapped.get(id(c), c) for c in self._containers]
        updated = [] if delete_updates else [swapped.get(id(c), c) for c in self._updated]
        profile = ProfileStats(program, self.profile.name) if self.profile is not None else None
        new = type(self)(program, self.inputs, self._n_outputs, self._single, updated, self._backend,
                         stages=self.stages, name=self.name if name is None else name,
                         allow_input_downcast=self._downcast, trust_input=self.trust_input, profile=profile,
                         shared_containers=containers)
        new._defaults, new._positions = self._defaults, self._positions  # an In's state, shared
        new._filters = list(self._filters)
        new.set_conversions({}, self._borrowed)
        if self.compiled_from is not None or self.copied_from is not None:  # it pickles
            new.copied_from = _CopiedFrom(self, dict(swap or {}), delete_updates, name)
        return new

    #: (the compile function, its keyword arguments), set by ``eqgraph.function``
    compiled_from = None
    #: how ``copy`` made this function from another, for pickling
    copied_from = None

    def __reduce__(self):
        """Pickle the user's graph and the compile arguments; loading recompiles them.

        The program's thunks and the e-graph session (egglog objects) cannot be pickled,
        and recompiling gives the same function, reading the shared variables that were
        pickled with it."""
        if self.compiled_from is None and self.copied_from is None:
            raise TypeError(f"{self!r} was not made by eqgraph.function and cannot be pickled")
        if self.copied_from is not None:
            return _recompile_copy, (self.copied_from,)
        build, arguments = self.compiled_from
        return _recompile, (build, {**arguments, "trust_input": self.trust_input})  # an attribute users set


def _convert(filt, strict, downcast, value, _strict, function_downcast):
    """``filt`` with an ``In``'s own ``strict`` and ``allow_downcast`` (None: the function's)."""
    return filt(value, strict, function_downcast if downcast is None else downcast)


def _copied(values, positions) -> list:
    """``values`` with those at ``positions`` copied (into a new list): they would share memory
    with an input, a shared value or another result."""
    if not positions:
        return values
    values = list(values)
    for i in positions:
        values[i] = copy_array(values[i])
    return values


def _release(locks) -> None:
    for lock in reversed(locks):
        lock.release()


def _accepts(filt, value, downcast) -> bool:
    try:
        filt(value, False, downcast)
        return True
    except (TypeError, ValueError):
        return False


def _recompile(build, arguments):
    return build(**arguments)


@dataclass
class _CopiedFrom:
    """How a copy is rebuilt when unpickled: the original (pickled as itself), copied again."""

    original: Function
    swap: dict
    delete_updates: bool
    name: str | None

def _recompile_copy(copied: _CopiedFrom):
    return copied.original.copy(swap=copied.swap, delete_updates=copied.delete_updates, name=copied.name)


def _swapped_containers(swap, shared_inputs, title: str) -> dict:
    """``{id(old container): new container}`` for ``copy(swap=...)``, checking each pair."""
    if not swap:
        return {}
    if not isinstance(swap, dict):
        raise TypeError(f"copy(swap=...) must be a dict {{shared variable: shared variable}}, "
                        f"not {describe_value(swap)}")
    used = {id(v.container): v for v in shared_inputs}
    out = {}
    for old, new in swap.items():
        for role, var in (("key", old), ("value", new)):
            if not hasattr(var, "container"):
                raise TypeError(f"copy(swap=...): every {role} must be a shared variable; {var!r} is not one")
        if id(old.container) not in used:
            names = ", ".join(str(v) for v in used.values()) or "none"
            raise ValueError(f"copy(swap=...): {old} is not a shared variable of {title} (it uses: {names})")
        if new.type != old.type:
            raise TypeError(f"copy(swap=...): {new} has type {new.type}, but {old} it replaces has type "
                            f"{old.type}; a swapped shared variable must have the same type")
        out[id(old.container)] = new.container
    return out


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


class _ResultCopies:
    """Which results a call copies: exactly those that would otherwise share memory with
    something that outlives the call (the caller's arguments, constants and folded values,
    shared values that are not replaced) or with another result.

    An update keeps its array when it can (it is stored, not returned), and an output that
    views a shared value being replaced by a new array needs no copy: once the call is over
    only the output holds the old array (PyTensor makes the same exception).
    """

    def __init__(self, program: Program, n_inputs: int, n_outputs: int, updated_containers):
        fgraph, roots = program.fgraph, program.roots
        updated = {id(c) for c in updated_containers}
        shared = fgraph.inputs[n_inputs:]
        outlives = {roots[v] for v in fgraph.inputs[:n_inputs]}
        outlives |= {roots[v] for v in fgraph.variables if isinstance(v, Constant)}
        outlives |= {roots[v] for v in program.folded}
        outlives |= {roots[v] for v in shared if id(v.container) not in updated}
        results = fgraph.outputs
        taken: set = set()  # memory already handed to one result
        self.updates = self._copies(results[n_outputs:], roots, outlives, taken)
        self.outputs = self._copies(results[:n_outputs], roots, outlives, taken)

    @staticmethod
    def _copies(variables, roots, outlives, taken) -> list[int]:
        copies = []
        for i, var in enumerate(variables):
            root = roots[var]
            if root in outlives or root in taken:
                copies.append(i)
            else:
                taken.add(root)
        return copies
