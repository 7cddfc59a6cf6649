"""A level's bands as rows of one frame, computed for many nodes at once (:func:`level_rows`).

Each node contributes its cumulative bounds ``low ≤ Hc ≤ high`` (from its own band) and its released runs;
everything :func:`~cocoviz.accuracy.intervals.derived.band_frame` derives from them — the count bounds, the
persons bounds, the released cumulative and persons — and the *stretches* of
:func:`~cocoviz.accuracy.intervals.scope.accuracy_frame` (a row wherever the cumulative bounds or the released
cumulative change) are computed here on the nodes' arrays laid end to end, segment by segment:

* shifts within a segment read the previous cell, or 0 at a segment's start (``count_low``, ``count_high``);
* prefix sums are global cumulative sums less their value at the segment's start;
* ``searchsorted`` within a segment runs on the keys ``segment·B + value`` with ``B`` above every value, so a
  segment's keys are sorted and above the previous segment's (each node's ``high`` is non-decreasing);
* a running max (min) within a segment runs on ``value + segment·R`` with ``R`` the values' range plus one, so
  no segment's values reach the previous one's (from the right for the min).

The result equals the node-by-node frames cell for cell (``tests/unit/accuracy/test_level_frame.py``).  Nodes
are taken in chunks of at most :data:`CHUNK_CELLS` cells, so the memory is that of one chunk, not of the level.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

__all__ = ["CHUNK_CELLS", "level_rows", "segment_rows"]

#: The most cells (sizes, summed over nodes) one chunk lays end to end.
CHUNK_CELLS = 1 << 22

_LIMIT = 2**62


def _running(values: np.ndarray, node: np.ndarray, ptr: np.ndarray, *, maximum: bool) -> np.ndarray:
    """Running max (from the left) or min (from the right) of ``values`` within each segment."""
    if values.size == 0:
        return values
    spread = int(values.max()) - int(values.min()) + 1
    segments = len(ptr) - 1
    if spread * segments + abs(int(values.max())) + abs(int(values.min())) < _LIMIT:
        if maximum:
            offset = node * spread
            return np.maximum.accumulate(values + offset) - offset
        offset = node[::-1] * spread
        return (np.minimum.accumulate(values[::-1] + offset) - offset)[::-1]
    out = np.empty_like(values)  # the offsets would overflow: segment by segment
    for a, b in zip(ptr[:-1], ptr[1:]):
        part = values[a:b]
        out[a:b] = np.maximum.accumulate(part) if maximum else np.minimum.accumulate(part[::-1])[::-1]
    return out


def _prefix(values: np.ndarray) -> np.ndarray:
    """``P[ptr_k + t] - P[ptr_k]`` is the sum of segment k's first t values (P the global prefix sums)."""
    return np.concatenate([[0], np.cumsum(values, dtype=np.int64)])


