"""Which dataset a secure draw spends from: the identity the privacy ledger's cap is kept under.

:func:`source_identity` names the **persons** a hierarchy was built from, so every hierarchy of the
same persons (any levels, any groups table) counts against one cap:

* files (a path, a glob or a folder): the resolved absolute paths of the files read, sorted.  Not
  their sizes or times: a file rewritten in place holds the same persons for the cap;
* a database (:func:`cocoviz.hierarchy.ingest.sql`): the URL without its password (a borrowed
  connection: its driver's name) and the quoted table or the query text;
* a frame (pandas, Polars, Arrow): a digest of its column names, types and values;
* persons known by name only (a bundled dataset's generator and seed): :func:`named_identity` of those names.

It cannot see a copy of the data under another name: another path, table, database or a frame
whose values differ in any cell is another dataset.  :func:`dataset_identity` (a hash of a
hierarchy's public shape) is the identity of a draw whose persons source is unknown.

>>> source_identity("/data/persons.parquet") == source_identity("/data/../data/persons.parquet")
True
>>> import pandas as pd
>>> a = source_identity(pd.DataFrame({"hh": [1, 2]}))
>>> a == source_identity(pd.DataFrame({"hh": [1, 2]})), a == source_identity(pd.DataFrame({"hh": [1, 3]}))
(True, False)
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from cocoviz.errors import ParameterError

__all__ = ["dataset_identity", "named_identity", "source_identity"]


def dataset_identity(shape) -> str:
    """A hash of a hierarchy's public description: its levels, nodes, parents and G (never a private row).

    The ledger's identity for a draw whose persons source is not known (see :func:`source_identity`).

    >>> from cocoviz.plan import Shape
    >>> dataset_identity(Shape((), (((),),), ((),), ((4,),), public_groups=True))[:12]
    '844835dc42f3'
    """
    return shape.digest()


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def named_identity(kind: str, *names: str) -> str:
    """The ledger identity of persons known by name only: ``kind`` and ``names`` (text), digested.

    For persons no file, database or frame names: a bundled dataset's synthetic population is its
    generator's name and seed (:func:`cocoviz.datasets.persons_identity`).  Different from every
    :func:`source_identity`, which digest another kind first.

    >>> named_identity("population", "housing", "0") == named_identity("population", "housing", "0")
    True
    >>> named_identity("population", "housing", "0") == named_identity("population", "housing", "1")
    False
    """
    return _digest("named", str(kind), *map(str, names))


def _files(path: str | os.PathLike) -> list[str]:
    text = os.fspath(path)
    full = os.path.abspath(os.path.expanduser(text))
    if os.path.isdir(full):
        found = [str(p) for p in Path(full).rglob("*") if p.is_file()]
    else:
        found = glob.glob(full, recursive=True) if glob.has_magic(full) else [full]
    return sorted(os.path.realpath(f) for f in found) or [full]


def source_identity(source: Any) -> str:
    """The ledger identity of a persons source (a path or glob, ``sql(...)``, or a frame); see the module.

    Parameters
    ----------
    source : str, os.PathLike, SqlSource, pandas / Polars / Arrow frame

    Returns
    -------
    str
        A hex SHA-256 digest.

    Raises
    ------
    ParameterError
        A source of another kind.
    """
    from cocoviz.hierarchy.ingest.database import SqlSource

    if isinstance(source, SqlSource):
        where = source.connection if isinstance(source.connection, str) else type(source.connection).__module__
        where = re.sub(r"://([^:@/]*):[^@]*@", r"://\1@", str(where))
        return _digest("sql", where, source.relation)
    if isinstance(source, (str, os.PathLike)):
        return _digest("files", *_files(source))
    module = type(source).__module__.split(".")[0]
    if module == "polars":
        source = source.to_pandas()
    elif module == "pyarrow":
        source = source.to_pandas()
    if isinstance(source, pd.DataFrame):
        names = [str(c) for c in source.columns]
        types = [str(t) for t in source.dtypes]
        values = pd.util.hash_pandas_object(source, index=False).to_numpy().tobytes()
        return _digest("frame", "\x1f".join(names), "\x1f".join(types), values)
    raise ParameterError(f"the persons source must be a path, sql(...) or a frame, got {type(source).__name__}")
