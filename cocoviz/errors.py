"""The package's exception family.

Every error the package raises for a caller's mistake is a :class:`CocovizError`,
and every one of those is a :class:`ValueError`, so callers written before the
family existed keep working.  Catch the family, never ``Exception``: a bug is not
a user error and must not be shown as one.

>>> try:
...     raise ParameterError("ε of level 0 must be > 0, got -1")
... except ValueError as exc:
...     print(type(exc).__name__, "|", exc)
ParameterError | ε of level 0 must be > 0, got -1
"""

from __future__ import annotations

__all__ = [
    "CocovizError",
    "InputError",
    "ParameterError",
    "UnknownNode",
    "BudgetError",
    "PrivacyError",
    "SetupError",
]


class CocovizError(ValueError):
    """Base of every error the package raises for what a caller gave it."""


class InputError(CocovizError):
    """A data table, file or hierarchy that cannot be used (named column, rows and problem)."""


class ParameterError(CocovizError):
    """A parameter of a release or an experiment that cannot be used (ε, method, p, K, seed, ...)."""


class UnknownNode(ParameterError, KeyError):
    """A node path that is not in the hierarchy; also a ``KeyError``, as a lookup that fails."""

    __str__ = BaseException.__str__  # KeyError's would quote the message


class BudgetError(ParameterError):
    """A privacy budget outside the range the samplers handle exactly."""


class PrivacyError(CocovizError):
    """A request that would break the privacy claim of a release (e.g. a secure release whose
    public inputs were taken from private rows)."""


class SetupError(CocovizError):
    """This machine lacks what a request needs (e.g. kaleido and a Chromium for PNG export)."""
