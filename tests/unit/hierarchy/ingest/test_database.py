"""SQL sources run one read-only statement: a table is an identifier, a query is one SELECT.

The attack texts are those of a security review: each tried as a table name, as a query, through the
library and the command line, against the real PostgreSQL server scripts/test.sh starts
(COCOVIZ_TEST_POSTGRES); afterwards every table stands.
"""

from __future__ import annotations

import os

import duckdb
import pandas as pd
import pytest

from cocoviz.errors import ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.ingest import sql
from cocoviz.hierarchy.ingest.database import check_one_statement, quote_name, table_name_parts

POSTGRES = os.environ.get("COCOVIZ_TEST_POSTGRES")

ATTACKS = [
    "SELECT * FROM persons) AS t LIMIT 0; DROP TABLE secret; SELECT * FROM (SELECT * FROM persons",
    "persons AS t LIMIT 0; DROP TABLE secret; --",
    "SELECT * FROM persons; CREATE TABLE made (x int)",
    "persons) AS t, (SELECT 1) AS u; DROP TABLE secret; SELECT * FROM (SELECT 1",
    "SELECT * FROM persons /* ; */ ; DROP TABLE secret",
    "SELECT $$;$$ FROM persons; DROP TABLE secret",
    "SELECT * FROM persons WHERE 'a' = 'a'';'; DROP TABLE secret",
]

PERSONS = pd.DataFrame({"hh": [1, 1, 2, 3], "state": ["a", "a", "a", "b"]})


def test_a_table_is_an_identifier_quoted():
    assert table_name_parts("persons") == ("persons",)
    assert table_name_parts(" Census . Persons ") == ("census", "persons")
    assert table_name_parts('"My ""odd"" table"') == ('My "odd" table',)
    assert quote_name(("census", 'a"b')) == '"census"."a""b"'
    assert sql("postgresql://h/db", "census.persons").relation == '"census"."persons"'
    for bad in ["SELECT * FROM persons", "persons;", "persons--", "a.b.c.d", "", "1abc", '"unclosed', "a..b"]:
        with pytest.raises(ParameterError):
            sql("postgresql://h/db", bad)


@pytest.mark.parametrize("attack", ATTACKS)
def test_every_attack_is_refused_before_a_connection(attack):
    """As a table name and as a query; the message names the problem."""
    with pytest.raises(ParameterError, match="not a table name"):
        sql("postgresql://nowhere/db", attack)
    with pytest.raises(ParameterError, match=r"more than one statement|closes a parenthesis|not closed"):
        sql("postgresql://nowhere/db", query=attack)


def test_one_statement_lexer():
    assert check_one_statement("SELECT 1;") == "SELECT 1"
    assert check_one_statement("SELECT 1; -- done\n") == "SELECT 1"
    assert check_one_statement("SELECT E'\\';' AS x") == "SELECT E'\\';' AS x"
    assert check_one_statement('SELECT ";" FROM "a""b"') == 'SELECT ";" FROM "a""b"'
    assert check_one_statement("WITH q AS (SELECT 1) SELECT * FROM q")
    for bad, why in [
        ("SELECT 1; SELECT 2", "more than one"),
        ("SELECT (1", "not closed"),
        ("SELECT 'a", "not closed"),
        ("SELECT /* x", "not closed"),
        ("DELETE FROM persons", "one SELECT"),
        ("  ;", "one SELECT"),
    ]:
        with pytest.raises(ParameterError, match=why):
            check_one_statement(bad)


def test_both_or_neither_refused():
    with pytest.raises(ParameterError, match="one of them"):
        sql("postgresql://h/db")
    with pytest.raises(ParameterError, match="one of them"):
        sql("postgresql://h/db", "persons", query="SELECT 1")


def test_duckdb_table_and_query():
    con = duckdb.connect()
    con.register("rows", PERSONS)
    con.execute('CREATE TABLE "Persons" AS SELECT * FROM rows')
    con.execute("CREATE TABLE secret AS SELECT 1 AS x")
    a = Hierarchy.from_persons(sql(con, '"Persons"'), group="hh", levels=["state"])
    b = Hierarchy.from_persons(sql(con, query='SELECT * FROM "Persons" WHERE hh < 10'), group="hh", levels=["state"])
    assert a.groups(()) == b.groups(()) == 3
    for attack in ATTACKS:
        with pytest.raises(ParameterError):
            Hierarchy.from_persons(sql(con, query=attack.replace("persons", '"Persons"')), group="hh", levels=[])
    assert con.execute("SELECT x FROM secret").fetchall() == [(1,)]


