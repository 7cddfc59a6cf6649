"""Plain words from a node's publishable intervals (:meth:`cocoviz.Release.intervals`): the release alone.

>>> import pandas as pd
>>> frame = pd.DataFrame({"size": [0, 1, 2], "cumulative_low": [0, 1, 3], "cumulative_high": [1, 3, 3],
...                       "count_low": [0, 0, 0], "count_high": [1, 3, 2], "count": [0, 2, 1],
...                       "persons_low": [0, 1, 3], "persons_high": [0, 3, 5]})
>>> frame.attrs.update(confidence=0.9, emd_bound=4)
>>> interval_sentences(frame, unit="households")[0]
'With 90% confidence, between 0 and 3 households have size 1 (released: 2).'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["interval_sentences"]


def interval_sentences(frame: pd.DataFrame, *, unit: str = "groups", top: int = 3) -> list[str]:
    """Sentences a data holder may publish beside the release: the ``top`` most common released sizes, the
    groups and persons up to the median released size, and the bound on the node's emd.

    Every figure is one of the frame's simultaneous bounds, so all sentences hold together at its confidence.
    """
    share = f"{frame.attrs.get('confidence', 0.9):.0%}"
    count = frame["count"].to_numpy()
    common = np.sort(np.argsort(-count, kind="stable")[: min(top, int((count > 0).sum()))])
    lines = [
        f"With {share} confidence, between {int(frame['count_low'].iat[j]):,} and {int(frame['count_high'].iat[j]):,} "
        f"{unit} have size {int(frame['size'].iat[j])} (released: {int(count[j]):,})."
        for j in common
    ]
    if count.sum():
        j = int(np.searchsorted(np.cumsum(count), count.sum() / 2))
        lines.append(
            f"With {share} confidence, between {int(frame['cumulative_low'].iat[j]):,} and "
            f"{int(frame['cumulative_high'].iat[j]):,} {unit} have size at most {j}, holding between "
            f"{int(frame['persons_low'].iat[j]):,} and {int(frame['persons_high'].iat[j]):,} persons."
        )
    if "emd_bound" in frame.attrs:
        lines.append(
            f"With {share} confidence, the released histogram is within {int(frame.attrs['emd_bound']):,} persons "
            "moved (earth mover's distance) of the true one."
        )
    lines.append(f"All of these hold together with {share} confidence.")
    return lines
