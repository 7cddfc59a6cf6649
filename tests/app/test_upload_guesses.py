"""Upload proposals (issue 25): an id column (one row per value) is never proposed as a level, with a warning;
the persons form guesses its group column."""

from __future__ import annotations

from tests.support.app import assert_clean, new_app


def _upload(at, name: str, raw: bytes, kind: str | None = None) -> None:
    from pages.common.data import UPLOAD

    at.selectbox(key="w.dataset").set_value(UPLOAD).run()
    if kind:
        at.radio(key="w.upload.kind").set_value(kind).run()
    at.file_uploader[0].set_value((name, raw, "text/csv"))
    at.run()


def test_an_id_column_is_not_proposed_and_is_named():
    rows = "".join(f"h{k},{'ab'[k % 2]},{1 + k % 3}\n" for k in range(12))
    at = new_app()
    _upload(at, "groups.csv", ("household_id,state,size\n" + rows).encode())
    assert_clean(at)
    assert at.text_input(key="w.upload.levels").value == "state"
    assert any("`household_id` has one row per value" in w.value for w in at.sidebar.warning)


def test_the_persons_form_guesses_the_group_column():
    rows = "".join(f"p{k},hh{k // 3},{'ab'[(k // 3) % 2]}\n" for k in range(12))
    at = new_app()
    _upload(at, "persons.csv", ("pid,household,state\n" + rows).encode(), kind="persons")
    assert_clean(at)
    assert at.text_input(key="w.upload.group").value == "household"
    assert at.text_input(key="w.upload.levels").value == "state"
