"""Index lists in the e-graph are integer vectors of four numbers an entry (schema.encode_index):
rules match and build them with vec-get and vec-of, and extraction reads them back."""

import re

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.schema import INDEX_CODEC, Schema, decode_index, encode_index
from eqgraph.rules.ruleset import RULESETS_DIR

INDEX_LISTS = [
    (0,), (-1,), (3, -2), (("slice", None, None, None),), (("slice", 2, None, None),),
    (("slice", 2, 5, None),), (("slice", None, None, -1),), (("slice", -3, -1, 2),),
    (None, ("slice", None, None, None)), ("?",), (("slice", "?", None, None), 0), (("slice", 1, "?", "?"),),
    ("a", ("slice", None, None, None)), (), (("slice", -(1 << 62), 1 << 62, None),),
]


@pytest.mark.parametrize("idx_list", INDEX_LISTS, ids=repr)
def test_an_index_list_reads_back_as_it_was_written(idx_list):
    numbers = encode_index(idx_list)
    assert len(numbers) == 4 * len(idx_list)
    assert decode_index(numbers) == idx_list
    assert INDEX_CODEC.decode(numbers) == idx_list


def test_entries_are_four_numbers_a_kind_and_three_parts():
    assert encode_index((0, None, "?", "a")) == (0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0)
    # a slice's kind 1abc says what its start, stop and step are: absent, an integer, an input
    assert encode_index((("slice", None, None, None),)) == (1000, 0, 0, 0)
    assert encode_index((("slice", 2, 5, None),)) == (1110, 2, 5, 0)
    assert encode_index((("slice", None, None, -1),)) == (1001, 0, 0, -1)
    assert encode_index((("slice", "?", 4, None),)) == (1210, 0, 4, 0)


@pytest.mark.parametrize("bad, why", [
    ((1.5,), "entry 1.5"), ((True,), "entry True"), ((("slice", 1.5, None, None),), "slice part 1.5"),
    ((("slice", None, None),), "entry"), (("b",), "entry 'b'"),
])
def test_an_index_list_that_is_none_says_which_entry(bad, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        encode_index(bad)


@pytest.mark.parametrize("numbers, why", [
    ((0, 1, 0), "four numbers per entry"), ((7, 0, 0, 0), r"is \(7 0 0 0\)"), ((1300, 0, 0, 0), r"\(1300 0 0 0\)"),
    ((1000, 5, 0, 0), r"\(1000 5 0 0\)"),   # an absent start written as 5: no silent x[:]
])
def test_numbers_that_are_no_index_list_are_refused(numbers, why):
    with pytest.raises(ValueError, match=why):
        decode_index(numbers)


def test_a_subtensor_is_encoded_with_its_index_as_numbers():
    op = et.dmatrix()[1:, 0].owner.op
    ctor = Schema().constructor(op, 1)
    assert ctor.encode_props(op)[0] == "(vec-of 1100 1 0 0 0 0 0 0)"


def test_no_rule_builds_an_index_list_from_strings():
    for path in RULESETS_DIR.glob("*.egg"):
        code = re.sub(r";[^\n]*", "", path.read_text())
        assert not re.search(r"to-string|\(replace |\"\(\(?'slice'|\"\(-?\d+,\)\"", code), path.name


def test_a_column_of_rows_sliced_from_0_is_one_index():
    # X[1:, 0:][:, 2]: the inner index ends with a slice whose facts are a whole axis's, written
    # 0: and not :, which column-of-row-slice replaces by 2 whatever its spelling: X[1:, 2]
    X = et.dmatrix("X")
    f = eg.function([X], X[1:, 0:][:, 2] * 2.0)
    ops = [str(n.op) for n in f.stages.optimized.toposort()]
    assert ops.count("Subtensor{1:, 2}") == 1 and sum(op.startswith("Subtensor") for op in ops) == 1, ops
    value = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(f(value), value[1:, 0:][:, 2] * 2.0)
