"""The GPU's draws (``eqgraph.tensor.random_draws``), checked on the host with NumPy as ``xp``.

Under the CuPy backend every distribution is built from a generator's basic draws plus array
operations; the same code runs here over NumPy's generator, so each algorithm is checked on a
machine without a GPU: the shape and dtype NumPy's method gives, the law it draws from (seeded,
so these tests cannot flake), and NumPy's errors for bad parameters.
"""

import numpy as np
import pytest

from eqgraph.tensor.random_draws import DRAWS

RNG_SEED = 20261123


def draw(name, *params, size=None, **options):
    gen = np.random.default_rng(RNG_SEED)
    params = [np.asarray(p) for p in params]
    return DRAWS[name](np, gen, size, *params, float_dtype="float64", **options)


def numpy_draw(name, *params, size=None, **options):
    gen = np.random.default_rng(RNG_SEED)
    if name == "bernoulli":
        return gen.binomial(1, *params, size=size)
    if name == "permutation":
        return gen.permutation(*params)
    if name == "choice" and len(params) == 2:
        return gen.choice(params[0], size=size, p=params[1], **options)
    return getattr(gen, name)(*params, size=size, **options)


CASES = [
    ("normal", (np.zeros(3), 2.0), None, {}),
    ("normal", (0.0, 1.0), (2, 3), {}),
    ("uniform", (-1.0, np.ones((2, 1))), (2, 4), {}),
    ("bernoulli", (np.full(5, 0.3),), None, {}),
    ("integers", (0, 10), (4,), {}),
    ("integers", (np.array([0, 5]), np.array([3, 9])), (3, 2), {}),
    ("binomial", (np.array([3, 7]), 0.4), None, {}),
    ("multinomial", (5, np.array([0.2, 0.3, 0.5])), (4,), {}),
    ("multinomial", (np.array([5, 9]), np.array([0.5, 0.5])), None, {}),
    ("choice", (7,), (3,), {"replace": True}),
    ("choice", (np.arange(10.0), np.full(10, 0.1)), (2, 2), {"replace": False}),
    ("choice", (np.arange(5), np.array([0.1, 0.2, 0.3, 0.4, 0.0])), (), {"replace": True}),
    ("permutation", (6,), None, {}),
    ("permutation", (np.arange(12.0).reshape(4, 3),), None, {}),
]


@pytest.mark.parametrize("name, params, size, options", CASES, ids=[c[0] for c in CASES])
def test_each_draw_has_the_shape_and_dtype_kind_numpy_gives(name, params, size, options):
    ours = np.asarray(draw(name, *params, size=size, **options))
    theirs = np.asarray(numpy_draw(name, *params, size=size, **options))
    assert ours.shape == theirs.shape
    assert ours.dtype.kind == theirs.dtype.kind or (name == "bernoulli" and ours.dtype == bool)


def assert_frequencies(samples, probabilities):
    """Observed frequencies within 5 standard errors of ``probabilities`` (seeded: never flaky)."""
    samples = np.asarray(samples).ravel()
    counts = np.bincount(samples, minlength=len(probabilities)) / samples.size
    error = np.sqrt(np.asarray(probabilities) * (1 - np.asarray(probabilities)) / samples.size)
    np.testing.assert_array_less(np.abs(counts - probabilities), 5 * error + 1e-12)


def test_integers_with_array_bounds_are_uniform_on_each_range():
    out = draw("integers", np.array([0, 5]), np.array([3, 9]), size=(60_000, 2))
    assert out.dtype == np.int64
    assert_frequencies(out[:, 0], np.full(3, 1 / 3))
    assert_frequencies(out[:, 1] - 5, np.full(4, 1 / 4))


def test_choice_with_replacement_follows_p():
    p = np.array([0.1, 0.0, 0.6, 0.3])
    assert_frequencies(draw("choice", 4, p, size=(50_000,), replace=True), p)


def test_choice_without_replacement_includes_items_as_numpy_does():
    p = np.array([0.5, 0.25, 0.15, 0.1])
    trials = 20_000
    ours = draw("choice", 4, p, size=(trials, 1), replace=True)  # shape check of the with-replacement path
    assert ours.shape == (trials, 1)
    firsts, pairs = [], []
    for seed in range(trials // 20):
        gen = np.random.default_rng(seed)
        for _ in range(20):
            sample = DRAWS["choice"](np, gen, (2,), np.asarray(4), p, replace=False, float_dtype="float64")
            assert sample[0] != sample[1]
            firsts.append(sample[0])
            pairs.extend(sample)
    assert_frequencies(firsts, p)  # the first item drawn follows p
    # inclusion in a sample of two: P(i) = p_i + sum_j p_j p_i / (1 - p_j), j != i
    inclusion = np.array([p[i] + sum(p[j] * p[i] / (1 - p[j]) for j in range(4) if j != i) for i in range(4)])
    assert_frequencies(pairs, inclusion / 2)


def test_choice_without_p_and_without_replacement_is_a_uniform_subset():
    out = draw("choice", np.arange(10.0), size=(10,), replace=False)
    np.testing.assert_array_equal(np.sort(out), np.arange(10.0))


def test_multinomial_counts_sum_to_n_and_average_n_p():
    p = np.array([0.2, 0.3, 0.1, 0.4])
    out = draw("multinomial", np.array([10, 3]), p, size=(20_000, 2))
    assert out.shape == (20_000, 2, 4) and out.dtype.kind == "i" and out.min() >= 0
    np.testing.assert_array_equal(out.sum(axis=-1), np.broadcast_to([10, 3], (20_000, 2)))
    np.testing.assert_allclose(out[:, 0].mean(axis=0), 10 * p, atol=0.05)
    # the last category takes the probability left, as NumPy's does
    np.testing.assert_array_equal(draw("multinomial", 4, np.array([0.5, 0.5, 0.7]), size=(50,))[:, 2], 0)


def test_permutation_moves_each_item_to_every_place_alike():
    places = np.array([np.flatnonzero(DRAWS["permutation"](np, np.random.default_rng(s), None, np.asarray(5),
                                                           float_dtype="float64") == 0)[0]
                       for s in range(10_000)])
    assert_frequencies(places, np.full(5, 0.2))
    rows = np.arange(12.0).reshape(4, 3)
    shuffled = draw("permutation", rows)
    np.testing.assert_array_equal(shuffled[np.argsort(shuffled[:, 0])], rows)


BAD = [
    ("integers", (5, 5), (3,), {}),
    ("integers", (np.array([0, 4]), np.array([3, 4])), None, {}),
    ("binomial", (3, 1.5), None, {}),
    ("binomial", (-1, 0.5), None, {}),
    ("bernoulli", (np.nan,), None, {}),
    ("multinomial", (3, np.array([0.8, 0.4, 0.0])), None, {}),
    ("multinomial", (3, np.array([-0.1, 1.1])), None, {}),
    ("choice", (3,), (4,), {"replace": False}),
    ("choice", (3, np.array([0.5, 0.2, 0.2])), None, {"replace": True}),
    ("choice", (3, np.array([0.5, -0.5, 1.0])), None, {"replace": True}),
    ("choice", (3, np.array([1.0, 0.0, 0.0])), (2,), {"replace": False}),
]


@pytest.mark.parametrize("name, params, size, options", BAD, ids=[c[0] for c in BAD])
def test_parameters_numpy_refuses_are_refused_with_the_distribution_named(name, params, size, options):
    with pytest.raises(ValueError):
        numpy_draw(name, *params, size=size, **options)
    with pytest.raises(ValueError, match=name):
        draw(name, *params, size=size, **options)
