"""Accepted uploads kept on the server, so that a reload of the page (a new session) finds its data again.

Each accepted upload is stored once, keyed by the hash of its content (bytes,
groups table and options); the session that accepted it gets a random token,
and the page's address carries ``upload=<hash>-<token>``.  Only that pair
gives the upload back: another session that does not hold the address (and so
never saw the file) cannot reach it, and two sessions uploading the same file
hold different tokens.  The store is bounded (:data:`MAX_UPLOADS`,
:data:`MAX_BYTES`): the least recently used upload goes first, and a reload
after that asks for the file again.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import OrderedDict

import streamlit as st

MAX_UPLOADS = 8
MAX_BYTES = 512 * 2**20
_TOKEN = "kept.token"


@st.cache_resource
def _store() -> dict:
    return {"lock": threading.Lock(), "items": OrderedDict()}


def content_hash(upload) -> str:
    """The hash of an upload's bytes, groups table and options."""
    h = hashlib.sha256(upload.raw)
    h.update(b"\0" + (upload.groups or b"") + b"\0" + repr(upload.options).encode())
    return h.hexdigest()[:32]


def _size(upload) -> int:
    return len(upload.raw) + len(upload.groups or b"")


def keep(upload) -> str:
    """Store ``upload`` (once per content) for this session; the address's value that gives it back."""
    digest = content_hash(upload)
    mine = st.session_state.get(_TOKEN)
    if mine is None or mine[0] != digest:
        mine = (digest, secrets.token_urlsafe(12))
        st.session_state[_TOKEN] = mine
    store = _store()
    with store["lock"]:
        items = store["items"]
        upload_now, tokens = items.pop(digest, (upload, set()))
        tokens.add(mine[1])
        items[digest] = (upload_now, tokens)
        while len(items) > MAX_UPLOADS or (sum(_size(u) for u, _ in items.values()) > MAX_BYTES and len(items) > 1):
            items.popitem(last=False)
    return f"{digest}-{mine[1]}"


def restore(value: str):
    """The upload kept under ``value`` (``<hash>-<token>``), or None (unknown, evicted, or another's token)."""
    digest, _, token = value.partition("-")
    store = _store()
    with store["lock"]:
        found = store["items"].get(digest)
        if found is None or token not in found[1]:
            return None
        store["items"].move_to_end(digest)
    st.session_state[_TOKEN] = (digest, token)
    return found[0]
