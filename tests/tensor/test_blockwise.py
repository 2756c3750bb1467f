"""Blockwise, vectorize and vectorize_graph: values against a NumPy loop over the batch, static
types, errors that name the input and the signature, and equal Blockwise nodes merging."""

import contextlib
import io
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor import linalg
from eqgraph.tensor.blockwise import Blockwise, parse_signature, vectorize, vectorize_graph
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op

RNG = np.random.default_rng(0)


def spd(*batch, n=3):
    a = RNG.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def tensor(shape, name="x"):
    return TensorType("float64", shape)(name)


def loop(fn, *arrays, cores):
    """``fn`` applied block by block over the broadcast batch axes, stacked: the reference."""
    batches = [a.shape[:a.ndim - c] for a, c in zip(arrays, cores)]
    batch = np.broadcast_shapes(*batches)
    blocks = [fn(*[np.broadcast_to(a, batch + a.shape[a.ndim - c:])[i] for a, c in zip(arrays, cores)])
              for i in np.ndindex(*batch)]
    return np.stack(blocks).reshape(batch + np.shape(blocks[0]))


class MatrixOnlyTrace(Op):
    """The trace of one matrix: its perform refuses a stack, so a Blockwise of it must loop."""

    __props__ = ()
    gufunc_signature = "(m,n)->()"

    def make_node(self, a):
        a = et.as_tensor_variable(a)
        return Apply(self, [a], [TensorType(a.dtype, ())()])

    def perform(self, node, inputs, output_storage):
        (a,) = inputs
        assert a.ndim == 2, a.shape
        output_storage[0][0] = np.asarray(np.trace(a))

    def infer_shape(self, fgraph, node, shapes):
        return [()]


def dprint_text(f) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        eg.dprint(f)
    return out.getvalue()


# -- values ------------------------------------------------------------------------------------
def test_cholesky_over_a_batch_matches_numpy():
    x = tensor((None, None, 3, 3))
    y = Blockwise(linalg.Cholesky())(x)
    value = spd(2, 4)
    np.testing.assert_allclose(eg.function([x], y)(value), np.linalg.cholesky(value))


def test_solve_of_vectors_broadcasts_the_batch_axes():
    a, b = tensor((None, 1, 3, 3), "a"), tensor((None, 3), "b")
    x = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b)
    assert x.type.shape == (None, None, 3)
    av, bv = spd(2, 1), RNG.normal(size=(5, 3))
    expected = loop(np.linalg.solve, av, bv, cores=(2, 1))
    np.testing.assert_allclose(eg.function([a, b], x)(av, bv), expected)


def test_a_core_op_that_takes_one_block_is_run_once_per_block():
    x = tensor((None, None, None))
    y = Blockwise(MatrixOnlyTrace())(x)
    value = RNG.normal(size=(3, 2, 4))
    np.testing.assert_allclose(eg.function([x], y)(value), np.trace(value, axis1=-2, axis2=-1))


def test_matrix_times_vector_over_a_batch():
    a, v = tensor((None, 2, 3), "a"), tensor((3,), "v")
    y = Blockwise(et.MatMul(), "(m,k),(k)->(m)")(a, v)
    av, vv = RNG.normal(size=(4, 2, 3)), RNG.normal(size=3)
    np.testing.assert_allclose(eg.function([a, v], y)(av, vv), av @ vv)


def test_an_empty_batch_gives_an_empty_output_of_the_static_core_shape():
    x = tensor((None, 3, 3))
    y = Blockwise(MatrixOnlyTrace())(x)
    assert eg.function([x], y)(np.zeros((0, 3, 3))).shape == (0,)


def test_the_shape_of_an_output_comes_from_the_broadcast_batch_and_the_named_core_axes():
    a, b = tensor((None, 1, None, None), "a"), tensor((None, None), "b")
    x = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b)
    f = eg.function([a, b], et.shape(x))
    np.testing.assert_array_equal(f(spd(2, 1), RNG.normal(size=(5, 3))), [2, 5, 3])


@st.composite
def batch_pair(draw):
    """Two batch shapes that broadcast (sizes 1 or the axis' size, either may be shorter), and per
    axis whether its size is static."""
    sizes = draw(st.lists(st.integers(2, 3), min_size=0, max_size=3))
    shapes = []
    for _ in range(2):
        n = draw(st.integers(0, len(sizes)))
        shape = tuple(draw(st.sampled_from([1, s])) for s in sizes[len(sizes) - n:])
        static = tuple(s if draw(st.booleans()) else None for s in shape)
        shapes.append((shape, static))
    return shapes


