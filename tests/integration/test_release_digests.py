"""Seeded and fixed-key releases are bit-identical to the digests recorded before the level step was shared."""

from __future__ import annotations

import json

import pytest

from tests.support.digests import DIGESTS, cases, compute


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(DIGESTS.read_text())


def test_every_case_was_recorded(recorded):
    assert sorted(recorded) == sorted(f"{name}/{path}" for name, path in cases())


@pytest.mark.parametrize("name, path", cases())
def test_the_release_is_the_recorded_one(recorded, name, path):
    """One call (estimate), two steps (measure, post_process) and the measurements themselves."""
    assert compute(name, path) == recorded[f"{name}/{path}"]
