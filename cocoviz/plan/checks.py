"""The checks a plan's values go through when built or read: one value per level, p, K, and the figures
that zCDP plans stored beside their ρ before a plan held no ε.

>>> per_level([1.0, 2.0], 2, "epsilons"), check_k(None)
([1.0, 2.0], 100000)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

from cocoviz.errors import ParameterError
from cocoviz.methods.registry import DEFAULT_MAX_SIZE, MAX_K, METHODS, Method, gaussian_epsilon

__all__ = ["per_level", "check_p", "check_k", "close", "variance_equivalents"]


def per_level(value, n_levels: int, name: str) -> list:
    """``value`` as a list of one entry per level, or a refusal naming ``name`` and the count expected."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ParameterError(f"{name} must be a sequence with one entry per level ({n_levels}), got {value!r}")
    if len(value) != n_levels:
        raise ParameterError(
            f"{name} has {len(value)} entries but the hierarchy has {n_levels} levels "
            f"(the root and {n_levels - 1} below it): give one per level"
        )
    return list(value)


def check_p(q, method: Method, level: int) -> int | None:
    """The isotonic loss of ``level``: None for a method without one, its default for None, else 1 or 2."""
    if method.default_p is None:
        return None
    if q is None:
        return method.default_p
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or q not in (1, 2):
        raise ParameterError(f"p of level {level} must be 1 or 2, got {q!r}")
    return int(q)


def check_k(max_size) -> int:
    """The public bound K: 100,000 for None, else a whole number from 1 to :data:`MAX_K`."""
    if max_size is None:
        return DEFAULT_MAX_SIZE
    if isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral) or not 1 <= max_size <= MAX_K:
        raise ParameterError(f"max_size K must be a whole number from 1 to {MAX_K:,}, got {max_size!r}")
    return int(max_size)


def close(a, b) -> bool:
    """Whether two lists of numbers are equal up to rounding in a file."""
    return len(a) == len(b) and all(math.isclose(float(x), float(y), rel_tol=1e-9) for x, y in zip(a, b))


def variance_equivalents(rhos, methods) -> list[float]:
    """The ε per level that zCDP plans saved before they held no ε stored beside their ρ (each level's own ρ)."""
    return [gaussian_epsilon(r, METHODS[m]) for r, m in zip(rhos, methods)]
