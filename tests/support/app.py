"""Helpers for the dashboard's tests (imported, unlike conftest): an AppTest on a small dataset, a plotly reader."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(ROOT / "app.py")


def small_dataset() -> str:
    """The smallest bundled dataset (the slides' toy), so AppTests stay fast."""
    from pages.common import data

    names = data.dataset_names()
    for name in ("toy", "slides-toy"):
        if name in names:
            return name
    return names[0]


def new_app(page: str | None = None, *, dataset: str | None = None, **state) -> AppTest:
    """An AppTest of ``app.py`` on ``dataset`` (default: the toy), switched to ``page`` and run."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["cv.dataset"] = dataset or small_dataset()
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def _decode(obj):
    """Plotly's JSON with its base64 typed arrays ({"dtype", "bdata"}) turned back into lists."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            values = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            if "shape" in obj:
                values = values.reshape([int(n) for n in str(obj["shape"]).split(",")])
            return values.tolist()
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


def plotly_specs(at: AppTest) -> list[dict]:
    """The JSON spec of every plotly chart on the page (typed arrays decoded)."""
    return [_decode(json.loads(el.proto.spec)) for el in at.get("plotly_chart")]


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_clean(at: AppTest) -> None:
    """No uncaught exception on the page."""
    assert not at.exception, [e.value for e in at.exception]
