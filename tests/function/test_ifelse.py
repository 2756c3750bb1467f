"""``eqgraph.ifelse``: lazy (only the taken branch runs), several outputs, gradients
through both branches."""

import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import Apply, Op


class Counted(Op):
    """x * 2, counting its runs; ``fail=True`` raises instead."""

    __props__ = ("fail",)

    def __init__(self, fail=False):
        self.fail = fail
        self.calls = 0

    def make_node(self, x):
        x = et.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        Counted.calls_total[self.fail] += 1
        if self.fail:
            raise RuntimeError("the untaken branch ran")
        output_storage[0][0] = inputs[0] * 2

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]


Counted.calls_total = {False: 0, True: 0}


@pytest.fixture(autouse=True)
def _reset_counts():
    Counted.calls_total.update({False: 0, True: 0})


@pytest.mark.parametrize("rulesets", [[], eg.DEFAULT_RULESETS])
def test_only_the_taken_branch_runs(rulesets):
    c, x = et.dscalar("c"), et.dvector("x")
    y = eg.ifelse(c > 0, Counted()(x).sum(), Counted(fail=True)(x).mean())
    f = eg.function([c, x], y, rulesets=rulesets)
    assert f(1.0, np.arange(3.0)) == 6.0
    assert Counted.calls_total == {False: 1, True: 0}
    with pytest.raises(RuntimeError, match="the untaken branch ran") as info:
        f(-1.0, np.arange(3.0))
    assert isinstance(info.value, eg.NodeError) and "Counted" in str(info.value)


def test_several_outputs_match_numpy():
    c, x, m = et.lscalar("c"), et.dvector("x"), et.dmatrix("m")
    a, b = eg.ifelse(et.eq(c, 1), [et.exp(x), m @ x], [x * 3, m.sum(axis=1)])
    f = eg.function([c, x, m], [a, b])
    xv, mv = np.arange(3.0), np.arange(6.0).reshape(2, 3)
    out = f(1, xv, mv)
    np.testing.assert_allclose(out[0], np.exp(xv))
    np.testing.assert_allclose(out[1], mv @ xv)
    out = f(0, xv, mv)
    np.testing.assert_allclose(out[0], xv * 3)
    np.testing.assert_allclose(out[1], mv.sum(axis=1))


def test_nested_ifelse_and_work_shared_with_unconditional_outputs():
    c, d, x = et.dscalar("c"), et.dscalar("d"), et.dvector("x")
    shared_work = Counted()(x)
    inner = eg.ifelse(d > 0, Counted(fail=True)(x + 1).sum(), shared_work.sum())
    y = eg.ifelse(c > 0, inner, x.sum())
    f = eg.function([c, d, x], [y, shared_work.max()])
    np.testing.assert_allclose(f(1.0, -1.0, np.arange(3.0)), [6.0, 4.0])
    assert Counted.calls_total == {False: 1, True: 0}   # computed once, for both uses
    np.testing.assert_allclose(f(-1.0, 1.0, np.arange(3.0)), [3.0, 4.0])


def test_outputs_never_share_memory_with_inputs():
    c, x = et.dscalar("c"), et.dvector("x")
    f = eg.function([c, x], eg.ifelse(c > 0, x, x * 2))
    xv = np.arange(3.0)
    out = f(1.0, xv)
    assert not np.shares_memory(out, xv)
    np.testing.assert_array_equal(out, xv)


def test_gradient_flows_through_the_taken_branch_only():
    c, x = et.dscalar("c"), et.dvector("x")
    y = eg.ifelse(c > 0, (x ** 2).sum(), et.sin(x).sum())
    gx, gc = eg.grad(y, [x, c])
    f = eg.function([c, x], [gx, gc])
    xv = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(f(1.0, xv)[0], 2 * xv)
    np.testing.assert_allclose(f(-1.0, xv)[0], np.cos(xv))
    assert f(1.0, xv)[1] == 0.0
    for cond in (1.0, -1.0):  # finite differences, each branch
        eg.verify_grad(lambda v: eg.ifelse(et.constant(cond) > 0, (v ** 2).sum(), et.sin(v).sum()),
                       [xv], rng=np.random.default_rng(0))


