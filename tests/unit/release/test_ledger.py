"""The privacy ledger: recorded before the draw, never missing after a crash, a cap per dataset, safe writers."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pandas as pd
import pytest

from cocoviz import InputError, PrivacyError
from cocoviz.errors import ParameterError
from cocoviz.plan import Plan, Shape
from cocoviz.release.ledger import COLUMNS, LEDGER_ENV, NEIGHBOURS, Ledger, dataset_identity, default_path

SHAPE = Shape(("region",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
OTHER = Shape(("region",), (((),), (("a",), ("b",))), ((), (0, 0)), ((5,), (2, 3)))


def plan_of(shape=SHAPE, eps=(0.5, 0.5)):
    return Plan.build(shape, epsilons=list(eps), methods=["Hg", "Hc"], max_size=8)


def test_a_draw_is_started_then_complete_with_its_cost_and_files(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    plan = plan_of()
    entry = ledger.begin(plan, label="toy", files=[tmp_path / "release.parquet"])
    row = ledger.entries().iloc[0]
    assert (row["id"], row["status"], row["label"], row["epsilon"]) == (entry, "started", "toy", 1.0)
    assert row["dataset"] == dataset_identity(SHAPE) and row["neighbours"] == NEIGHBOURS
    assert row["files"].endswith("release.parquet") and pd.isna(row["finished"])
    assert row["measurements"] == (
        "level 0: Hg, 1 node(s), 4 cells, Δ=1, ε=0.5, scale=2; "
        "level 1: Hc[0..7], 2 node(s), 16 cells, Δ=1, ε=0.5, scale=2"
    )
    assert ledger.plan(entry) == plan
    assert json.loads(row["parameters"])["methods"] == ["Hg", "Hc"] and "shape" not in row["parameters"]
    with pytest.raises(InputError, match="no entry 99"):
        ledger.plan(99)
    ledger.complete(entry)
    row = ledger.entries().iloc[0]
    assert row["status"] == "complete" and isinstance(row["finished"], str)
    assert ledger.spent(dataset_identity(SHAPE)) == 1.0 and ledger.spent(dataset_identity(OTHER)) == 0.0


def test_a_failure_inside_a_draw_leaves_it_incomplete_and_counted(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    with pytest.raises(OSError, match="disk full"), ledger.draw(plan_of(), label="toy"):
        raise OSError("disk full")
    row = ledger.entries().iloc[0]
    assert row["status"] == "incomplete" and row["note"] == "OSError: disk full"
    assert ledger.spent() == 1.0


def test_the_cap_is_per_dataset_and_refuses_before_recording(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    for _ in range(3):
        ledger.begin(plan_of(eps=(1 / 3, 1 / 3)), cap=2.0)  # 2/3 each: three fit a cap of 2 exactly
    with pytest.raises(PrivacyError, match=r"cap is ε = 2 per dataset.*has spent ε = 2 in 3.*nothing was drawn"):
        ledger.begin(plan_of(eps=(0.01, 0.01)), cap=2.0)
    assert len(ledger.entries()) == 3
    ledger.begin(plan_of(OTHER), cap=2.0)  # another dataset identity has its own total
    assert ledger.entries()["dataset"].nunique() == 2
    for bad in (0, -1.0, float("inf"), True, "3"):
        with pytest.raises(ParameterError, match="budget cap"):
            ledger.begin(plan_of(), cap=bad)


def test_a_kept_cap_holds_for_every_later_draw(tmp_path):
    path = tmp_path / "ledger.sqlite"
    Ledger(path).set_cap(1.5)
    assert Ledger(path).cap() == 1.5
    Ledger(path).begin(plan_of())
    with pytest.raises(PrivacyError, match="cap is ε = 1.5"):
        Ledger(path).begin(plan_of(), cap=10.0)  # the smaller of the two holds
    with pytest.raises(PrivacyError, match="cap is ε = 0.5"):
        Ledger(path).begin(plan_of(OTHER), cap=0.5)
    with pytest.raises(PrivacyError, match="cap is ε = 1.5"):
        Ledger(path).check(plan_of())  # the page's preview refuses as begin would
    Ledger(path).set_cap(None)
    assert Ledger(path).cap() is None
    Ledger(path).check(plan_of(), cap=2.0)  # 1 + 1 fits
    Ledger(path).begin(plan_of())
    assert len(Ledger(path).entries()) == 2


def _begin_in_child(path: str, results) -> None:
    try:
        results.put(Ledger(path).begin(plan_of(), cap=5.0))
    except PrivacyError:
        results.put(None)


def test_concurrent_writers_never_pass_the_cap(tmp_path):
    """Twelve writers — six threads and six processes — race for a cap of five draws of ε = 1."""
    path = str(tmp_path / "ledger.sqlite")
    Ledger(path)
    results = multiprocessing.get_context("fork").Queue()
    threads = [threading.Thread(target=_begin_in_child, args=(path, results)) for _ in range(6)]
    processes = [
        multiprocessing.get_context("fork").Process(target=_begin_in_child, args=(path, results)) for _ in range(6)
    ]
    for worker in [*processes, *threads]:  # fork first: a child must not inherit another thread's connection
        worker.start()
    for worker in [*threads, *processes]:
        worker.join()
    outcomes = [results.get(timeout=30) for _ in range(12)]
    assert sum(o is not None for o in outcomes) == 5
    assert len(Ledger(path).entries()) == 5 and Ledger(path).spent() == 5.0


def test_a_killed_release_reads_as_incomplete_never_missing(tmp_path):
    path = tmp_path / "ledger.sqlite"
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_ledger import plan_of
        from cocoviz.release.ledger import Ledger
        Ledger({str(path)!r}).begin(plan_of(), label="killed")
        print("begun", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "begun"
        assert Ledger(path).entries()["status"].tolist() == ["started"]  # alive: still drawing
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
    assert Ledger(path).entries()[["label", "status"]].values.tolist() == [["killed", "incomplete"]]


def test_csv_export_and_default_path(tmp_path, monkeypatch):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    with ledger.draw(plan_of(), label="a, b"):
        pass
    frame = pd.read_csv(io.StringIO(ledger.to_csv()))
    assert list(frame.columns) == list(COLUMNS) and frame["label"].tolist() == ["a, b"]
    ledger.to_csv(tmp_path / "ledger.csv")
    assert pd.read_csv(tmp_path / "ledger.csv")["epsilon"].tolist() == [1.0]
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "elsewhere.sqlite"))
    assert default_path() == tmp_path / "elsewhere.sqlite"
    monkeypatch.delenv(LEDGER_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    if sys.platform.startswith("linux"):
        assert default_path() == tmp_path / "data" / "cocoviz" / "ledger.sqlite"


def test_an_unusable_ledger_file_is_a_message(tmp_path):
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(InputError, match="junk.sqlite"):
        Ledger(tmp_path / "junk.sqlite")
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="cannot open the privacy ledger"):
        Ledger(tmp_path / "file" / "ledger.sqlite")


def test_the_identity_is_hashed_once_per_shape(monkeypatch):
    # The dashboard asks for it on every rerun; at national scale hashing the description takes most of a second.
    from cocoviz.core.shape import Shape

    shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((3,), (1, 2)), public_groups=True)
    first = dataset_identity(shape)
    monkeypatch.setattr(Shape, "to_dict", lambda self: pytest.fail("hashed again"))
    assert dataset_identity(shape) == first == shape.digest()
