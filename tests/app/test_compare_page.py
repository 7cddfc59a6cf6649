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
        "privacy A",
        "noise A",
        "privacy B",
        "noise B",
        "mean emd A (vs truth)",
        "mean emd B (vs truth)",
        "mean emd between A and B",
    ]
    assert len(table) == 2  # the toy: root and regions
    # A: ε = 1 at both levels (top-down); B: bottom-up, the whole ε = 2 on the leaves (Hc: Δ = 1).
    assert list(table["privacy A"]) == ["ε = 1", "ε = 1"] and list(table["privacy B"]) == ["–", "ε = 2"]
    assert list(table["noise B"]) == ["–", "double-geometric scale Δ/ε = 0.5"]
    assert any(
        "Both pure ε: compared by total ε" in c.value and "an equal total, ε = 2 each" in c.value for c in at.caption
    )
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


def _table(at):
    return at.dataframe[0].value


def _caption(at, text: str) -> str:
    return next(c.value for c in at.caption if text in c.value)


def test_a_zcdp_side_states_rho_sigma_delta_and_its_epsilon_delta_reading():
    at = new_app(COMPARE)
    at.radio(key="w.compare.accounting.A").set_value("zCDP").run()
    assert_clean(at)
    metrics = {m.label: m for m in at.metric}
    # Spent in ρ (0.5 per level on the toy's 2 levels); its (ε, δ) reading is stated, no ε of its own.
    assert "ε spent by A" not in metrics and metrics["ρ spent by A"].value == "1"
    assert metrics["ρ spent by A"].help == "ρ = 1, read as (ε = 10, δ = 1e-10)-DP"
    table = _table(at)
    assert list(table["privacy A"]) == ["ρ = 0.5", "ρ = 0.5"]
    assert list(table["noise A"]) == ["discrete Gaussian σ = 1", "discrete Gaussian σ = 1"]  # σ = Δ₂/√(2ρ)
    assert not any("ε =" in str(v) for v in table["privacy A"])  # no variance-equivalent ε per level
    caption = _caption(at, "A: ρ = 1")
    assert "One pure-ε side, one zCDP side: compared by (ε, δ) at δ = 1e-10" in caption
    assert "not an equal total: ε = 10.03 for A, 2 for B" in caption
    # δ of A's reading: a larger δ, a smaller ε for the same ρ.
    at.number_input(key="w.compare.delta.A").set_value(1e-5).run()
    assert_clean(at)
    from cocoviz.privacy.accounting import zcdp_epsilon

    assert f"ρ = 1, read as (ε = {zcdp_epsilon(1.0, 1e-5):.3g}, δ = 1e-05)-DP" in _caption(at, "A: ρ = 1")


def test_two_zcdp_sides_compare_by_total_rho_and_split_rho_per_level():
    at = new_app(
        COMPARE,
        **{
            "cv.compare.accounting.A": "zCDP",
            "cv.compare.accounting.B": "zCDP",
            "cv.compare.split.A": True,
            "cv.compare.rho.A.0": 0.25,
            "cv.compare.rho.A.1": 0.75,
        },
    )
    assert_clean(at)
    table = _table(at)
    assert list(table["privacy A"]) == ["ρ = 0.25", "ρ = 0.75"]
    assert list(table["noise A"]) == ["discrete Gaussian σ = 1.41", "discrete Gaussian σ = 0.816"]
    # B is bottom-up: the whole ρ = 0.5 + 0.5 on the leaves.
    assert list(table["privacy B"]) == ["–", "ρ = 1"] and list(table["noise B"]) == ["–", "discrete Gaussian σ = 0.707"]
    caption = _caption(at, "Both zCDP")
    assert "compared by total ρ (ρ adds over levels) — an equal total, ρ = 1 each" in caption
    assert {m.label: m.value for m in at.metric}["ρ spent by B"] == "1"
    at.number_input(key="w.compare.rho.A.1").set_value(0.0).run()  # refused: a message, no release, no traceback
    assert_clean(at)
    assert any("Choose both releases" in i.value for i in at.info)


def test_a_saved_zcdp_release_file_states_rho():
    import cocoviz
    from cocoviz.datasets import load_dataset

    def saved(**options) -> bytes:
        buf = io.BytesIO()
        cocoviz.estimate(load_dataset("toy"), max_size=8, seed=1, methods=["Hc", "Hc"], **options).save(buf)
        return buf.getvalue()

    at = new_app(COMPARE)
    at.segmented_control(key="w.compare.source").set_value("files").run()
    at.file_uploader(key="cmp.A").set_value(("a.parquet", saved(epsilons=[1, 1]), "x"))
    at.file_uploader(key="cmp.B").set_value(("b.parquet", saved(rhos=[0.125, 0.125]), "x"))
    at.run()
    assert_clean(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["ε spent by A"] == "2" and metrics["ρ spent by B"] == "0.25"
    assert list(_table(at)["noise B"]) == ["discrete Gaussian σ = 2", "discrete Gaussian σ = 2"]
    assert "B: ρ = 0.25, read as (ε = " in _caption(at, "A: ε = 2")
