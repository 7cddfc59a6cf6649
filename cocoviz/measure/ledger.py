"""The privacy ledger: a lasting record of every secure release drawn, in one SQLite file.

Every secure draw — by ``python -m cocoviz release`` or the dashboard — is written
here **before any noise is drawn and before its files are written** (status
``started``), then marked ``complete`` with the files written.  A release that
fails is marked ``incomplete`` with the reason; one whose process is killed stays
``started`` and is read back as ``incomplete`` once its process is gone.  No
entry is ever missing: ε counts as spent from the moment the draw begins.

An entry holds no private data: the dataset's identity, the plan, the cost (its
accounting, total ε or ρ and δ, every measurement's level, query, Δ, ε or ρ and
scale or σ), the neighbour relation, the sampler, times and file names.

**The dataset identity follows the persons** (:func:`source_identity`): a hash of where
the persons table comes from — the resolved absolute paths of its files, a database URL
(without its password) with its table or query, or the content of a frame — so every
hierarchy built from the same persons counts against one cap, whatever its levels.
It cannot see a copy of the data under another name (another path, another table, a
frame read from a renamed file): that counts as another dataset.  A draw given no
source (a bare :class:`~cocoviz.hierarchy.Hierarchy`) falls back to
:func:`dataset_identity`, a hash of the hierarchy's public shape.

An optional cap is **per dataset identity**: a draw that would take the spending
recorded for the same identity past the cap is refused before anything is drawn.
Spending composes in the draws' accounting: pure-ε draws add their ε; once a zCDP draw
is among them, ρ adds (a pure-ε draw counts ε²/2) and the ε compared with the cap is
the (ε, δ) reading of the composed ρ (at the smallest δ recorded), or that of the zCDP
draws plus the pure ε, whichever is smaller — never a sum of (ε, δ) readings.
The cap is given per draw (``cap=`` of :meth:`Ledger.begin`, ``--budget-cap``), or
kept in the file (:meth:`Ledger.set_cap`, the dashboard's setting) for every later
draw by any writer; when both are set the smaller holds.  Writers in several processes are safe: the
check and the insert run in one ``BEGIN IMMEDIATE`` transaction.  Exploration with
the fast seeded sampler is not a release and is not recorded.

>>> import tempfile, os
>>> from cocoviz.plan import Plan, Shape
>>> plan = Plan.build(Shape((), (((),),), ((),), ((4,),)), epsilons=[1.0], methods=["Hg"])
>>> ledger = Ledger(os.path.join(tempfile.mkdtemp(), "ledger.sqlite"))
>>> with ledger.draw(plan, label="toy", cap=1.5) as entry:
...     pass  # draw the noise, write the files
>>> ledger.spent(dataset_identity(plan.shape)), ledger.entries()["status"].tolist()
(1.0, ['complete'])
>>> ledger.begin(plan, label="toy", cap=1.5)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cocoviz.errors.PrivacyError: the budget cap is ε = 1.5 per dataset: this dataset (toy) has spent ε = 1 ...
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from cocoviz.core.atomic import write_text
from cocoviz.errors import InputError
from cocoviz.measure.identity import dataset_identity, source_identity
from cocoviz.measure.spending import check_cap, compose, recorded_costs, refuse_past_cap, row_cost
from cocoviz.plan import Plan
from cocoviz.privacy.budget import NEIGHBOURS, Budget

__all__ = [
    "Ledger",
    "LEDGER_ENV",
    "NEIGHBOURS",
    "compose",
    "dataset_identity",
    "default_path",
    "check_cap",
    "source_identity",
]

#: The environment variable naming the ledger file (the default is in the user's data folder).
LEDGER_ENV = "COCOVIZ_LEDGER"
#: Statuses an entry can have; ``incomplete`` is also how a ``started`` entry of a dead process reads.
STATUSES = ("started", "complete", "incomplete")
#: Columns of :meth:`Ledger.entries` and of the CSV export.
COLUMNS = (
    "id",
    "status",
    "dataset",
    "label",
    "epsilon",
    "accounting",
    "rho",
    "delta",
    "measurements",
    "neighbours",
    "sampler",
    "started",
    "finished",
    "files",
    "note",
    "parameters",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS draws (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    label TEXT NOT NULL,
    epsilon REAL NOT NULL,
    budget TEXT NOT NULL,
    plan TEXT NOT NULL,
    parameters TEXT NOT NULL,
    neighbours TEXT NOT NULL,
    sampler TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    status TEXT NOT NULL,
    files TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    host TEXT NOT NULL,
    pid INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS draws_dataset ON draws (dataset);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: Columns added to ``draws`` after its first form (a ledger written before them is upgraded in place):
#: the accounting of the draw, its ρ (zCDP: the composed ρ; pure ε: None) and its δ (zCDP only).
_ADDED = (("accounting", "TEXT NOT NULL DEFAULT 'pure-ε'"), ("rho", "REAL"), ("delta", "REAL"))


def default_path() -> Path:
    """The ledger file: ``$COCOVIZ_LEDGER``, else ``cocoviz/ledger.sqlite`` in the user's data folder."""
    named = os.environ.get(LEDGER_ENV)
    if named:
        return Path(named).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "cocoviz" / "ledger.sqlite"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _alive(host: str, pid: int) -> bool:
    """Whether the process that began a draw may still be drawing (another host's: assume so)."""
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _measurements(budget: dict) -> str:
    """Every measurement of a budget in one readable line (the CSV's column); pure-ε and zCDP charges alike."""
    parts = []
    for c in Budget.from_dict(budget).charges:
        where = "whole data" if c.level is None else f"level {c.level}"
        if c.noise == "gaussian":
            cost = f"Δ₂={c.sensitivity:g}, ρ={c.rho:g}, discrete Gaussian σ={c.scale:g}"
        else:
            cost = f"Δ={c.sensitivity:g}, ε={c.epsilon:g}, scale={c.scale:g}"
        parts.append(f"{where}: {c.quantity}, {c.nodes} node(s), {c.cells:,} cells, {cost}")
    return "; ".join(parts)


