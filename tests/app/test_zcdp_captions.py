"""Every caption that states a budget under zCDP says ρ per level, δ, σ and the discrete Gaussian, and an ε only
as the (ε, δ) reading of the total ρ — never an ε of the noise (a Laplace law of equal variance) or a NaN one.

Explore, Joint, Methods (private selection) and the Release viewer; Compare has its own tests
(``test_compare_page.py``).  The toy has two levels; ρ = 0.5 per level with Hc (Δ₂ = 1) gives σ = 1.
"""

from __future__ import annotations

import io

from cocoviz.privacy.accounting import zcdp_epsilon
from tests.support.app import assert_clean, new_app, plotly_specs

ZCDP = {"cv.accounting": "zCDP"}
#: The (ε, δ) reading of ρ = 1 at the default δ, as the captions round it.
READING_1 = f"read as (ε = {zcdp_epsilon(1.0, 1e-10):.3g}, δ = 1e-10)-DP"


def _texts(at, kind: str) -> list[str]:
    return [el.value for el in at.get(kind)]


def test_explore_states_total_rho_sigma_per_level_and_the_reading_never_a_noise_epsilon():
    at = new_app(**ZCDP, **{"explore.budget": True})
    assert_clean(at)
    metrics = {m.label: m for m in at.metric}
    assert "Total ε spent" not in metrics  # the (ε, δ) reading is no "ε spent" of its own
    assert metrics["Total ρ spent"].value == "1"
    assert f"This release: ρ = 1, {READING_1}." in metrics["Total ρ spent"].help
    headline = next(m for m in _texts(at, "markdown") if m.startswith("zCDP, discrete Gaussian noise"))
    assert "ρ per level everyone 0.5 (σ = 1) · region 0.5 (σ = 1)" in headline and READING_1 in headline
    sidebar = next(c for c in _texts(at, "caption") if c.startswith("ρ per level"))
    assert sidebar.startswith("ρ per level 0.5 (σ = 1), 0.5 (σ = 1); ρ = 1 in all") and "discrete Gaussian" in sidebar
    # The node's caption: its level's ρ and σ, never "ε = nan" (a zCDP release has no ε per level).
    node = next(c for c in _texts(at, "caption") if c.startswith("Against the true data"))
    assert "at ρ = 0.5 (discrete Gaussian σ = 1)" in node and "nan" not in node
    assert "a figure of the noise, not of privacy" in node
    # The budget panel's bar adds ρ per level, not each level's own (ε, δ) reading.
    bar = next(s for s in plotly_specs(at) if s["data"] and s["data"][0].get("orientation") == "h")
    assert [t["name"] for t in bar["data"]] == ["everyone: ρ = 0.5", "region: ρ = 0.5"]


def test_explore_private_k_caption_counts_epsilon_k_at_every_level_the_plan_charges_it():
    at = new_app(**ZCDP, **{"cv.k_select": "noisy-max-per-node", "cv.k_epsilon": 0.2})
    assert_clean(at)
    sidebar = next(c for c in _texts(at, "caption") if c.startswith("ρ per level"))
    # ρ = 0.5 + 0.2²/2 at each level: the per-node noisy max is drawn at both levels.
    assert sidebar.startswith("ρ per level 0.52 (K: double-geometric scale Δ/ε = 5; Hc: σ = 1), 0.52 (")
    assert "ρ = 1.04 in all" in sidebar and "ε_K counts ε_K²/2 at each level it is drawn" in sidebar


def test_explore_secure_gate_and_ledger_state_rho_under_zcdp(tmp_path, monkeypatch):
    monkeypatch.setenv("COCOVIZ_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = new_app(**ZCDP)
    at.toggle(key="w.secure").set_value(True).run()
    assert_clean(at)
    gate = next(w for w in _texts(at, "warning") if "secure sampler will noise" in w)
    assert f"it spends **ρ = 1, {READING_1}** more" in gate and "ε = 1 " not in gate
    at.button(key="explore.secure").click().run()
    assert_clean(at)
    # The ledger composes ρ (two draws: ρ = 2), never adding the draws' (ε, δ) readings.
    at.number_input(key="w.rho.0").set_value(0.25).run()
    gate = next(w for w in _texts(at, "warning") if "secure sampler will noise" in w)
    assert f"the ledger holds ρ = 1, {READING_1} in 1 secure release(s)" in gate
    at.button(key="explore.secure").click().run()
    assert_clean(at)
    two = f"**ρ = 1.75, read as (ε = {zcdp_epsilon(1.75, 1e-10):.3g}, δ = 1e-10)-DP** together"
    assert any("(every session): **2**" in i and two in i for i in _texts(at, "info"))
    # The ledger panel's title: the composed ρ and its reading, not an ε.
    panel = next(e.label for e in at.expander if e.label.startswith("Privacy ledger"))
    assert "recorded, ρ = 1.75, read as (ε = " in panel


def test_joint_caption_states_rho_per_level_and_sigma_of_both_margins():
    at = new_app("pages/joint.py", **ZCDP)
    assert_clean(at)
    caption = next(c for c in _texts(at, "caption") if c.startswith("zCDP, discrete Gaussian noise in both margins"))
    # Sizes: Hc at ρ = 0.5 (σ = 1); tenure: one count per region at ρ = 0.125 (Δ₂ = 1, σ = 2).
    assert "(ρ per level: sizes 0.5, tenure 0.125)" in caption
    assert "ρ = 0.625 (Hc: discrete Gaussian σ = 1; owners: discrete Gaussian σ = 2)" in caption
    assert "total **ρ = 1.875**" in caption and "δ = 1e-10)-DP" in caption


def test_methods_selection_cost_states_sigma_under_zcdp():
    at = new_app("pages/methods.py", **ZCDP, **{"methods.tab": "Private algorithm selection"})
    assert_clean(at)
    cost = next(i for i in _texts(at, "info") if i.startswith("Whole privacy cost"))
    assert "ρ = 0.5 per level: discrete Gaussian σ = 1, discrete Gaussian σ = 1" in cost and "δ = 1e-10)-DP" in cost


def test_viewer_states_rho_and_sigma_per_level_of_a_zcdp_file():
    import cocoviz
    from cocoviz.datasets import load_dataset

    buffer = io.BytesIO()
    cocoviz.estimate(load_dataset("toy"), rhos=[0.125, 0.125], methods=["Hc", "Hc"], max_size=12, seed=3).save(buffer)
    at = new_app("pages/viewer.py")
    at.file_uploader(key="viewer.file").set_value(("z.parquet", buffer.getvalue(), "application/octet-stream")).run()
    assert_clean(at)
    assert any(m.startswith("zCDP: total **ρ = 0.25**, read as (ε = ") for m in _texts(at, "markdown"))
    table = next(d.value for d in at.dataframe if "ρ" in d.value.columns)
    assert table["ρ"].tolist() == [0.125, 0.125] and "ε" not in table.columns
    assert table["noise"].tolist() == ["discrete Gaussian σ = 2", "discrete Gaussian σ = 2"]  # 1/√(2·0.125)
    assert any("discrete Gaussian σ = 2" in c for c in _texts(at, "caption"))


def test_explore_intervals_advice_names_rho_under_zcdp():
    at = new_app(**ZCDP, **{"explore.tab": "Intervals (publishable)"})
    assert_clean(at)
    advice = next(w for w in _texts(at, "warning") if "too wide to inform" in w)
    assert "A larger ρ at this level" in advice and "larger ε" not in advice
