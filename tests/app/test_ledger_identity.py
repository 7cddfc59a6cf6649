"""The dashboard's privacy ledger keys a secure draw by its persons, as the command line does.

Every hierarchy built from the same persons — another choice of levels, another groups table — counts
against one cap: keyed by the hierarchy's shape, a release of fewer levels was a new dataset with a cap
of its own.
"""

from __future__ import annotations

import pandas as pd

from tests.support.app import assert_clean, new_app


def _draw(at) -> None:
    at.toggle(key="w.secure").set_value(True).run()
    at.button(key="explore.secure").click().run()
    assert_clean(at)


def test_another_choice_of_levels_counts_against_the_same_cap(tmp_path, monkeypatch):
    from cocoviz.datasets import persons_identity
    from cocoviz.release.ledger import Ledger

    monkeypatch.setenv("COCOVIZ_LEDGER", str(tmp_path / "ledger.sqlite"))
    Ledger().set_cap(3.5)
    at = new_app()
    _draw(at)  # root and region, ε = 1 each: 2 of the cap's 3.5
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "complete" and entry.epsilon == 2.0
    assert entry.dataset == persons_identity("toy")
    # The root alone (another hierarchy of the same persons) at its default ε = 2: 4 > 3.5, refused before any
    # noise.  Keyed by the shape, the root-only hierarchy was another dataset and its draw was let through.
    at.multiselect(key="w.levels.toy").set_value([]).run()
    assert_clean(at)
    assert any("budget cap is ε = 3.5 per dataset" in e.value and "to ε = 4;" in e.value for e in at.error)
    assert not any(b.key == "explore.secure" for b in at.button)
    assert len(Ledger().entries()) == 1


def test_the_ledger_panel_counts_every_choice_of_levels(tmp_path, monkeypatch):
    from cocoviz.release.ledger import Ledger

    monkeypatch.setenv("COCOVIZ_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = new_app()
    _draw(at)
    fewer = new_app(**{"ledger.panel": True})
    fewer.multiselect(key="w.levels.toy").set_value([]).run()
    fewer.toggle(key="w.secure").set_value(True).run()
    assert_clean(fewer)
    # The root-only release's gate reads the draw of the two-level one: same persons.
    assert any("the ledger holds ε = 2 in 1 secure release(s)" in w.value for w in fewer.warning)
    (table,) = fewer.dataframe
    assert table.value["epsilon"].tolist() == [2.0]
    assert len(Ledger().entries()) == 1


def test_bundled_datasets_of_one_population_share_an_identity():
    from pages.common import data

    assert data.bundled_identity("housing") == data.bundled_identity("housing-west")
    assert data.bundled_identity("housing") == data.bundled_identity("housing-us-tracts")
    assert data.bundled_identity("white") == data.bundled_identity("white-west")
    assert len({data.bundled_identity(n) for n in ("toy", "housing", "white", "hawaiian", "taxi")}) == 5


def test_an_upload_is_identified_by_its_table_not_its_levels_roles_or_groups():
    from cocoviz.hierarchy.ingest import read_table
    from cocoviz.measure.identity import source_identity
    from pages.common.uploads import Upload

    persons = pd.DataFrame({"hh": [1, 1, 2, 3], "state": ["a", "a", "b", "b"], "county": ["x", "x", "y", "z"]})
    raw = persons.to_csv(index=False).encode()
    groups = pd.DataFrame({"hh": [1, 2, 3], "state": ["a", "b", "b"]}).to_csv(index=False).encode()
    both = Upload(raw, "p.csv", None, None, (("group", "hh"), ("kind", "persons"), ("levels", ("state", "county"))))
    one = Upload(raw, "p.csv", groups, "g.csv", (("group", "hh"), ("kind", "persons"), ("levels", ("state",))))
    renamed = Upload(raw, "other.csv", None, None, both.options)
    assert both.info().identity == one.info().identity == renamed.info().identity
    # The library's identity of the same table as a frame, so a script and the page share a cap.
    assert both.info().identity == source_identity(read_table(raw, filename="p.csv"))
    changed = Upload(raw.replace(b"3,b,z", b"3,b,y"), "p.csv", None, None, both.options)
    assert changed.info().identity != both.info().identity