def check_broadcast_solve(pair):
    (a_batch, a_static), (b_batch, b_static) = pair
    a, b = tensor(a_static + (3, 3), "a"), tensor(b_static + (3,), "b")
    x = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b)
    av, bv = spd(*a_batch), RNG.normal(size=(*b_batch, 3))
    got = eg.function([a, b], x)(av, bv)
    np.testing.assert_allclose(got, loop(np.linalg.solve, av, bv, cores=(2, 1)))
    assert all(s is None or s == g for s, g in zip(x.type.shape, got.shape)), (x.type.shape, got.shape)


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch_pair())
def test_broadcast_batches_match_a_numpy_loop(pair):
    check_broadcast_solve(pair)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch_pair())
def test_broadcast_batches_match_a_numpy_loop_many(pair):
    check_broadcast_solve(pair)


# -- static types --------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes, expected", [
    (((None, 3, 3), (3,)), (None, 3)),
    (((1, 3, 3), (4, 3)), (4, 3)),
    (((2, 1, None, None), (5, 3)), (2, 5, 3)),
    (((None, None), (7, 1, None)), (7, 1, None)),
])
def test_static_batch_and_core_sizes(shapes, expected):
    a, b = tensor(shapes[0], "a"), tensor(shapes[1], "b")
    assert Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b).type.shape == expected


def test_the_signature_defaults_to_the_decomposition_layouts():
    assert Blockwise(linalg.Cholesky()).signature == "(m,m)->(m,m)"
    assert Blockwise(linalg.SVD(False)).signature == "(m,n)->(m,k),(k),(k,n)"
    assert Blockwise(linalg.Det()).signature == "(m,m)->()"


def test_parse_signature():
    assert parse_signature(" (m, n),(n)->(m) ") == ((("m", "n"), ("n",)), (("m",),))
    assert parse_signature("(),()->()") == (((), ()), ((),))


def test_a_blockwise_of_a_blockwise_is_one_blockwise():
    op = Blockwise(Blockwise(linalg.Cholesky()))
    assert op == Blockwise(linalg.Cholesky()) and op.core_op == linalg.Cholesky()


# -- errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("build, error, match", [
    (lambda: Blockwise(linalg.Cholesky())(tensor((3,))), ValueError,
     r"input 0 \(x, static shape \(3,\)\) has 1 dimensions, fewer than the 2 core axes \(m,m\)"),
    (lambda: Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(tensor((3, 3), "a"), tensor((4,), "b")), ValueError,
     r"core axis 'm' of the signature \(m,m\),\(m\)->\(m\) is 3 in input 0 \(a, static shape \(3, 3\)\) "
     r"but 4 in input 1 \(b, static shape \(4,\)\)"),
    (lambda: Blockwise(linalg.Cholesky())(tensor((2, 3, 3))) + Blockwise(linalg.Cholesky())(tensor((3, 3, 3))),
     ValueError, "cannot broadcast"),
    (lambda: Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(tensor((2, 3, 3), "a"), tensor((4, 3), "b")), ValueError,
     r"batch shapes \[\(2,\), \(4,\)\] of its inputs do not broadcast"),
    (lambda: Blockwise(linalg.Cholesky(), "(m,m)->(m)")(tensor((3, 3))), ValueError,
     r"output 0 of Cholesky\{True\} on one block has 2 dimensions .* the signature \(m,m\)->\(m\) gives it 1"),
    (lambda: Blockwise(linalg.Cholesky(), "m,m->m"), ValueError, "not a gufunc signature"),
    (lambda: Blockwise(et.MatMul()), TypeError, "states no gufunc_signature; pass signature="),
    (lambda: Blockwise("cholesky"), TypeError, "core_op must be an Op"),
    (lambda: Blockwise(linalg.Cholesky())(tensor((3, 3)), tensor((3, 3))), TypeError, "takes 1 inputs, got 2"),
])
def test_clear_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_run_time_core_sizes_that_disagree_name_the_signature():
    a, b = tensor((None, None, None), "a"), tensor((None, None), "b")
    f = eg.function([a, b], Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b))
    with pytest.raises(ValueError, match=r"core axis 'm' of the signature \(m,m\),\(m\)->\(m\) has two sizes, 3 and 4"):
        f(spd(2), RNG.normal(size=(2, 4)))


