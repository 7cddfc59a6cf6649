"""The Release viewer (``/viewer``): a release file browsed with no dataset, its budget, nodes, bounds and a
comparison with a second file of the same shape."""

from __future__ import annotations

import io

import pytest

import cocoviz
from cocoviz.datasets import load_dataset
from tests.support.app import assert_clean, new_app, plotly_specs

VIEWER = "pages/viewer.py"


def _file(epsilon: float, methods=("Hc", "Hc")) -> bytes:
    tree = load_dataset("toy")
    release = cocoviz.estimate(tree, epsilons=[epsilon, epsilon], methods=list(methods), max_size=12, seed=3)
    buffer = io.BytesIO()
    release.save(buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def files():
    return _file(1.0), _file(2.0)


def test_the_viewer_opens_a_release_file_without_any_dataset(files, monkeypatch):
    from pages.common import data

    def no_private_data(*args, **kwargs):  # the viewer never loads a dataset
        raise AssertionError("the viewer loaded private data")

    at = new_app(VIEWER)
    assert_clean(at)
    monkeypatch.setattr(data, "load", no_private_data, raising=False)
    at.file_uploader(key="viewer.file").set_value(("release.parquet", files[0], "application/octet-stream")).run()
    assert_clean(at)
    assert any("total **ε = 2**" in m.value for m in at.markdown)  # 1 per level, two levels
    budget = next(d.value for d in at.dataframe if "ε" in d.value.columns)
    assert budget["ε"].tolist() == [1.0, 1.0] and budget["method"].tolist() == ["Hc", "Hc"]
    specs = plotly_specs(at)
    assert specs and specs[0]["layout"]["xaxis"]["type"] == "log"  # histograms on log axes by default
    assert any("persons released" in m.value for m in at.markdown)


def test_the_viewer_compares_two_files_of_one_shape_and_refuses_a_bad_file(files):
    at = new_app(VIEWER)
    at.file_uploader(key="viewer.file").set_value(("a.parquet", files[0], "application/octet-stream")).run()
    at.file_uploader(key="viewer.other").set_value(("b.parquet", files[1], "application/octet-stream")).run()
    assert_clean(at)
    assert any("total **ε = 4**" in m.value for m in at.markdown)
    names = {t.get("name") for spec in plotly_specs(at) for t in spec["data"]}
    assert {"a.parquet", "b.parquet"} <= names
    at.file_uploader(key="viewer.other").set_value(("c.parquet", b"not parquet", "application/octet-stream")).run()
    assert_clean(at)
    assert any("c.parquet is not" in e.value for e in at.error)
