"""Exact comparisons of a lazy uniform real with exp(-γ): the bounds, the thresholds, the decisions."""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from randomgen import AESCounter
from scipy.stats import binomtest, chisquare

from cocoviz.privacy.noise._exact_exp import LazyUniform, exp_neg_bounds, thresholds, uniform_below


def exp_neg(gamma: Fraction, scale_bits: int) -> Decimal:
    """exp(-γ) * 2**scale_bits to 300 digits (a reference independent of the integer series)."""
    with localcontext() as ctx:
        ctx.prec = 300
        return (-(Decimal(gamma.numerator) / Decimal(gamma.denominator))).exp() * Decimal(2) ** scale_bits


GAMMAS = [
    Fraction(0),
    Fraction(1, 3),
    Fraction(1),
    Fraction(7, 2),
    Fraction(45),
    Fraction(99, 100),
    Fraction(2**52 - 1, 2**52),
]


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("bits", [8, 53, 64, 300])
def test_bounds_bracket_exp_tightly(gamma, bits):
    lo, hi = exp_neg_bounds(gamma, bits)
    with localcontext() as ctx:
        ctx.prec = 300
        assert lo <= exp_neg(gamma, bits) <= hi
    assert 0 <= hi - lo <= 4


def test_thresholds_are_the_exact_floors():
    with localcontext() as ctx:
        ctx.prec = 300
        for bits in (32, 64):
            expected = [int(exp_neg(Fraction(k), bits).to_integral_value(ROUND_FLOOR)) for k in range(1, 41)]
            assert thresholds(40, bits) == expected
    assert thresholds(32, 32)[21:] == [1] + [0] * 10  # exp(-22) 2**32 > 1 > exp(-23) 2**32


def scripted(words: list[int]):
    calls = []

    def more() -> int:
        calls.append(1)
        return words[len(calls) - 1]

    return more, calls


def test_an_undecided_prefix_is_settled_by_the_next_word():
    # W = (T_1 + B / 2**64) / 2**64 with T_1 = floor(exp(-1) 2**64): W < exp(-1) iff B < frac * 2**64.
    t1 = thresholds(1)[0]
    with localcontext() as ctx:
        ctx.prec = 300
        cut = int(((exp_neg(Fraction(1), 64) - t1) * Decimal(2) ** 64).to_integral_value(ROUND_FLOOR))
    for word, below in [(cut - 1, True), (cut + 1, False), (0, True), (2**64 - 1, False)]:
        more, calls = scripted([word])
        assert LazyUniform(more, t1, 64).below_exp(Fraction(1)) is below
        assert len(calls) == 1
    more, calls = scripted([])
    assert LazyUniform(more, t1 - 1, 64).below_exp(Fraction(1)) is True and not calls  # decided by the prefix
    assert LazyUniform(more, t1 + 1, 64).below_exp(Fraction(1)) is False and not calls


@pytest.mark.parametrize("gamma", [Fraction(1, 7), Fraction(1), Fraction(5, 2)])
def test_lazy_comparisons_are_bernoulli_exp(gamma):
    more = AESCounter(seed=21).random_raw
    n = 20_000
    hits = sum(LazyUniform(lambda: int(more())).below_exp(gamma) for _ in range(n))
    assert binomtest(hits, n, float(exp_neg(gamma, 0))).pvalue > 1e-6
    same = LazyUniform(lambda: int(more()))  # one W: its answers are monotone in γ
    answers = [same.below_exp(Fraction(k, 4)) for k in range(12)]
    assert answers == sorted(answers, reverse=True)


@pytest.mark.parametrize("t", [1, 3, 1000, 2**40 + 7, 2**70 + 1])
def test_uniform_below(t):
    more = AESCounter(seed=22).random_raw
    draws = np.array([uniform_below(t, lambda: int(more())) for _ in range(6_000)], dtype=object)
    assert all(0 <= d < t for d in draws)
    if t > 1:
        counts = np.bincount([int(d * 6 // t) for d in draws], minlength=6)[:6] if t >= 6 else None
        if counts is not None:
            assert chisquare(counts).pvalue > 1e-6
    with pytest.raises(ValueError, match="γ must be >= 0"):
        exp_neg_bounds(Fraction(-1), 10)