def test_gradient_of_several_outputs_with_one_unused():
    c, x, z = et.dscalar("c"), et.dvector("x"), et.dvector("z")
    a, b = eg.ifelse(c > 0, [x * 2, z], [x, z * 3])
    g = eg.grad(a.sum(), [x, z], disconnected_inputs="ignore")
    f = eg.function([c, x, z], g)
    np.testing.assert_allclose(f(1.0, np.ones(2), np.ones(2)), [[2, 2], [0, 0]])
    np.testing.assert_allclose(f(-1.0, np.ones(2), np.ones(2)), [[1, 1], [0, 0]])


def test_profile_threads_and_pickle_keep_laziness():
    c, x = et.dscalar("c"), et.dvector("x")
    y = eg.ifelse(c > 0, Counted()(x).sum(), Counted(fail=True)(x).sum())
    f = eg.function([c, x], y, profile=True)
    assert f(1.0, np.ones(2)) == 4.0
    assert any(s.calls for s in f.profile.nodes if isinstance(s.node.op, eg.tensor.IfElse))
    g = pickle.loads(pickle.dumps(eg.function([c, x], y)))
    assert g(1.0, np.ones(2)) == 4.0
    assert Counted.calls_total[True] == 0


def test_bad_branches_are_refused_naming_them():
    c, x = et.dscalar("c"), et.dvector("x")
    with pytest.raises(TypeError, match="condition must be a scalar"):
        eg.ifelse(x > 0, x, x)
    with pytest.raises(TypeError, match="branches differ in type"):
        eg.ifelse(c, x, et.fvector("f"))
    with pytest.raises(ValueError, match="must pair up"):
        eg.ifelse(c, [x, x], [x])


def test_perform_and_infer_shape_for_eager_callers():
    c, x, y = et.dscalar("c"), et.dvector("x"), et.dvector("y")
    out = eg.ifelse(c > 0, x, y)
    (shape,) = out.owner.op.infer_shape(None, out.owner, [(), (x.shape[0],), (y.shape[0],)])
    f = eg.function([c, x, y], shape[0])
    assert f(1.0, np.ones(2), np.ones(5)) == 2 and f(-1.0, np.ones(2), np.ones(5)) == 5
    storage = [[None]]
    out.owner.op.perform(out.owner, [np.bool_(False), np.ones(2), np.zeros(5)], storage)
    np.testing.assert_array_equal(storage[0][0], np.zeros(5))


class FirstOrSecond(Op):
    """A user's lazy op (Aesara's lazy protocol): x if x.sum() >= 0, else y, computing y only then."""

    __props__ = ()
    lazy = True

    def make_node(self, x, y):
        x, y = et.as_tensor_variable(x), et.as_tensor_variable(y)
        return Apply(self, [x, y], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        x, y, out = node.inputs[0], node.inputs[1], node.outputs[0]

        def thunk():
            if not compute_map[x][0]:
                return [0]
            if storage_map[x][0].sum() >= 0:
                storage_map[out][0] = storage_map[x][0].copy()
            elif not compute_map[y][0]:
                return [1]
            else:
                storage_map[out][0] = storage_map[y][0].copy()
            compute_map[out][0] = 1
            return []

        thunk.lazy = True
        return thunk


def test_a_users_lazy_op_runs_through_the_lazy_linker():
    x = et.dvector("x")
    f = eg.function([x], FirstOrSecond()(x, Counted(fail=True)(x)), rulesets=[])
    np.testing.assert_array_equal(f(np.ones(2)), np.ones(2))
    with pytest.raises(RuntimeError, match="the untaken branch ran"):
        f(-np.ones(2))


def test_a_plain_value_takes_the_dtype_of_its_partner():
    c, x = et.dscalar("c"), et.fvector("x")
    y = eg.ifelse(c > 0, x.sum(), 0.0)
    assert y.dtype == "float32"
    f = eg.function([c, x], [y, eg.ifelse(c > 0, 1, x.max())])
    out = f(-1.0, np.ones(2, "float32"))
    assert out[0] == 0.0 and out[0].dtype == np.float32 and out[1] == 1.0


def test_rules_drop_an_ifelse_whose_choice_is_known():
    c, x = et.dscalar("c"), et.dvector("x")
    for y, expected in [(eg.ifelse(c > 0, x * 2, x * 2), 2.0), (eg.ifelse(et.constant(0.0), x * 2, x + 1), 2.0),
                        (eg.ifelse(et.constant(3.0), x + 2, x * 5), 3.0)]:
        f = eg.function([c, x], y, on_unused_input="ignore")
        assert not any(isinstance(n.op, eg.tensor.IfElse) for n in f.maker.fgraph.toposort())
        np.testing.assert_array_equal(f(-1.0, np.ones(2)), [expected, expected])
