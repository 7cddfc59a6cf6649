"""The privacy ledger, as the release stage names it: :mod:`cocoviz.measure.ledger` (where every secure draw,
the library's included, is recorded before its noise)."""

from cocoviz.measure.ledger import (  # noqa: F401
    COLUMNS,
    LEDGER_ENV,
    NEIGHBOURS,
    STATUSES,
    Ledger,
    check_cap,
    dataset_identity,
    default_path,
    source_identity,
)
from cocoviz.measure.recording import Recorded, resolve_ledger  # noqa: F401

__all__ = [
    "Ledger",
    "LEDGER_ENV",
    "NEIGHBOURS",
    "COLUMNS",
    "STATUSES",
    "Recorded",
    "dataset_identity",
    "default_path",
    "check_cap",
    "resolve_ledger",
    "source_identity",
]
