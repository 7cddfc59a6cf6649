"""``accuracy.parquet``: every node's band of a release, written beside it (publishable, spends no ε).

The table is :func:`cocoviz.accuracy.intervals.scope.accuracy_frame` (one row per node and stretch of sizes);
its Parquet metadata, under ``cocoviz_accuracy``, holds the statement's ``confidence``, its ``scope`` (``"node"``:
each node's bounds together; ``"level"``: all nodes of a level at once), each level's per-node confidence, the
levels left out with the reason, and the note in words.  Written whole or not at all
(:func:`~cocoviz.core.atomic.atomic_path`).
"""

from __future__ import annotations

import json
import os

import pandas as pd

from cocoviz.accuracy.intervals.scope import accuracy_frame
from cocoviz.core.atomic import atomic_path

__all__ = ["ACCURACY_META_KEY", "save_accuracy", "load_accuracy"]

#: The Parquet metadata key of an accuracy file.
ACCURACY_META_KEY = b"cocoviz_accuracy"


def save_accuracy(
    release, path: str | os.PathLike, *, confidence: float = 0.9, scope: str = "node", measurements=None
) -> pd.DataFrame:
    """Write ``release``'s :func:`~cocoviz.accuracy.intervals.scope.accuracy_frame` to ``path`` and return it
    (with ``measurements``, its Hg levels' bands use the runs of equal sizes).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> from cocoviz.hierarchy import Hierarchy
    >>> from cocoviz.pipeline.estimate import estimate
    >>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
    ...                              size="size", levels=["region"])
    >>> release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=8, seed=0)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "accuracy.parquet"
    >>> frame = save_accuracy(release, path, scope="level")
    >>> load_accuracy(path).equals(frame), load_accuracy(path).attrs["scope"]
    (True, 'level')
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = accuracy_frame(release, confidence=confidence, scope=scope, measurements=measurements)
    meta = {
        "confidence": frame.attrs["confidence"],
        "scope": frame.attrs["scope"],
        "node_confidence": {str(k): v for k, v in frame.attrs["node_confidence"].items()},
        "skipped": {str(k): v for k, v in frame.attrs["skipped"].items()},
        "band": {str(k): v for k, v in frame.attrs["band"].items()},
        "note": frame.attrs["note"],
        "hg_levels": frame.attrs["hg_levels"],
    }
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), ACCURACY_META_KEY: json.dumps(meta)})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return frame


def load_accuracy(path: str | os.PathLike) -> pd.DataFrame:
    """An accuracy file as its frame, its metadata in ``attrs`` (levels as ints)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    frame = table.to_pandas()
    meta = json.loads((table.schema.metadata or {}).get(ACCURACY_META_KEY, b"{}"))
    meta["node_confidence"] = {int(k): v for k, v in meta.get("node_confidence", {}).items()}
    meta["skipped"] = {int(k): v for k, v in meta.get("skipped", {}).items()}
    meta["band"] = {int(k): v for k, v in meta.get("band", {}).items()}
    frame.attrs.update(meta)
    return frame