def test_run_time_batches_that_do_not_broadcast_name_the_shapes():
    a, b = tensor((None, None, None), "a"), tensor((None, None), "b")
    f = eg.function([a, b], Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b))
    with pytest.raises(ValueError, match=r"batch axes of its inputs, of shapes \[\(2, 3, 3\), \(4, 3\)\]"):
        f(spd(2), RNG.normal(size=(4, 3)))


# -- props and the e-graph ----------------------------------------------------------------------
def test_equal_blockwise_nodes_merge():
    x = tensor((None, 3, 3))
    y = Blockwise(linalg.Cholesky())(x) + Blockwise(linalg.Cholesky())(x)
    f = eg.function([x], y)
    value = spd(2)
    np.testing.assert_allclose(f(value), 2 * np.linalg.cholesky(value))
    nodes = {line.split("[id ")[1].split("]")[0] for line in dprint_text(f).splitlines() if "Blockwise" in line}
    assert len(nodes) == 1


def test_core_ops_printed_alike_but_unequal_stay_apart():
    # two triangular solves that differ only in unit_diagonal print the same
    plain = linalg.Solve("gen", True, triangular=True)
    unit = linalg.Solve("gen", True, triangular=True, unit_diagonal=True)
    assert str(plain) == str(unit) and plain != unit
    a, b = tensor((None, 3, 3), "a"), tensor((None, 3), "b")
    y1 = Blockwise(plain, "(m,m),(m)->(m)")(a, b)
    y2 = Blockwise(unit, "(m,m),(m)->(m)")(a, b)
    av, bv = spd(2), RNG.normal(size=(2, 3))
    r1, r2 = eg.function([a, b], [y1, y2])(av, bv)
    unit_matrix = np.tril(av, -1) + np.eye(3)
    np.testing.assert_allclose(r1, np.linalg.solve(np.tril(av), bv[..., None])[..., 0])
    np.testing.assert_allclose(r2, np.linalg.solve(unit_matrix, bv[..., None])[..., 0])


# -- vectorize_graph and vectorize --------------------------------------------------------------------
def test_vectorize_graph_of_a_softmax():
    x = et.dvector("x")
    y = et.exp(x) / et.sum(et.exp(x))
    new_x = et.dmatrix("new_x")
    new_y = vectorize_graph(y, replace={x: new_x})
    value = np.array([[0.0, 1, 2], [2, 1, 0]])
    expected = np.exp(value) / np.exp(value).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(eg.function([new_x], new_y)(value), expected)


def test_vectorize_graph_of_indexing_becomes_a_blockwise():
    x = et.dvector("x")
    new_x = et.dmatrix("new_x")
    first, last = vectorize_graph([x[0], x[-1]], replace={x: new_x})
    out = eg.function([new_x], [first, last])(np.array([[-10.0, 0, 10], [-11, 0, 11]]))
    np.testing.assert_allclose(out[0], [-10, -11])
    np.testing.assert_allclose(out[1], [10, 11])


def test_vectorize_graph_lines_up_core_operands_of_different_ndim():
    s, v = et.dscalar("s"), et.dvector("v")
    y = (s * v).sum() + s
    new_s, new_v = et.dvector("new_s"), et.dmatrix("new_v")
    new_y = vectorize_graph(y, {s: new_s, v: new_v})
    sv, vv = np.array([1.0, 2.0]), RNG.normal(size=(2, 3))
    np.testing.assert_allclose(eg.function([new_s, new_v], new_y)(sv, vv), (sv[:, None] * vv).sum(1) + sv)


def test_vectorize_graph_keeps_matrix_products_and_decompositions_as_they_are():
    a, b = et.dmatrix("a"), et.dmatrix("b")
    y = linalg.det(a @ b.T)
    new_a, new_b = et.dtensor3("new_a"), et.dmatrix("new_b")
    new_y = vectorize_graph(y, {a: new_a, b: new_b})
    assert not isinstance(new_y.owner.op, Blockwise)
    av, bv = RNG.normal(size=(4, 3, 3)), RNG.normal(size=(3, 3))
    np.testing.assert_allclose(eg.function([new_a, new_b], new_y)(av, bv), np.linalg.det(av @ bv.T))


def test_an_output_that_does_not_depend_on_the_batch_keeps_its_core_shape():
    x, c = et.dvector("x"), et.dvector("c")
    new_x = et.dmatrix("new_x")
    y, z = vectorize_graph([x * 2, c + 1], {x: new_x})
    assert y.ndim == 2 and z is not None and z.ndim == 1


