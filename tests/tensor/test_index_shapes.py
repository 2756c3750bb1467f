"""get_canonical_form_slice and indexed_result_shape against NumPy's indexing."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor import get_canonical_form_slice, indexed_result_shape

BOUNDS = [-8, -5, -4, -1, 0, 1, 4, 5, 8]
STEPS = [-6, -3, -1, 2, 5]


def _canonical_function(parts: dict):
    """A compiled function of the symbolic slice parts giving the canonical start, stop, step, direction."""
    inputs = {name: et.iscalar(name) for name in parts if parts[name] == "symbolic"}
    length = et.iscalar("length")
    canonical, direction = get_canonical_form_slice(
        slice(*(inputs.get(name) for name in ("start", "stop", "step"))), length)
    outputs = [et.as_tensor_variable(p) for p in (canonical.start, canonical.stop, canonical.step, direction)]
    return eg.function([*inputs.values(), length], outputs), list(inputs)


@pytest.mark.parametrize("symbolic", [("start", "stop", "step"), ("start", "step"), ("stop",), ("step",)])
def test_symbolic_slices_match_numpy(symbolic):
    function, names = _canonical_function({name: "symbolic" for name in symbolic})
    values = np.arange(5)
    choices = {"start": BOUNDS, "stop": BOUNDS, "step": STEPS}
    grid = np.array(np.meshgrid(*(choices[n] for n in names))).reshape(len(names), -1).T
    for point in grid:
        given = dict(zip(names, map(int, point)))
        start, stop, step, direction = function(*point, len(values))
        assert 0 <= start <= stop <= len(values) and step > 0 and direction in (1, -1)
        expected = values[given.get("start"):given.get("stop"):given.get("step")]
        np.testing.assert_array_equal(values[start:stop:step][::direction], expected, err_msg=str(given))


@pytest.mark.parametrize("length", [0, 1, 5, 7])
def test_constant_slices_give_python_ints(length):
    values = np.arange(length)
    for start in [None, *BOUNDS]:
        for stop in [None, *BOUNDS]:
            for step in [None, *STEPS]:
                canonical, direction = get_canonical_form_slice(slice(start, stop, step), length)
                assert all(isinstance(p, int) for p in (canonical.start, canonical.stop, canonical.step))
                assert 0 <= canonical.start <= canonical.stop <= length and canonical.step > 0
                np.testing.assert_array_equal(values[canonical][::direction], values[start:stop:step])


def test_tensor_constants_count_as_constants():
    canonical, direction = get_canonical_form_slice(
        slice(et.as_tensor(1), np.int64(5), et.as_tensor(2)), et.as_tensor(7))
    assert canonical == slice(1, 5, 2) and direction == 1


def test_an_integer_index():
    n, i = et.lscalar("n"), et.wscalar("i")
    assert get_canonical_form_slice(3, n) == (3, 1)
    assert get_canonical_form_slice(-2, 7) == (5, 1)
    index, direction = get_canonical_form_slice(i, n)
    positive = eg.function([i, n], index)
    assert direction == 1
    assert [int(positive(v, 6)) for v in (-6, -1, 0, 5)] == [0, 5, 0, 5]


@pytest.mark.parametrize("bad", [None, "a", 1.5, et.dvector("v"), et.dscalar("f")])
def test_unsupported_inputs_are_refused(bad):
    with pytest.raises(ValueError, match="not a supported slice"):
        get_canonical_form_slice(bad, 5)


def test_a_zero_step_is_refused():
    with pytest.raises(ValueError, match="step cannot be zero"):
        get_canonical_form_slice(slice(None, None, 0), 5)


GROUPS = np.ix_(np.array([True, True]), np.array([True]), np.array([True, True]))
INDICES = [
    (slice(None),), (2,), GROUPS[:1], GROUPS[:2], (*GROUPS[:2], slice(None)), (slice(None), *GROUPS[:1]),
    (*GROUPS[:1], slice(None), *GROUPS[1:2]), (*GROUPS[:1], slice(None), *GROUPS[1:2], slice(None)),
    (np.array([1, 3, 2]), slice(1, 3)), (slice(1, 3), np.array([1, 3, 2])), (None, np.array([0, 1]), None, 2),
    (np.array([0, 1]), None, np.array([1, 2])), (slice(-1, None, -2), 0, np.array([[1], [2]]), slice(None, 2)),
    (np.array([[True, False, True, True, False, False]]),),
]


@pytest.mark.parametrize("index", INDICES, ids=range(len(INDICES)))
def test_indexed_result_shape_matches_numpy(index):
    array = np.arange(5 * 6 * 7 * 8).reshape((5, 6, 7, 8))[: 1 if getattr(index[0], "dtype", None) == bool else 5]
    x = et.ltensor4("x")
    entries = [i if i is None or isinstance(i, slice) else et.as_tensor(i) for i in index]
    shape = indexed_result_shape(x.shape, entries)
    assert all(d.dtype == "int64" and d.ndim == 0 for d in shape)
    assert eg.function([x], list(shape))(array) == list(array[index].shape)


@pytest.mark.parametrize("index", INDICES[:12], ids=range(12))
def test_indexed_result_shape_of_index_shapes(index):
    array = np.zeros((5, 6, 7, 8))
    entries = [i if i is None or isinstance(i, slice) else np.shape(i) for i in index]
    shape = indexed_result_shape(array.shape, entries, indices_are_shapes=True)
    assert tuple(int(d.eval()) for d in shape) == array[index].shape


def test_indexed_result_shape_errors():
    with pytest.raises(IndexError, match="3 axes indexed, but the array has 2"):
        indexed_result_shape((2, 3), [0, 1, 2])
    with pytest.raises(IndexError, match="neither integer nor boolean"):
        indexed_result_shape((2, 3), [et.dvector("v")])
    with pytest.raises(ValueError, match="static length"):
        indexed_result_shape(et.lvector("s"), [0])


def test_a_tensor_index_stays_a_tensor():
    n, zero, minus_one = et.lscalar("n"), et.as_tensor(0), et.as_tensor(-1)
    assert get_canonical_form_slice(zero, n) == (zero, 1)
    index, direction = get_canonical_form_slice(minus_one, n)
    assert direction == 1 and int(index.eval({n: 4})) == 3
