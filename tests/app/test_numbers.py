"""The number boxes' judge: every refused number gets a message naming the box, the rule and the value."""

from __future__ import annotations

import math

import pytest

from pages.common.numbers import refusal
from tests.support import app as app_support  # noqa: F401  (puts the project root on sys.path)


@pytest.mark.parametrize(
    "value, rule, message",
    [
        (0.1, {"whole": True, "lo": 1, "hi": 10_000_000}, "K must be a whole number between 1 and 10,000,000, got 0.1"),
        (2.5, {"whole": True, "lo": 1}, "K must be a whole number, at least 1, got 2.5"),
        (7.5, {"whole": True}, "K must be a whole number, got 7.5"),
        (0.0, {"lo": 0, "lo_open": True}, "K must be more than 0, got 0"),
        (1.0, {"lo": 0, "hi": 1, "lo_open": True, "hi_open": True}, "K must be more than 0 and less than 1, got 1"),
        (-1.0, {"lo": 1e-6, "hi": 1e6}, "K must be between 1e-06 and 1e+06, got -1"),
        (None, {"whole": True}, "K: type a whole number"),
        (math.inf, {}, "K must be a finite number, got inf"),
        (math.nan, {"lo": 0}, "K must be a finite number, got nan"),
        (True, {}, "K: type a number"),
    ],
)
def test_refused_numbers_are_named(value, rule, message):
    assert refusal(value, "K", **rule) == message


@pytest.mark.parametrize(
    "value, rule",
    [
        (1.0, {"whole": True, "lo": 1, "hi": 10}),
        (10, {"whole": True, "lo": 1, "hi": 10}),
        (0.5, {"lo": 0, "lo_open": True}),
    ],
)
def test_usable_numbers_pass(value, rule):
    assert refusal(value, "K", **rule) is None
