"""The HTML report of a zCDP release states ρ per level, σ², δ and the (ε, δ) reading: no variance-equivalent ε."""

from __future__ import annotations

import cocoviz
from cocoviz.plots.report import release_report_html


def test_a_zcdp_report_states_rho_not_a_variance_equivalent_epsilon():
    tree = cocoviz.load_dataset("toy")
    release = cocoviz.estimate(tree, rhos=[0.125, 0.125], methods=["Hc", "Hg"], max_size=8, seed=1)
    page = release_report_html(release, dataset="toy")
    assert "Total ρ = <b>0.25</b>" in page and "δ = 1e-10" in page and "discrete Gaussian" in page
    assert "<th>ρ</th>" in page and "<th>ε</th>" not in page
    assert f"{release.plan.fit_epsilon(0):g}" not in page.split("<h3>Privacy budget</h3>")[0].split("<table")[1]
