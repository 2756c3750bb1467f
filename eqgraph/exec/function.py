"""`Function`: the callable that ``eqgraph.function`` returns.

A call filters its arguments into the input cells, runs the program, applies
the updates of shared variables (all together, after every output is
computed) and returns the outputs.
"""

from __future__ import annotations

from eqgraph.exec.link import Program
from eqgraph.terms.type import describe_value
from eqgraph.xp import copy_array


def _expected(var) -> str:
    describe = getattr(var.type, "describe", None)
    return describe() if describe else str(var.type)


class Function:
    """A compiled graph: ``f(*args, **kwargs)`` returns its output(s)."""

    def __init__(self, program: Program, inputs, n_outputs: int, single_output: bool, updated_shared,
                 backend, stages=None, name=None, allow_input_downcast=None, trust_input=False,
                 profile=None):
        self.program = program
        self.fgraph = program.fgraph
        self.inputs = list(inputs)                 # the user's explicit inputs, in order
        self.name = name
        self.stages = stages
        self.profile = profile
        self.trust_input = trust_input
        self._n_outputs = n_outputs
        self._single = single_output
        self._backend = backend
        self._cells = program.input_cells[: len(self.inputs)]
        self._filters = [v.type.filter for v in self.inputs]
        self._downcast = allow_input_downcast
        self._positions = {v.name: i for i, v in enumerate(self.inputs) if v.name}
        self._output_cells = program.output_cells[:n_outputs]
        self._update_cells = program.output_cells[n_outputs:]
        self._shared_containers = [s.container for s in updated_shared]
        self._copy_outputs = _outputs_to_copy(program, n_outputs)
        self._on_device = backend.name != "numpy"
        self._n_inputs = len(self._cells)
        self._run = program.run
        self._simple = (single_output and n_outputs == 1 and not self._copy_outputs
                        and not updated_shared and profile is None)

    # -- calling ----------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self._n_inputs:
            args = self._merge_keywords(args, kwargs)
        if self.trust_input:
            if self._n_inputs == 1:
                self._cells[0][0] = args[0]
            else:
                for cell, value in zip(self._cells, args):
                    cell[0] = value
        else:
            downcast = self._downcast
            try:
                for cell, filt, value in zip(self._cells, self._filters, args):
                    cell[0] = filt(value, False, downcast)
            except (TypeError, ValueError) as err:
                raise self._bad_argument(args, err) from None
        if self._on_device:
            return self._call_on_device(args)
        self._run()
        if self._simple:  # one output, nothing to copy or update
            return self._output_cells[0][0]
        return self._outputs()

    def _call_on_device(self, args):
        backend = self._backend
        host_inputs = not any(backend.is_device_array(a) for a in args)
        for cell in self.program.input_cells:  # the arguments and every shared variable read
            cell[0] = backend.to_device(cell[0])
        self._run()
        return self._outputs(backend.to_host if host_inputs else None)

    def _outputs(self, to_host=None):
        """The call's result: outputs copied where they would alias, then the updates."""
        outputs = [cell[0] for cell in self._output_cells]
        for i in self._copy_outputs:
            outputs[i] = copy_array(outputs[i])
        if to_host is not None:
            outputs = [to_host(o) for o in outputs]
        if self._update_cells:
            self._apply_updates()
        if self.profile is not None:
            self.profile.calls += 1
        return outputs[0] if self._single else outputs

    def _apply_updates(self):
        # read every new value before writing any: an update may be another shared variable
        values = [cell[0] for cell in self._update_cells]
        for container, value in zip(self._shared_containers, values):
            container[0] = value

    # -- argument errors ------------------------------------------------------------
    def _merge_keywords(self, args, kwargs):
        if len(args) > len(self.inputs) or (not kwargs and len(args) < len(self.inputs)):
            self._wrong_count(len(args))
        merged = list(args) + [_MISSING] * (len(self.inputs) - len(args))
        for key, value in kwargs.items():
            if key not in self._positions:
                names = ", ".join(repr(n) for n in self._positions) or "none"
                raise TypeError(f"{self._title()} got an unknown keyword argument {key!r} "
                                f"(named inputs: {names})")
            i = self._positions[key]
            if i < len(args):
                raise TypeError(f"{self._title()} got input {key!r} twice (by position and by name)")
            merged[i] = value
        missing = [self._arg_name(i) for i, v in enumerate(merged) if v is _MISSING]
        if missing:
            raise TypeError(f"{self._title()} is missing input(s): {', '.join(missing)}")
        return merged

    def _wrong_count(self, given: int):
        expected = ", ".join(self._arg_name(i) for i in range(len(self.inputs))) or "no inputs"
        kind = "Too many" if given > len(self._cells) else "Too few"
        raise TypeError(f"{kind} arguments to {self._title()}: expected {len(self._cells)} "
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

    #: (the compile function, its keyword arguments), set by ``eqgraph.function``
    compiled_from = None

    def __reduce__(self):
        """Pickle the user's graph and the compile arguments; loading recompiles them.

        The program's thunks and the e-graph session (egglog objects) cannot be pickled,
        and recompiling gives the same function, reading the shared variables that were
        pickled with it."""
        if self.compiled_from is None:
            raise TypeError(f"{self!r} was not made by eqgraph.function and cannot be pickled")
        build, arguments = self.compiled_from
        return _recompile, (build, arguments)


def _accepts(filt, value, downcast) -> bool:
    try:
        filt(value, False, downcast)
        return True
    except (TypeError, ValueError):
        return False


def _recompile(build, arguments):
    return build(**arguments)


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def _outputs_to_copy(program: Program, n_outputs: int) -> list[int]:
    """Outputs that would alias an input, a constant or another output: these are copied."""
    from eqgraph.terms.basic import Constant

    fgraph, roots = program.fgraph, program.roots
    unsafe = {roots[v] for v in fgraph.inputs} | {roots[v] for v in fgraph.variables if isinstance(v, Constant)}
    unsafe |= {roots[v] for v in program.folded}
    seen, out = set(), []
    for i, var in enumerate(fgraph.outputs[:n_outputs]):
        root = roots[var]
        if root in unsafe or root in seen:
            out.append(i)
        seen.add(root)
    return out
