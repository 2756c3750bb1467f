"""The type of a random generator's value (a NumPy ``Generator``), for shared variables and draws.

Its own module so that ``shared(np.random.default_rng(seed))`` (``sharedvar.py``) and the
random draws (``random.py``) both use it.
"""

from __future__ import annotations

import numpy as np

from eqgraph.terms.type import Type, describe_value


class RandomGeneratorType(Type):
    """The type of a NumPy ``Generator`` (a random state)."""

    def filter(self, data, strict=False, allow_downcast=None):
        if isinstance(data, np.random.Generator):
            return data
        raise TypeError(f"expected a numpy.random.Generator (np.random.default_rng(seed)), got {describe_value(data)}")

    def values_eq(self, a, b) -> bool:
        return a.bit_generator.state == b.bit_generator.state

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "RandomGeneratorType"

    __repr__ = __str__


random_generator_type = RandomGeneratorType()


_ANY_SEED = np.random.SeedSequence(0)  # overwritten at once: it only spares the OS entropy a bare
                                       # bit generator would read, most of a copy's cost


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator in the same state as ``rng`` (``copy.deepcopy``, faster)."""
    bit_generator = type(rng.bit_generator)(_ANY_SEED)
    bit_generator.state = rng.bit_generator.state
    return np.random.Generator(bit_generator)