def _plan_texts(plan) -> tuple[str, str]:
    """``json.dumps(plan.to_dict())`` and the same without its ``"shape"`` (the ``plan`` and ``parameters``
    columns), the shape's text written from its node arrays (:meth:`~cocoviz.core.shape.Shape.json_bytes`,
    the same text) rather than from a Python list per node: at national scale that list costs seconds and GB.
    Another record (a tenure margin's) is written by ``json.dumps`` of its ``to_dict()``."""
    if not isinstance(plan, Plan):
        public = plan.to_dict()
        return json.dumps(public, ensure_ascii=False), _parameters(public)
    public = plan.to_dict(shape=0)  # "shape" is the first key: its text is spliced in below
    rest, head = json.dumps(public, ensure_ascii=False), '{"shape": 0'
    if not rest.startswith(head):  # pragma: no cover - Plan.to_dict puts the shape first
        raise AssertionError("a plan's JSON must start with its shape")
    shape = plan.shape.json_bytes().decode("utf-8")
    return '{"shape": ' + shape + rest[len(head) :], _parameters(public)


def _parameters(public: dict) -> str:
    return json.dumps({k: v for k, v in public.items() if k != "shape"}, ensure_ascii=False)


class Ledger:
    """The ledger file at ``path`` (default :func:`default_path`), created on first use.

    Each method opens its own connection, so one :class:`Ledger` may be used from several
    threads, and several processes may share the file.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path).expanduser() if path is not None else default_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot open the privacy ledger {str(self.path)!r}: {exc}") from None
        with self._open() as db:
            db.executescript(_SCHEMA)
            # The upgrade reads the columns and adds the missing ones in one write transaction, so two
            # processes opening an old ledger at once never both add a column.
            db.execute("BEGIN IMMEDIATE")
            have = {row[1] for row in db.execute("PRAGMA table_info(draws)")}
            for name, kind in _ADDED:
                if name not in have:
                    db.execute(f"ALTER TABLE draws ADD COLUMN {name} {kind}")
            db.execute("COMMIT")

    @contextlib.contextmanager
    def _open(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode (every write below opens its own ``BEGIN IMMEDIATE``), closed
        after use; a file SQLite cannot use is an :class:`~cocoviz.errors.InputError` naming it."""
        try:
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open the privacy ledger {str(self.path)!r}: {exc}") from None
        try:
            yield db
        except sqlite3.Error as exc:
            raise InputError(f"the privacy ledger {str(self.path)!r} cannot be used: {exc}") from None
        finally:
            db.close()

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    # ------------------------------------------------------------ writing
    def begin(
        self,
        plan,
        budget=None,
        *,
        label: str = "",
        files: Sequence[str | os.PathLike] = (),
        cap: float | None = None,
        sampler: str = "secure",
        dataset: str | None = None,
    ) -> int:
        """Record a secure draw as ``started`` and return its id; call before any noise is drawn.

        ``budget`` is what the draw spends (default ``plan.cost()``); ``files`` the files it will write;
        ``dataset`` the identity of its persons (:func:`source_identity`; default: the plan's shape,
        :func:`dataset_identity`).  With a ``cap`` (or one kept by :meth:`set_cap`: the smaller holds),
        refuses (:class:`~cocoviz.errors.PrivacyError`, nothing recorded) a draw that would take the
        spending recorded for this identity past the cap (composed by :func:`compose`).
        """
        cap = check_cap(cap)
        budget = plan.cost() if budget is None else budget
        texts = _plan_texts(plan)  # before the identity: a shape's digest is made in the same pass
        dataset = dataset_identity(plan.shape) if dataset is None else str(dataset)
        cost = row_cost(budget)
        row = (
            dataset,
            label,
            cost[1],
            json.dumps(budget.to_dict(), ensure_ascii=False),
            *texts,
            NEIGHBOURS,
            sampler,
            _now(),
            "started",
            json.dumps([os.fspath(f) for f in files]),
            socket.gethostname(),
            os.getpid(),
            cost[0],
            cost[2],
            cost[3],
        )
        with self._open() as db:
            db.execute("BEGIN IMMEDIATE")  # the cap's check and the insert are one step for every writer
            try:
                refuse_past_cap(db, dataset, cost, cap, label)
                entry = db.execute(
                    "INSERT INTO draws (dataset, label, epsilon, budget, plan, parameters, neighbours, sampler, "
                    "started, status, files, host, pid, accounting, rho, delta) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                ).lastrowid
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return int(entry)

    def check(
        self, plan, budget=None, *, label: str = "", cap: float | None = None, dataset: str | None = None
    ) -> None:
        """Refuse now (:class:`~cocoviz.errors.PrivacyError`) a draw that :meth:`begin` would refuse for its cap.

        A preview for a page: :meth:`begin` checks again, in the transaction that records the draw.
        """
        budget = plan.cost() if budget is None else budget
        dataset = dataset_identity(plan.shape) if dataset is None else str(dataset)
        with self._open() as db:
            refuse_past_cap(db, dataset, row_cost(budget), check_cap(cap), label)

    def cap(self) -> float | None:
        """The cap kept in the file for every draw (None: no cap)."""
        with self._open() as db:
            row = db.execute("SELECT value FROM settings WHERE name = 'cap'").fetchone()
        return None if row is None else float(row[0])

    def set_cap(self, cap: float | None) -> None:
        """Keep ``cap`` (ε per dataset identity) for every later draw; None removes it."""
        cap = check_cap(cap)
        with self._open() as db:
            if cap is None:
                db.execute("DELETE FROM settings WHERE name = 'cap'")
            else:
                db.execute("INSERT OR REPLACE INTO settings (name, value) VALUES ('cap', ?)", (repr(cap),))

    def _finish(self, entry: int, status: str, note: str = "", files: Sequence | None = None) -> None:
        with self._open() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                if files is None:
                    db.execute(
                        "UPDATE draws SET status = ?, finished = ?, note = ? WHERE id = ?",
                        (status, _now(), note, entry),
                    )
                else:
                    db.execute(
                        "UPDATE draws SET status = ?, finished = ?, note = ?, files = ? WHERE id = ?",
                        (status, _now(), note, json.dumps([os.fspath(f) for f in files]), entry),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def complete(self, entry: int, files: Sequence[str | os.PathLike] | None = None) -> None:
        """Mark draw ``entry`` complete (``files``: what it wrote, when that differs from :meth:`begin`'s)."""
        self._finish(entry, "complete", files=files)

    def fail(self, entry: int, reason: str | BaseException) -> None:
        """Mark draw ``entry`` incomplete (``reason``: a text or the exception that stopped it): its noise
        may have been drawn, so its ε stays spent."""
        if isinstance(reason, BaseException):
            reason = f"{type(reason).__name__}: {reason}".splitlines()[0][:500]
        self._finish(entry, "incomplete", note=reason)

    @contextlib.contextmanager
    def draw(self, plan, budget=None, **begin) -> Iterator[int]:
        """``with ledger.draw(plan, ...) as entry:`` — begun before the block, complete after it,
        incomplete (with the error) if it raises.  Keywords as :meth:`begin`."""
        entry = self.begin(plan, budget, **begin)
        try:
            yield entry
        except BaseException as exc:
            self.fail(entry, exc)
            raise
        self.complete(entry)

    # ------------------------------------------------------------ reading
    def spent(self, dataset: str | None = None) -> float:
        """ε recorded for ``dataset`` (an identity; None: every draw), every status counted, composed by
        :func:`compose` (with a zCDP draw among them: the (ε, δ) reading of the composed ρ)."""
        return self.totals(dataset)[0]

    def totals(self, dataset: str | None = None) -> tuple[float, float | None, float]:
        """(ε, ρ, δ) recorded for ``dataset`` (None: every draw), composed by :func:`compose`."""
        with self._open() as db:
            return compose(recorded_costs(db, dataset))

    def entries(self, dataset: str | None = None) -> pd.DataFrame:
        """Every recorded draw (of ``dataset`` only, when given), oldest first, as :data:`COLUMNS`.

        A ``started`` draw whose process on this machine is gone reads as ``incomplete``.
        """
        # Not the plan itself: its shape names every node (:meth:`plan` reads it back for one entry).
        query, args = (
            (
                "SELECT id, status, dataset, label, epsilon, accounting, rho, delta, budget, parameters, neighbours, "
                "sampler, started, finished, files, note, host, pid FROM draws"
            ),
            (),
        )
        if dataset is not None:
            query, args = query + " WHERE dataset = ?", (dataset,)
        with self._open() as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(query + " ORDER BY id", args).fetchall()
        records = []
        for r in rows:
            status = r["status"]
            if status == "started" and not _alive(r["host"], r["pid"]):
                status = "incomplete"
            records.append(
                {
                    "id": r["id"],
                    "status": status,
                    "dataset": r["dataset"],
                    "label": r["label"],
                    "epsilon": r["epsilon"],
                    "accounting": r["accounting"],
                    "rho": r["rho"],
                    "delta": r["delta"],
                    "measurements": _measurements(json.loads(r["budget"])),
                    "neighbours": r["neighbours"],
                    "sampler": r["sampler"],
                    "started": r["started"],
                    "finished": r["finished"],
                    "files": "; ".join(json.loads(r["files"])),
                    "note": r["note"],
                    "parameters": r["parameters"],
                }
            )
        return pd.DataFrame(records, columns=list(COLUMNS))

    def plan(self, entry: int) -> Plan:
        """The whole :class:`~cocoviz.plan.Plan` of draw ``entry`` (its shape included), as recorded."""
        with self._open() as db:
            row = db.execute("SELECT plan FROM draws WHERE id = ?", (entry,)).fetchone()
        if row is None:
            raise InputError(f"the privacy ledger {str(self.path)!r} has no entry {entry!r}")
        data = json.loads(row[0])
        if data.get("kind") == "tenure margin":
            raise InputError(f"entry {entry} of the privacy ledger is a tenure margin's draw, not a release's plan")
        return Plan.from_dict(data)

    def to_csv(self, path: str | os.PathLike | None = None, dataset: str | None = None) -> str | None:
        """The ledger as CSV: written to ``path`` (whole or not at all), or returned as text when ``path`` is None."""
        text = self.entries(dataset).to_csv(index=False)
        if path is None:
            return text
        write_text(path, text)
        return None
