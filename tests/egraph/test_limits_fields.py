"""Limits checks every field when it is made: a wrong one is named, with what was expected."""

import math

import numpy as np
import pytest

import eqgraph as eg


@pytest.mark.parametrize("field, value, expected", [
    ("iterations", -1, r"Limits\.iterations must be an integer >= 0, not -1"),
    ("iterations", 2.5, r"Limits\.iterations must be an integer >= 0, not 2\.5 \(float\)"),
    ("iterations", True, r"Limits\.iterations must be an integer >= 0, not True \(bool\)"),
    ("iterations", "3", r"Limits\.iterations must be an integer >= 0, not '3' \(str\)"),
    ("nodes", -5, r"Limits\.nodes must be an integer >= 0, not -5"),
    ("nodes", 1e5, r"Limits\.nodes must be an integer >= 0, not 100000\.0 \(float\)"),
    ("nodes", None, r"Limits\.nodes must be an integer >= 0, not None"),
    ("seconds", math.nan, r"Limits\.seconds must be a finite number of seconds >= 0, not nan"),
    ("seconds", math.inf, r"Limits\.seconds must be a finite number of seconds >= 0, not inf"),
    ("seconds", -1.0, r"Limits\.seconds must be a finite number of seconds >= 0, not -1\.0"),
    ("seconds", "10", r"Limits\.seconds must be a finite number of seconds >= 0, not '10' \(str\)"),
    ("seconds", False, r"Limits\.seconds must be a finite number of seconds >= 0, not False \(bool\)"),
    ("match_limit", 0, r"Limits\.match_limit must be None \(twice the encoded graph's size\) or an integer >= 1, not 0"),
    ("match_limit", -3, r"Limits\.match_limit must be None .* or an integer >= 1, not -3"),
    ("match_limit", 10.0, r"Limits\.match_limit must be None .* or an integer >= 1, not 10\.0 \(float\)"),
])
def test_a_wrong_field_is_named_with_what_was_expected(field, value, expected):
    with pytest.raises((TypeError, ValueError), match=expected):
        eg.Limits(**{field: value})


def test_a_wrong_type_is_a_type_error_and_a_wrong_value_a_value_error():
    with pytest.raises(TypeError):
        eg.Limits(nodes="many")
    with pytest.raises(ValueError):
        eg.Limits(nodes=-1)
    with pytest.raises(ValueError):
        eg.Limits(seconds=math.nan)


def test_integers_of_any_kind_and_whole_seconds_are_accepted():
    limits = eg.Limits(iterations=np.int64(3), nodes=np.int32(500), seconds=2, match_limit=np.uint16(7))
    assert (limits.iterations, limits.nodes, limits.seconds, limits.match_limit) == (3, 500, 2.0, 7)
    assert all(type(v) in (int, float) for v in (limits.iterations, limits.nodes, limits.seconds, limits.match_limit))
    assert eg.Limits(iterations=0, nodes=0, seconds=0.0).iterations == 0
