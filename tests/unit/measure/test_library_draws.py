"""Every secure draw of the library is in the privacy ledger (the default one unless a ledger is given);
skipping it is explicit and written into the budget; the ledger composes mixed pure-ε and zCDP draws."""

from __future__ import annotations

import pandas as pd
import pytest

import cocoviz
from cocoviz.hierarchy import Hierarchy
from cocoviz.measure.identity import source_identity
from cocoviz.measure.ledger import Ledger, compose
from cocoviz.measure.measurements import measure
from cocoviz.measure.recording import NOT_RECORDED
from cocoviz.plan import Plan
from cocoviz.privacy.accounting import zcdp_epsilon

PERSONS = pd.DataFrame({"hh": [1, 1, 2, 3, 3, 4], "state": ["a", "a", "a", "b", "b", "b"]})
GROUPS = PERSONS.drop_duplicates("hh")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("COCOVIZ_LEDGER", str(tmp_path / "default.sqlite"))
    return Hierarchy.from_persons(PERSONS, group="hh", levels=["state"], groups=GROUPS)


def test_estimate_and_measure_secure_are_recorded_in_the_default_ledger(tree):
    cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hg", "Hc"], max_size=5, secure=True)
    plan = Plan.build(tree, rhos=[0.125, 0.125], methods=["Hg", "Hg"], max_size=5)
    measure(plan, tree, sampler="secure")
    entries = Ledger().entries()
    assert entries["status"].tolist() == ["complete", "complete"]
    assert entries["accounting"].tolist() == ["pure-ε", "zCDP"] and entries["rho"][1] == 0.25
    assert entries["sampler"].str.startswith("secure").all()


def test_a_given_ledger_and_dataset_and_an_explicit_skip(tree, tmp_path):
    mine = Ledger(tmp_path / "mine.sqlite")
    dataset = source_identity(PERSONS)
    cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hg", "Hg"], secure=True, ledger=mine, dataset=dataset)
    assert mine.entries()["dataset"].tolist() == [dataset] and Ledger().entries().empty
    skipped = cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hg", "Hg"], secure=True, ledger=False)
    assert NOT_RECORDED in skipped.budget.notes and Ledger().entries().empty and len(mine.entries()) == 1
    seeded = cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hg", "Hg"], seed=1)  # exploration: never recorded
    assert NOT_RECORDED not in seeded.budget.notes and Ledger().entries().empty


def test_the_cap_holds_for_library_draws_and_a_refused_draw_draws_nothing(tree, tmp_path):
    mine = Ledger(tmp_path / "capped.sqlite")
    mine.set_cap(2.5)
    cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hg", "Hg"], secure=True, ledger=mine)
    with pytest.raises(cocoviz.PrivacyError, match="budget cap"):
        cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hg", "Hg"], secure=True, ledger=mine)
    assert len(mine.entries()) == 1


def test_compose_adds_rho_and_reads_it_once():
    """Two zCDP draws of ρ = 1 each: ε(2ρ) at δ, far below twice the reading of one (4.70 + 4.70 was stored)."""
    one = zcdp_epsilon(1.0, 1e-10)
    eps, rho, delta = compose([("zCDP", one, 1.0, 1e-10), ("zCDP", one, 1.0, 1e-10)])
    assert rho == 2.0 and delta == 1e-10 and eps == pytest.approx(zcdp_epsilon(2.0, 1e-10)) and eps < 2 * one
    eps, rho, _ = compose([("pure-ε", 0.1, None, None), ("zCDP", one, 1.0, 1e-6), ("zCDP", one, 1.0, 1e-10)])
    assert eps == pytest.approx(min(zcdp_epsilon(2.005, 1e-10), 0.1 + zcdp_epsilon(2.0, 1e-10)))
    assert compose([]) == (0.0, None, 0.0)


def test_an_old_ledger_is_upgraded_in_place(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE draws (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL, label TEXT NOT NULL, "
        "epsilon REAL NOT NULL, budget TEXT NOT NULL, plan TEXT NOT NULL, parameters TEXT NOT NULL, "
        "neighbours TEXT NOT NULL, sampler TEXT NOT NULL, started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL, "
        "files TEXT NOT NULL, note TEXT NOT NULL DEFAULT '', host TEXT NOT NULL, pid INTEGER NOT NULL);"
        "INSERT INTO draws (dataset, label, epsilon, budget, plan, parameters, neighbours, sampler, started, status, "
        "files, host, pid) VALUES ('d', 'old', 2.0, '{\"charges\": [[0, [], \"Hg\", 4, 1.0, 2.0, null, 1]], "
        '"extra": [], "composition": "c", "sampler": "secure", "notes": []}\', \'{}\', \'{}\', \'n\', \'secure\', '
        "'t', 'complete', '[]', 'h', 1);"
    )
    db.commit()
    db.close()
    entries = Ledger(path).entries()
    assert entries["accounting"].tolist() == ["pure-ε"] and Ledger(path).spent("d") == 2.0


def test_two_processes_upgrading_an_old_ledger_at_once_add_each_column_once(tmp_path):
    """A writer holds the file while it upgrades it; a second opener waits and then finds the columns there."""
    import sqlite3
    import threading

    path = tmp_path / "old.sqlite"
    Ledger(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript("ALTER TABLE draws DROP COLUMN delta;")  # an old ledger, missing one column
    db.execute("BEGIN IMMEDIATE")  # another process, part-way through the same upgrade
    db.execute("ALTER TABLE draws ADD COLUMN delta REAL")
    failed: list = []
    opener = threading.Thread(target=lambda: _open_into(path, failed))
    opener.start()
    opener.join(0.5)  # the opener is waiting for the write lock, having read nothing stale
    db.execute("COMMIT")
    db.close()
    opener.join(60)
    assert failed == [None]


def _open_into(path, out: list) -> None:
    try:
        Ledger(path)
        out.append(None)
    except Exception as exc:  # noqa: BLE001 - the test reports what the opener met
        out.append(exc)


def test_a_secure_selection_is_one_draw_of_its_whole_cost(tree):
    release = cocoviz.select_mix(tree, [["Hg", "Hg"], ["Hc", "Hg"]], epsilons=[1, 1], epsilon_select=0.5, secure=True,
                                 max_size=5)  # fmt: skip
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "complete" and entry.epsilon == release.budget.total == 2 * 2 + 0.5
