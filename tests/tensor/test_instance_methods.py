"""PyTensor's tensor methods that are spelled as methods: each equals the function it names,
checked against NumPy, and norm's gradient by finite differences."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

RNG = np.random.default_rng(7)
M = RNG.standard_normal((3, 4))
Z = M + 1j * RNG.standard_normal((3, 4))


@pytest.mark.parametrize("method, reference", [
    (lambda x: x.argsort(), lambda a: np.argsort(a, kind="stable")),
    (lambda x: x.argsort(axis=0), lambda a: np.argsort(a, axis=0, kind="stable")),
    (lambda x: x.sort(axis=0), lambda a: np.sort(a, axis=0)),
    (lambda x: x.cumsum(), np.cumsum),
    (lambda x: x.cumsum(axis=1), lambda a: np.cumsum(a, axis=1)),
    (lambda x: x.cumprod(axis=0), lambda a: np.cumprod(a, axis=0)),
], ids=["argsort", "argsort-axis0", "sort-axis0", "cumsum", "cumsum-axis1", "cumprod-axis0"])
def test_real_methods_match_numpy(method, reference):
    x = et.dmatrix("x")
    got = eg.function([x], method(x))(M)
    want = reference(M)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_complex_parts_and_conjugate():
    z = et.zmatrix("z")
    real, imag, conj, conjugate = eg.function([z], [z.real, z.imag, z.conj(), z.conjugate()])(Z)
    assert real.dtype == imag.dtype == np.float64 and conj.dtype == np.complex128
    np.testing.assert_array_equal(real, Z.real)
    np.testing.assert_array_equal(imag, Z.imag)
    np.testing.assert_array_equal(conj, Z.conj())
    np.testing.assert_array_equal(conjugate, Z.conj())


@pytest.mark.parametrize("order", [1, 2, 3.5])
def test_norm_matches_numpy_and_its_gradient(order):
    x = et.dvector("x")
    v = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(eg.function([x], x.norm(order))(v), np.linalg.norm(v, order), rtol=1e-14)
    eg.verify_grad(lambda t: t.norm(order), [v], rng=np.random.default_rng(0))


def test_norm_by_axis_and_refused_orders():
    x = et.dmatrix("x")
    np.testing.assert_allclose(eg.function([x], x.norm(2, axis=1))(M), np.linalg.norm(M, axis=1), rtol=1e-14)
    for order in (0, np.inf):
        with pytest.raises(NotImplementedError, match=f"norm\\(L={order}\\)"):
            x.norm(order)


def test_conj_of_a_real_tensor_is_the_tensor_itself():
    # PyTensor's method: no conjugate node where the dtype is not complex
    x = et.dmatrix("x")
    assert x.conj() is x and x.conjugate() is x


@pytest.mark.parametrize("method, reference", [
    (lambda x: x.ravel(), np.ravel),
    (lambda x: x.swapaxes(0, 1), lambda a: np.swapaxes(a, 0, 1)),
    (lambda x: x.fill(3.5), lambda a: np.full_like(a, 3.5)),
    (lambda x: x.repeat(2, axis=1), lambda a: np.repeat(a, 2, axis=1)),
    (lambda x: x.diagonal(1), lambda a: np.diagonal(a, 1)),
    (lambda x: x.trace(), np.trace),
    (lambda x: x.ptp(axis=0), lambda a: np.ptp(a, axis=0)),
    (lambda x: x.compress([True, False, True], axis=0), lambda a: np.compress([True, False, True], a, axis=0)),
    (lambda x: x.nonzero_values(), lambda a: a[np.nonzero(a)]),
], ids=["ravel", "swapaxes", "fill", "repeat", "diagonal", "trace", "ptp", "compress", "nonzero_values"])
def test_numpy_named_methods_match_numpy(method, reference):
    x = et.dmatrix("x")
    a = np.where(M > 0.5, 0.0, M)
    got = eg.function([x], method(x))(a)
    want = reference(a)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_nonzero_and_choose_methods_match_numpy():
    a = np.array([[0, 1, 2], [2, 0, 1]])
    x = et.lmatrix("x")
    for got, want in zip(eg.function([x], list(x.nonzero()))(a), np.nonzero(a)):
        np.testing.assert_array_equal(got, want)
    choices = np.arange(18.0).reshape(3, 2, 3)
    c = et.dtensor3("c")
    np.testing.assert_array_equal(eg.function([x, c], x.choose(c))(a, choices), a.choose(choices))
