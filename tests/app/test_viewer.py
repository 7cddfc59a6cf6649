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


def _files_with_measurements(seed: int) -> tuple[bytes, bytes]:
    """A release of the toy (Hg at the root, Hc below) and its noisy-measurement file."""
    tree = load_dataset("toy")
    plan = cocoviz.Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=12)
    measurements = cocoviz.measure(plan, tree, seed=seed)
    release, measured = io.BytesIO(), io.BytesIO()
    cocoviz.post_process(plan, measurements).save(release)
    cocoviz.save_measurements(measurements, measured)
    return release.getvalue(), measured.getvalue()


def test_with_its_noisy_measurement_file_the_viewer_shows_the_runs_bands_of_hg_levels_and_says_so(monkeypatch):
    import pages.common.data as data_module

    release, measured = _files_with_measurements(seed=5)
    _, other_draw = _files_with_measurements(seed=6)
    at = new_app(VIEWER)
    assert_clean(at)

    def no_private_data(*args, **kwargs):  # the viewer never loads a dataset
        raise AssertionError("the viewer loaded private data")

    monkeypatch.setattr(data_module, "load_bundled", no_private_data)
    monkeypatch.setattr(cocoviz.datasets, "load_dataset", no_private_data)
    at.file_uploader(key="viewer.file").set_value(("release.parquet", release, "application/octet-stream")).run()
    assert_clean(at)
    shown = [m.value for m in at.markdown if m.value.startswith("Bands shown")]
    assert shown and "per-cell bands" in shown[0] and "noisy-measurement file" in shown[0]  # Hg root, no file yet

    upload = ("measurements.parquet", measured, "application/octet-stream")
    at.file_uploader(key="viewer.measurements").set_value(upload).run()
    assert_clean(at)
    shown = [m.value for m in at.markdown if m.value.startswith("Bands shown")]
    assert shown and "runs bands" in shown[0]
    # The figure's bounds are the runs band's, as the library computes it from the file.
    loaded = cocoviz.load_release(io.BytesIO(release))
    frame = loaded.intervals((), 0.9, measurements=cocoviz.load_measurements(io.BytesIO(measured)))
    bars = next(t for spec in plotly_specs(at) for t in spec["data"] if "bounds" in str(t.get("name")))
    expected_high = (frame["count_high"] - frame["count"]).to_numpy()[1 : len(bars["error_y"]["array"]) + 1]
    assert list(bars["error_y"]["array"]) == expected_high.tolist()

    at.selectbox(key="viewer.level").set_value(1).run()  # an Hc level: per-cell bands, and why
    assert_clean(at)
    shown = [m.value for m in at.markdown if m.value.startswith("Bands shown")]
    assert shown and "per-cell bands" in shown[0] and "measured with Hc" in shown[0]

    wrong = ("other.parquet", other_draw, "application/octet-stream")  # the same plan, another draw
    at.file_uploader(key="viewer.measurements").set_value(wrong).run()
    assert_clean(at)
    assert any("another release" in e.value for e in at.error)
    at.selectbox(key="viewer.level").set_value(0).run()
    shown = [m.value for m in at.markdown if m.value.startswith("Bands shown")]
    assert shown and shown[0].startswith(
        "Bands shown: the **per-cell bands**"
    )  # the refused file's bands are not shown