def _local_search(high: np.ndarray, low: np.ndarray, node: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Per cell of segment k: ``searchsorted(high[segment k], low[cell], "left")`` (each segment's high sorted)."""
    base = max(int(high.max()), int(low.max())) + 1 if high.size else 1
    if base * (len(ptr) - 1) < _LIMIT and int(min(high.min(), low.min())) >= 0:
        return np.searchsorted(node * base + high, node * base + low, side="left") - ptr[node]
    out = np.empty(low.size, np.int64)
    for a, b in zip(ptr[:-1], ptr[1:]):
        out[a:b] = np.searchsorted(high[a:b], low[a:b], side="left")
    return out


def segment_rows(lows, highs, sizes, counts) -> dict[str, np.ndarray]:
    """The stretch rows of nodes whose cumulative bounds are ``lows[i]``/``highs[i]`` and released runs
    ``sizes[i]``/``counts[i]``: the columns of :data:`~cocoviz.accuracy.intervals.scope.ACCURACY_COLUMNS` but
    ``level`` and ``node``, plus ``segment`` (the node's position in the lists).

    Examples
    --------
    >>> rows = segment_rows([np.array([0, 1])], [np.array([2, 3])], [np.array([0, 1])], [np.array([1, 2])])
    >>> {c: rows[c].tolist() for c in ("size", "size_to", "count_low", "count_high", "persons_high")}
    {'size': [0, 1], 'size_to': [0, 1], 'count_low': [0, 0], 'count_high': [2, 3], 'persons_high': [0, 3]}
    """
    m = len(lows)
    lengths = np.array([len(v) for v in lows], np.int64)
    last = np.array([int(s[-1]) + 1 if len(s) else 1 for s in sizes], np.int64)
    n = np.maximum(lengths, last)
    ptr = np.concatenate([[0], np.cumsum(n)])
    node = np.repeat(np.arange(m, dtype=np.int64), n)
    j = np.arange(ptr[-1], dtype=np.int64) - ptr[node]
    # the bounds padded with their last value (G) up to the released histogram's length
    starts = np.concatenate([[0], np.cumsum(lengths)])
    source = starts[node] + np.minimum(j, lengths[node] - 1)
    low = np.concatenate(lows).astype(np.int64, copy=False)[source] if m else np.zeros(0, np.int64)
    high = np.concatenate(highs).astype(np.int64, copy=False)[source] if m else np.zeros(0, np.int64)
    count = np.zeros(ptr[-1], np.int64)
    if m:
        at = np.concatenate([np.asarray(s, np.int64) + ptr[i] for i, s in enumerate(sizes)])
        count[at] = np.concatenate([np.asarray(c, np.int64) for c in counts])
    first = j == 0
    cum_count = _prefix(count)
    released = cum_count[1:] - cum_count[ptr[node]]
    previous_high = np.where(first, 0, np.roll(high, 1))
    previous_low = np.where(first, 0, np.roll(low, 1))
    count_low = np.maximum(low - previous_high, 0)
    count_high = high - previous_low
    # persons: P(j) = Σ_{s<j} (Hc[j] − Hc[s]) (derived.persons_bounds, segment by segment)
    prefix_low, prefix_high = _prefix(low), _prefix(high)
    t = np.minimum(_local_search(high, low, node, ptr), j)
    seg = ptr[node]
    persons_low = _running(t * low - (prefix_high[seg + t] - prefix_high[seg]), node, ptr, maximum=True)
    persons_high = _running(j * high - (prefix_low[seg + j] - prefix_low[seg]), node, ptr, maximum=False)
    cum_persons = _prefix(j * count)
    persons = cum_persons[1:] - cum_persons[seg]
    # the stretches: a row where the node starts or its cumulative bounds or released cumulative change
    keep = first.copy()
    keep[1:] |= (low[1:] != low[:-1]) | (high[1:] != high[:-1]) | (released[1:] != released[:-1])
    kept = np.flatnonzero(keep)
    following = np.append(kept[1:], ptr[-1])  # the next row's cell (every segment's first cell is a row)
    own = ptr[node[kept]]
    size_to = np.where(following < ptr[node[kept] + 1], following - own - 1, n[node[kept]] - 1).astype(np.int64)
    return {
        "segment": node[kept],
        "size": j[kept],
        "size_to": size_to,
        "cumulative_low": low[kept],
        "cumulative_high": high[kept],
        "cumulative": released[kept],
        "count_low": count_low[kept],
        "count_high": count_high[kept],
        "count": count[kept],
        "persons_low": persons_low[kept],
        "persons_high": persons_high[kept],
        "persons": persons[kept],
    }


def level_rows(nodes: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]) -> Iterator[dict]:
    """:func:`segment_rows` over ``(low, high, sizes, counts)`` per node, in chunks of at most
    :data:`CHUNK_CELLS` cells; each chunk's ``segment`` is the node's index in ``nodes``."""
    chunk: list[tuple] = []
    cells, first = 0, 0
    for item in nodes:
        chunk.append(item)
        cells += max(len(item[0]), int(item[2][-1]) + 1 if len(item[2]) else 1)
        if cells >= CHUNK_CELLS:
            rows = segment_rows(*zip(*chunk))
            rows["segment"] = rows["segment"] + first
            yield rows
            first += len(chunk)
            chunk, cells = [], 0
    if chunk:
        rows = segment_rows(*zip(*chunk))
        rows["segment"] = rows["segment"] + first
        yield rows