def _postgres_tables() -> None:
    import psycopg

    with psycopg.connect(POSTGRES, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS persons, secret, made")
        con.execute("CREATE TABLE persons (hh bigint, state text)")
        con.execute("INSERT INTO persons VALUES (1, 'a'), (1, 'a'), (2, 'a'), (3, 'b')")
        con.execute("CREATE TABLE secret (x int)")
        con.execute("INSERT INTO secret VALUES (42)")


def _tables_stand() -> None:
    import psycopg

    with psycopg.connect(POSTGRES, autocommit=True) as con:
        assert con.execute("SELECT x FROM secret").fetchall() == [(42,)]
        assert con.execute("SELECT to_regclass('made')").fetchone() == (None,)
        assert con.execute("SELECT COUNT(*) FROM persons").fetchone() == (4,)


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.postgres
@pytest.mark.skipif(POSTGRES is None, reason="no PostgreSQL: COCOVIZ_TEST_POSTGRES is set by scripts/test.sh")
def test_postgres_attacks_leave_every_table(attack):
    _postgres_tables()
    for make in (lambda: sql(POSTGRES, attack), lambda: sql(POSTGRES, query=attack)):
        with pytest.raises(ParameterError):
            Hierarchy.from_persons(make(), group="hh", levels=["state"])
    _tables_stand()


@pytest.mark.postgres
@pytest.mark.skipif(POSTGRES is None, reason="no PostgreSQL: COCOVIZ_TEST_POSTGRES is set by scripts/test.sh")
def test_postgres_identifier_quoting_is_the_drivers_and_reads_run_read_only():
    import psycopg
    from psycopg import sql as pgsql

    from cocoviz.hierarchy.ingest.database import Database

    _postgres_tables()
    with psycopg.connect(POSTGRES) as con:
        for parts in [("persons",), ("public", "persons"), ('a"b c',)]:
            assert quote_name(parts) == pgsql.Identifier(*parts).as_string(con)
    tree = Hierarchy.from_persons(sql(POSTGRES, "public.persons"), group="hh", levels=["state"])
    assert tree.groups(()) == 3
    tree = Hierarchy.from_persons(sql(POSTGRES, query="SELECT * FROM persons WHERE state = 'a'"), group="hh", levels=[])
    assert tree.groups(()) == 2
    db = Database(sql(POSTGRES, "persons"))
    try:
        db.read_only()
        with pytest.raises(ValueError, match="read-only transaction"):
            db.query("DROP TABLE secret")
    finally:
        db.close()
    _tables_stand()


@pytest.mark.postgres
@pytest.mark.skipif(POSTGRES is None, reason="no PostgreSQL: COCOVIZ_TEST_POSTGRES is set by scripts/test.sh")
def test_postgres_cli_table_and_query_attacks(tmp_path, capsys):
    from cocoviz.cli.main import main

    _postgres_tables()
    groups = tmp_path / "groups.csv"
    pd.DataFrame({"hh": [1, 2, 3], "state": ["a", "a", "b"]}).to_csv(groups, index=False)
    for attack in ATTACKS:
        for option in ("--table", "--query"):
            code = main(
                [
                    "release",
                    POSTGRES,
                    option,
                    attack,
                    "--group",
                    "hh",
                    "--levels",
                    "state",
                    "--groups",
                    str(groups),
                    "--epsilons",
                    "1,1",
                    "--out",
                    str(tmp_path / "out"),
                    "--ledger",
                    str(tmp_path / "ledger.db"),
                ]
            )
            assert code != 0
            err = capsys.readouterr().err
            assert "not a table name" in err or "statement" in err or "parenthesis" in err or "not closed" in err
            assert "Traceback" not in err
    _tables_stand()
    assert not (tmp_path / "out").exists()
