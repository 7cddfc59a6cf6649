"""Dataset access for the dashboard: bundled datasets and uploads, cached.

A :class:`cocoviz.Hierarchy` is not hashable, so bundled data is cached by
(name, scale, seed) and uploads by a hash of their bytes and options, with
``st.cache_resource`` (one shared object, never copied).

Each dataset also carries the privacy ledger's identity of its **persons** (:attr:`DataInfo.identity`), the
identity the command line gives its persons source (:mod:`cocoviz.measure.identity`): a bundled dataset's
synthetic population (:func:`cocoviz.datasets.persons_identity`), an upload's table content (the persons file,
not its groups table, levels or column roles), a database's URL and relation.  Every hierarchy built from the
same persons — any levels kept, any groups table — so counts against one budget cap.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from cocoviz import CocovizError, datasets
from cocoviz.hierarchy import Hierarchy

UPLOAD = "upload your own…"


@dataclass(frozen=True)
class DataInfo:
    """What the pages need to know about the loaded data, besides the tree itself."""

    key: tuple  # cache key: identifies the data for every later cache
    label: str  # shown to the user
    own_data: bool  # true counts may be shown: uploads (the user's own) and synthetic bundles
    public_max_size: int | None  # a public bound K, when the data card states one
    card: dict = field(default_factory=dict)
    identity: str | None = None  # the ledger identity of the persons (module docstring); None: the plan's shape


def dataset_names() -> list[str]:
    return list(datasets.dataset_names())


def default_dataset() -> str:
    return datasets.DEFAULT_DATASET


def toy_persons() -> pd.DataFrame:
    """The slides' Persons table (Kuo et al.): 8 persons in 4 groups, regions a and b."""
    return datasets.toy_persons()


def toy_groups() -> pd.DataFrame:
    """The toy's public groups table: group -> region."""
    return datasets.toy_groups()


@st.cache_resource(show_spinner="Loading the dataset…", max_entries=8)
def load_bundled(name: str, scale: float | None = None, seed: int = 0) -> Hierarchy:
    return datasets.load_dataset(name, scale=scale, seed=seed)


@st.cache_data(show_spinner=False)
def data_card(name: str) -> dict:
    """The data card of a bundled dataset."""
    return dict(datasets.dataset_card(name))


@st.cache_data(show_spinner=False)
def card_markdown(name: str) -> str:
    """The data card as Markdown."""
    return datasets.card_markdown(name)


def public_bound(card: dict) -> int | None:
    """The public bound on group size stated by a data card, if any."""
    bound = card.get("public_max_size")
    if isinstance(bound, (int, float)) and bound >= 1 and math.isfinite(bound):
        return int(bound)
    return None


def suggested_k(info: DataInfo, tree: Hierarchy) -> tuple[int, bool]:
    """The K to propose, and whether it was read from the private data.

    The data card's public bound when there is one; else the largest group
    rounded up to 1-2-5, which reads the private data: a convenience for
    exploration that a secure release refuses.
    """
    if info.public_max_size is not None:
        return info.public_max_size, False
    m = max(tree.max_size, 1)
    exp = 10 ** int(math.floor(math.log10(m)))
    return next(int(mult * exp) for mult in (1, 2, 5, 10) if mult * exp >= m), True


@st.cache_resource(show_spinner="Reading the upload…", max_entries=4)
def _load_upload(
    digest: str,
    _data: bytes,
    filename: str,
    options: tuple,
    groups_digest: str | None,
    _groups: bytes | None,
    groups_name: str | None,
) -> Hierarchy:
    from cocoviz.hierarchy.ingest import load_upload as read

    kwargs = dict(options)
    groups = None
    if _groups is not None:
        # A named file object, so that messages name the groups file.
        groups = io.BytesIO(_groups)
        groups.name = groups_name or "the groups table"
    return read(_data, filename=filename, form=kwargs.pop("kind", None), groups=groups, **kwargs)


def load_upload(
    data: bytes, filename: str, groups: bytes | None = None, groups_name: str | None = None, **options
) -> Hierarchy:
    """Hierarchy from uploaded bytes through :func:`cocoviz.hierarchy.ingest.load_upload` (an InputError naming every
    problem
    of a bad table).  ``groups``: the public groups table's bytes (persons form), ``groups_name`` its file name.
    ``options``: kind (the table's form), levels, size, count, group."""
    digest = hashlib.sha256(data).hexdigest()
    groups_digest = hashlib.sha256(groups).hexdigest() if groups is not None else None
    return _load_upload(
        digest,
        data,
        filename,
        tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items())),
        groups_digest,
        groups,
        groups_name,
    )


@st.cache_resource(show_spinner="Reading the upload…", max_entries=2)
def _upload_table(digest: str, _data: bytes, filename: str) -> pd.DataFrame | None:
    from cocoviz.hierarchy.ingest import read_table

    try:
        return read_table(_data, filename=filename)
    except CocovizError:
        return None