def test_vectorize_graph_refuses_a_replacement_with_fewer_dimensions():
    x = et.dmatrix("x")
    with pytest.raises(ValueError, match=r"replacement v .* of x .* has fewer dimensions"):
        vectorize_graph(x * 2, {x: et.dvector("v")})


def test_vectorize_with_a_signature():
    f = vectorize(lambda x: et.exp(x) / et.sum(et.exp(x)), signature="(a)->(a)")
    x = et.dmatrix("x")
    value = RNG.normal(size=(2, 3))
    expected = np.exp(value) / np.exp(value).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(eg.function([x], f(x))(value), expected)


def test_vectorize_of_two_outputs():
    f = vectorize(lambda x: (x[0], x[-1]), signature="(a)->(),()")
    x = et.dmatrix("x")
    first, last = eg.function([x], f(x))(np.array([[-10.0, 0, 10], [-11, 0, 11]]))
    np.testing.assert_allclose(first, [-10, -11])
    np.testing.assert_allclose(last, [10, 11])


def test_vectorize_without_a_signature_takes_scalar_cores():
    f = vectorize(lambda a, b: a * 2 + b)
    a, b = et.dmatrix("a"), et.dvector("b")
    av, bv = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    np.testing.assert_allclose(eg.function([a, b], f(a, b))(av, bv), av * 2 + bv)


@pytest.mark.parametrize("signature, inputs, error, match", [
    ("(a)->(a)", lambda: [et.dscalar("s")], ValueError, r"input 0 \(s, static shape \(\)\) has 0 dimensions"),
    ("(a),(a)->(a)", lambda: [et.dvector("v")], TypeError, "names 2 inputs, got 1"),
    ("(a)->()", lambda: [et.dmatrix("m")], ValueError, r"returned 1 outputs of \[1\] dimensions.* gives \[0\]"),
])
def test_vectorize_errors(signature, inputs, error, match):
    with pytest.raises(error, match=match):
        vectorize(lambda x: x * 2, signature=signature)(*inputs())


def test_a_compiled_blockwise_pickles():
    x = tensor((None, 3, 3))
    y = Blockwise(linalg.Cholesky())(x)
    f = eg.function([x], y)
    value = spd(2)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(f))(value), f(value))
    op = pickle.loads(pickle.dumps(y.owner.op))
    assert op == y.owner.op and op.core_node(y.owner.inputs).outputs[0].type == TensorType("float64", (3, 3))


class DetOfOneMatrix(Op):
    """The determinant of one matrix, stating NumPy's stacked form: a Blockwise calls that."""

    __props__ = ()
    gufunc_signature = "(m,m)->()"
    gufunc_spec = ("numpy.linalg.det", 1, 1)

    def make_node(self, a):
        a = et.as_tensor_variable(a)
        return Apply(self, [a], [TensorType("float64", ())()])

    def perform(self, node, inputs, output_storage):
        raise AssertionError("the Blockwise should call numpy.linalg.det on the whole stack")


def test_a_stated_numpy_form_computes_the_whole_stack():
    x = tensor((None, None, 3, 3))
    value = spd(2, 3)
    np.testing.assert_allclose(eg.function([x], Blockwise(DetOfOneMatrix())(x))(value), np.linalg.det(value))


def test_a_stated_numpy_form_that_does_not_exist_is_named():
    op = DetOfOneMatrix()
    op.gufunc_spec = ("numpy.linalg.no_such_function", 1, 1)
    x = tensor((None, 3, 3))
    with pytest.raises(ValueError, match=r"gufunc_spec \('numpy.linalg.no_such_function', 1, 1\) of .* names no"):
        eg.function([x], Blockwise(op)(x))(spd(2))


def test_a_core_op_of_scalars_with_a_vector_output():
    start, stop = et.lvector("start"), et.lvector("stop")
    y = Blockwise(et.ARange("int64"), "(),(),()->(n)")(start, stop, 1)
    assert y.type.shape == (None, None)
    f = eg.function([start, stop], y)
    np.testing.assert_array_equal(f(np.array([0, 5]), np.array([3, 8])), [[0, 1, 2], [5, 6, 7]])
    with pytest.raises(ValueError, match=r"output 0 of ARange\{int64\} has blocks of different shapes \[\(3,\), \(4,\)\]"):
        f(np.array([0, 4]), np.array([3, 8]))
