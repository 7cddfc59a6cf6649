"""Recording a secure draw of the library in the privacy ledger (:mod:`cocoviz.measure.ledger`), before its noise.

:func:`begin_draw` is called by :func:`~cocoviz.measure.measurements.open_measurement` (so by
:func:`cocoviz.measure` and :func:`cocoviz.estimate`) after the inputs are checked and before any noise,
a private K's included.  The ledger is :func:`resolve_ledger`'s: the default file unless one is given;
``ledger=False`` skips the record and writes :data:`NOT_RECORDED` into the budget's notes; a caller that
recorded the draw itself (the command line, the dashboard) passes :class:`Recorded`.

>>> import tempfile, os
>>> from cocoviz.plan import Plan, Shape
>>> plan = Plan.build(Shape((), (((),),), ((),), ((4,),)), epsilons=[1.0], methods=["Hg"])
>>> book = Ledger(os.path.join(tempfile.mkdtemp(), "ledger.sqlite"))
>>> draw, notes = begin_draw(book, plan, plan.cost(), secure=True)
>>> draw.complete(); book.entries()["status"].tolist(), notes
(['complete'], ())
>>> begin_draw(False, plan, plan.cost(), secure=True)[1]
('not recorded in a privacy ledger: the caller asked so (ledger=False)',)
"""

from __future__ import annotations

import os

from cocoviz.errors import ParameterError
from cocoviz.measure.ledger import Ledger

__all__ = ["Recorded", "Draw", "NOT_RECORDED", "begin_draw", "resolve_ledger"]


class Recorded:
    """A draw already recorded by its caller as ledger entry ``entry`` (the command line records the release it
    writes): :func:`~cocoviz.measure.measurements.measure` and :func:`~cocoviz.pipeline.estimate.estimate`
    given it record nothing more."""

    def __init__(self, ledger: Ledger, entry: int):
        self.ledger, self.entry = ledger, int(entry)

    def __repr__(self) -> str:
        return f"Recorded({self.ledger!r}, {self.entry})"


#: What a budget's notes say of a secure draw told not to be recorded (``ledger=False``).
NOT_RECORDED = "not recorded in a privacy ledger: the caller asked so (ledger=False)"


def resolve_ledger(ledger) -> Ledger | Recorded | None:
    """The ledger a secure draw records in: None or True → the default file (:func:`default_path`); a path → that
    file; a :class:`Ledger` or :class:`Recorded` as given; False → None (not recorded, said in the budget)."""
    if ledger is False:
        return None
    if ledger is None or ledger is True:
        return Ledger()
    if isinstance(ledger, (Ledger, Recorded)):
        return ledger
    if isinstance(ledger, (str, os.PathLike)):
        return Ledger(ledger)
    raise ParameterError(f"ledger must be a Ledger, a path, None (the default ledger) or False, got {ledger!r}")


class Draw:
    """One secure draw's entry, begun by :func:`begin_draw` before its noise: :meth:`complete` or :meth:`fail`
    it when the draw ends (both do nothing for a draw that is not recorded)."""

    def __init__(self, ledger: Ledger | None = None, entry: int | None = None):
        self.ledger, self.entry = ledger, entry

    def complete(self) -> None:
        if self.ledger is not None and self.entry is not None:
            self.ledger.complete(self.entry)

    def fail(self, reason: str | BaseException) -> None:
        if self.ledger is not None and self.entry is not None:
            self.ledger.fail(self.entry, reason)


def begin_draw(ledger, plan, budget, *, secure: bool, dataset: str | None = None) -> tuple[Draw, tuple[str, ...]]:
    """Record a library draw before its noise: (its :class:`Draw`, the budget notes it adds).

    A fast (seeded) draw is exploration: not recorded, no note.  A secure draw is recorded in
    :func:`resolve_ledger`'s ledger (the cap checked) unless the caller recorded it (:class:`Recorded`);
    ``ledger=False`` skips it and says so in the budget's notes.
    """
    if not secure:
        return Draw(), ()
    book = resolve_ledger(ledger)
    if book is None:
        return Draw(), (NOT_RECORDED,)
    if isinstance(book, Recorded):
        return Draw(), ()
    return Draw(
        book, book.begin(plan, budget, label="library draw", sampler=budget.sampler or "secure", dataset=dataset)
    ), ()