def upload_columns(data: bytes, filename: str) -> list[str] | None:
    """The column names of an uploaded table (None when it cannot be read: the loader then says why)."""
    table = _upload_table(hashlib.sha256(data).hexdigest(), data, filename)
    return None if table is None else [str(c) for c in table.columns]


def proposed_levels(data: bytes, filename: str, kind: str, roles: tuple) -> list[str]:
    """The level columns proposed from an uploaded table (:func:`cocoviz.hierarchy.preview.propose_levels`;
    none when it cannot be read).  ``roles``: sorted (role, column) pairs."""
    from cocoviz.hierarchy.preview import propose_levels

    table = _upload_table(hashlib.sha256(data).hexdigest(), data, filename)
    return [] if table is None else propose_levels(table, kind, **dict(roles))


def bundled_identity(name: str) -> str:
    """The ledger identity of bundled dataset ``name``'s persons: its population and seed, whatever its levels."""
    return datasets.persons_identity(name)


@st.cache_data(show_spinner=False, max_entries=8)
def _upload_identity(digest: str, _data: bytes, filename: str) -> str:
    from cocoviz.measure.identity import named_identity, source_identity

    table = _upload_table(digest, _data, filename)
    # A table the reader refuses is never released; its bytes still name it.
    return named_identity("upload", digest) if table is None else source_identity(table)


def upload_identity(data: bytes, filename: str) -> str:
    """The ledger identity of an uploaded persons (or groups, or counts) table: a digest of its content as a
    frame (:func:`cocoviz.measure.identity.source_identity`), so the same table uploaded again, with other levels,
    roles or groups table, is the same persons."""
    return _upload_identity(hashlib.sha256(data).hexdigest(), data, filename)


def database_identity(source) -> str:
    """The ledger identity of a database source (:func:`cocoviz.hierarchy.ingest.sql`): its URL without the
    password, and its table or query — the command line's identity of the same source."""
    from cocoviz.measure.identity import source_identity

    return source_identity(source)


def upload_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def restrict(data_key: tuple, tree: Hierarchy, levels: list[str]) -> Hierarchy:
    """The tree (identified by ``data_key``) with only ``levels`` kept (itself when all are kept)."""
    if list(levels) == list(tree.levels):
        return tree
    return _restricted(data_key, tuple(levels), tree)


@st.cache_resource(show_spinner=False, max_entries=16)
def _restricted(data_key: tuple, levels: tuple, _tree: Hierarchy) -> Hierarchy:
    return _tree.keep_levels(list(levels))


@st.cache_resource(show_spinner="Drawing the previous-census stand-in…", max_entries=4)
def previous_census(name: str, max_size: int, _paths: tuple) -> object:
    """The previous-census stand-in of bundled dataset ``name`` as a public Hcp prior (a cocoviz Prior)."""
    from cocoviz.datasets.previous import previous_census_prior
    from cocoviz.methods.hcp_prior import Prior

    return Prior.of(previous_census_prior(name), max_size, _paths)


def id_like_columns(data: bytes, filename: str, roles: tuple) -> list[str]:
    """The columns of an uploaded table with one row per value, other than its roles' (never proposed as a
    level: :func:`cocoviz.hierarchy.preview.id_like_columns`).  ``roles``: sorted (role, column) pairs."""
    from cocoviz.hierarchy.preview import id_like_columns as find

    table = _upload_table(hashlib.sha256(data).hexdigest(), data, filename)
    taken = {column for _, column in roles}
    return [] if table is None else find(table, [str(c) for c in table.columns if str(c) not in taken])


def guessed_group_column(data: bytes, filename: str) -> str | None:
    """The column of an uploaded persons table most likely to hold the group id (:func:`cocoviz.hierarchy.preview.
    guess_group_column`), or None."""
    from cocoviz.hierarchy.preview import guess_group_column

    table = _upload_table(hashlib.sha256(data).hexdigest(), data, filename)
    return None if table is None else guess_group_column(table)


def release_to_bytes(release) -> bytes:
    """A release as the bytes of its saved file (:meth:`cocoviz.Release.save`), for a download button."""
    buf = io.BytesIO()
    release.save(buf)
    return buf.getvalue()


def release_from_bytes(raw: bytes, filename: str):
    """A release saved by :meth:`cocoviz.Release.save`, from an upload's bytes; an InputError naming the file
    when it is not one."""
    import os
    import tempfile

    from cocoviz.errors import InputError
    from cocoviz.release.release import load_release

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "release.parquet")
        with open(path, "wb") as f:
            f.write(raw)
        try:
            return load_release(path)
        except InputError as exc:
            raise InputError(str(exc).replace(repr(path), repr(filename))) from None
