"""A secure release on data without a public K: the K shown, confirmed as public, unlocks it."""

from __future__ import annotations

from tests.support.app import assert_clean, new_app


def test_a_public_k_equal_to_the_suggestion_unlocks_the_secure_release(tmp_path, monkeypatch):
    from pages.common import data

    monkeypatch.setenv("COCOVIZ_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setattr(data, "suggested_k", lambda info, tree: (10, True))  # as on an upload: read from the data
    at = new_app()
    at.toggle(key="w.secure").set_value(True).run()
    assert_clean(at)
    assert any("K from public knowledge" in e.value for e in at.error)
    at.checkbox(key="w.K.public.toy").check().run()  # the same number, declared public
    assert_clean(at)
    assert not any("K from public knowledge" in e.value for e in at.error)
    assert any("secure sampler will noise" in w.value for w in at.warning)
