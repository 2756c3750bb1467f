"""PyTensor's ``In`` and ``Out`` (its ``compile.io``): the inputs and outputs of
``eqgraph.function`` with options, and how ``function`` reads them."""

from __future__ import annotations

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.sharedvar import Container
from eqgraph.terms.basic import Variable
from eqgraph.terms.type import describe_value


class In:
    """PyTensor's ``In``: an input of ``eqgraph.function`` with options.

    name : the keyword the call takes it by (default the variable's name).
    value : its default, used when a call leaves it out.
    update : an expression of the input's type whose value, computed by each call, becomes the
        default for the next one (the value is state kept by the function, ``f[name]`` reads it;
        without ``value`` the first call must give the argument).
    strict : the argument must already be an array of the input's type; nothing is converted.
    allow_downcast : this argument's conversion, as ``function(allow_input_downcast=...)`` (None:
        the function's).
    implicit : False (or None): the input is an argument of the call, PyTensor's default for an
        input with no shared value; an input whose value lives in the function alone is a shared
        variable in eqgraph, so True is refused.
    mutable, borrow : PyTensor's permissions to overwrite the caller's array and to keep it.  A
        compiled function never overwrites its arguments and never returns an array that shares
        memory with one, so both are accepted and change nothing; ``mutable=True`` with
        ``borrow=False`` is refused, as PyTensor refuses it.
    """

    def __init__(self, variable, name=None, value=None, update=None, mutable=None, strict=False,
                 allow_downcast=None, autoname=True, implicit=None, borrow=None, shared=False):
        if not isinstance(variable, Variable):
            raise TypeError(f"In: variable must be a symbolic Variable, not {describe_value(variable)}")
        if implicit or shared:
            raise TypeError(f"In({variable}): implicit and shared inputs are not supported; a value kept by "
                            "the function is a shared variable (eqgraph.shared) or In(value=..., update=...)")
        if allow_downcast not in (None, True, False):
            raise TypeError(f"In({variable}): allow_downcast must be None, True or False, not "
                            f"{describe_value(allow_downcast)}")
        if mutable and borrow is False:
            raise ValueError(f"In({variable}): mutable=True implies borrow=True (the input may be aliased "
                             "and overwritten); borrow=False contradicts it")
        self.variable, self.value, self.update = variable, value, _typed_update(variable, update)
        self.name = name if name is not None or not autoname else variable.name
        self.mutable, self.borrow = bool(mutable), bool(mutable if borrow is None else borrow)
        self.strict, self.allow_downcast = bool(strict), allow_downcast

    def __repr__(self):
        return f"In({self.variable}, name={self.name!r})"


def _typed_update(variable, update):
    """``update`` as a variable of ``variable``'s type, or a TypeError naming both (PyTensor's check)."""
    if update is None:
        return None
    try:
        return variable.type.filter_variable(as_tensor_variable(update))
    except TypeError as err:
        raise TypeError(f"In({variable}): the update {update} does not fit the input's type {variable.type}: "
                        f"{err}") from None


class Out:
    """PyTensor's ``Out``: an output of ``eqgraph.function`` with options.

    borrow : True lets the call return an array the function keeps (a constant, or memory
        reused by the next call), as PyTensor's ``borrow``: the caller must not modify it, and
        it may change at the next call. False (the default) returns an array of the caller's own.
    """

    def __init__(self, variable, borrow=False):
        if not isinstance(variable, Variable):
            raise TypeError(f"Out: variable must be a symbolic Variable, not {describe_value(variable)}")
        if not isinstance(borrow, bool):
            raise TypeError(f"Out({variable}): borrow must be True or False, not {describe_value(borrow)}")
        self.variable, self.borrow = variable, borrow

    def __repr__(self):
        return f"Out({self.variable}, borrow={self.borrow})"


def _unwrap_out(outputs):
    """(the outputs with each ``Out`` replaced by its variable, the positions of those that borrow)."""
    if isinstance(outputs, Out):
        return outputs.variable, frozenset([0] if outputs.borrow else [])
    if not isinstance(outputs, (list, tuple)):
        return outputs, frozenset()
    borrowed = frozenset(i for i, o in enumerate(outputs) if isinstance(o, Out) and o.borrow)
    return [o.variable if isinstance(o, Out) else o for o in outputs], borrowed


def _unwrap_in(inputs):
    """(the input variables, the ``In`` of each or None); anything else is left to _check_inputs."""
    if not isinstance(inputs, (list, tuple)):
        return inputs, []
    specs = [i if isinstance(i, In) else None for i in inputs]
    return [i.variable if isinstance(i, In) else i for i in inputs], specs


def _input_state(inputs, specs):
    """({position: Container of the default}, [(Container, update expression)], {name: position})."""
    defaults, updates, names = {}, [], {}
    for i, (var, spec) in enumerate(zip(inputs, specs)):
        if spec is None:
            continue
        if spec.value is not None:
            try:
                defaults[i] = Container(var.type.filter(spec.value, False, True))
            except (TypeError, ValueError) as err:
                raise TypeError(f"In({var}): the value {describe_value(spec.value)} does not fit the input's "
                                f"type {var.type}: {err}") from None
        if spec.update is not None:
            defaults.setdefault(i, Container(None))  # None: no value until the first call's update
            updates.append((defaults[i], spec.update))
        if spec.name is not None:
            names[spec.name] = i
    return defaults, updates, names
