"""Cost checks made before allocating: a request whose arrays would not fit is refused with the memory it
would need and the choices that avoid it, instead of failing with a ``MemoryError`` (or being killed) halfway.

The limit is on one allocation's worth of cells (one node's noisy answer and fit, one prior, one sampler
buffer), not on the machine: it is public and fixed, so the same plan is accepted or refused everywhere.

>>> needed_bytes(10**10)
80000000000
>>> format_bytes(needed_bytes(10**10))
'74.5 GiB'
>>> check_cells(10**10, "node ('CA',)", "choose Hc")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cocoviz.errors.ParameterError: node ('CA',) would need 10,000,000,000 cells (74.5 GiB, over the limit of 4 GiB ...
"""

from __future__ import annotations

from cocoviz.errors import ParameterError

__all__ = [
    "BYTES_PER_CELL",
    "MAX_CELL_BYTES",
    "DENSE_AVOID",
    "needed_bytes",
    "format_bytes",
    "check_cells",
    "check_plan",
]

#: One float64 or int64 cell.  The work arrays of a node are a few of these per cell; the check is on the
#: first one, so that the refusal names the size of one array the request would make.
BYTES_PER_CELL = 8
#: Largest single array a request may ask for (4 GiB: 537 million cells, four times the groups of the
#: United States' largest level).
MAX_CELL_BYTES = 4 * 2**30


#: What to use instead of a dense histogram H[0..largest size] that would not fit.
DENSE_AVOID = "read its (size, count) runs instead (node_runs, or runs(level).node(k))"


def needed_bytes(cells: int) -> int:
    """Bytes of one array of ``cells`` cells."""
    return int(cells) * BYTES_PER_CELL


def format_bytes(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it at least 1 (``'74.5 GiB'``)."""
    if int(n) >= 2**100:  # beyond float's comfort and any machine
        return f"about 2^{int(n).bit_length() - 1} bytes"
    value, unit = float(n), "bytes"
    for name in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024:
            break
        value, unit = value / 1024, name
    return f"{int(n):,} bytes" if unit == "bytes" else f"{value:,.1f}".rstrip("0").rstrip(".") + f" {unit}"


def check_cells(cells: int, what: str, avoid: str) -> None:
    """Refuse ``what`` when one array of ``cells`` cells would exceed :data:`MAX_CELL_BYTES`.

    ``avoid`` says which choices keep it small (e.g. "choose Hc with a public K").
    """
    if needed_bytes(cells) > MAX_CELL_BYTES:
        raise ParameterError(
            f"{what} would need {int(cells):,} cells ({format_bytes(needed_bytes(cells))}, over the limit of "
            f"{format_bytes(MAX_CELL_BYTES)} per node): {avoid}"
        )


def check_plan(plan, *, streamed: bool) -> None:
    """Refuse a plan one of whose nodes would need an array over :data:`MAX_CELL_BYTES`, before any noise.

    Hc, naive and Hcp measure K cells (or a grid) per node, Hg one cell per group.  ``streamed``: the caller
    (:func:`cocoviz.estimate`) streams an Hg node with p = 2 in chunks, so only Hg with p = 1 holds a whole
    node; :func:`cocoviz.measure` keeps every noisy answer, so every node counts.
    """
    for level, name in enumerate(plan.methods):
        if name != "Hg" or (streamed and plan.ps[level] == 2):
            continue  # the other methods' cells are bounded by K <= MAX_K (80 MB)
        groups = plan.shape.group_counts(level)
        if not len(groups):
            continue
        k = int(groups.argmax())
        avoid = "choose Hc with a public K (K cells per node, whatever G)" + (
            ", or Hg with p = 2 (streamed in chunks)" if streamed else ", or estimate() with Hg and p = 2 (streamed)"
        )
        node = plan.shape.paths[level][k]
        what = f"level {level} (Hg, p = {plan.ps[level]}): node {node} with {int(groups[k]):,} groups"
        check_cells(int(groups[k]), what, avoid)
