"""Compare two releases (issue 25): two settings on the loaded data, or two saved release files."""

from __future__ import annotations

import io

from tests.support.app import assert_clean, new_app, plotly_specs

COMPARE = "pages/compare.py"


def test_two_settings_side_by_side():
    at = new_app(COMPARE)
    assert_clean(at)
    assert at.title[0].value == "Compare two releases"
    table = at.dataframe[0].value
    assert list(table.columns) == [
        "level",
        "mean emd A (vs truth)",
        "mean emd B (vs truth)",
        "mean emd between A and B",
    ]
    assert len(table) == 2  # the toy: root and regions
    specs = plotly_specs(at)
    assert [t["name"] for t in specs[0]["data"]][-1] == "same error"
    assert {t["name"] for t in specs[1]["data"]} >= {"A", "B"}
    # The same settings on both sides: no node differs.
    at.selectbox(key="w.compare.series.B.2").set_value(at.selectbox(key="w.compare.series.A.2").value).run()
    assert_clean(at)
    assert next(m.value for m in at.metric if m.label == "Nodes that differ") == "0 of 3"


def test_two_saved_files_and_a_wrong_one():
    import cocoviz
    from cocoviz.datasets import load_dataset

    def saved(**options) -> bytes:
        buf = io.BytesIO()
        cocoviz.estimate(load_dataset("toy"), max_size=8, seed=1, **options).save(buf)
        return buf.getvalue()

    at = new_app(COMPARE)
    at.segmented_control(key="w.compare.source").set_value("files").run()
    assert any("Choose both releases" in i.value for i in at.info)
    at.file_uploader(key="cmp.A").set_value(("a.parquet", saved(epsilons=[1, 1], methods=["Hc", "Hc"]), "x"))
    at.file_uploader(key="cmp.B").set_value(("b.parquet", saved(epsilons=[0.5, 2], methods=["Hg", "Hc"]), "x"))
    at.run()
    assert_clean(at)
    assert next(m.value for m in at.metric if m.label == "ε spent by B") == "2.5"
    at.file_uploader(key="cmp.B").set_value(("junk.parquet", b"junk", "x")).run()
    assert_clean(at)
    assert any("'junk.parquet' is not a saved cocoviz release" in e.value for e in at.error)


def test_each_side_can_split_its_epsilon_per_level_and_the_histograms_take_log_axes():
    at = new_app(COMPARE, **{"cv.compare.split.A": True, "cv.compare.eps.A.0": 0.4, "cv.compare.eps.A.1": 1.7})
    assert_clean(at)
    assert next(m.value for m in at.metric if m.label == "ε spent by A") == "2.1"
    at.toggle(key="w.compare.logx.toy").set_value(True).run()
    at.toggle(key="w.compare.logy.toy").set_value(True).run()
    assert_clean(at)
    layout = plotly_specs(at)[-1]["layout"]
    assert layout["xaxis"]["type"] == "log" and layout["yaxis"]["type"] == "log"
