"""The HTML release report (issue 25): self-contained, the publishable part apart from the data holder's."""

from __future__ import annotations

import cocoviz
from cocoviz.plots.report import CONFIDENTIAL_HEADING, release_report_html


def _release(**options):
    tree = cocoviz.load_dataset("toy")
    return tree, cocoviz.estimate(tree, epsilons=[0.5, 1.5], methods=["Hc", "Hg"], max_size=8, **options)


def test_the_publishable_report_holds_plan_budget_and_charts_and_nothing_true():
    tree, release = _release(seed=3)
    page = release_report_html(release, dataset="toy", level_names=["all", "region"])
    assert page.startswith("<!doctype html>") and page.endswith("</html>")
    assert "Total ε = <b>2</b>" in page and "not for release" in page
    assert page.count("<script") >= 3 and 'src="https://cdn.plot.ly' not in page  # embedded: opens offline
    assert CONFIDENTIAL_HEADING not in page and "mean_emd" not in page


def test_the_data_holders_part_comes_after_the_publishable_one_under_its_heading():
    tree, release = _release(secure=True)
    accuracy = cocoviz.level_summary(cocoviz.evaluate(tree, release))
    page = release_report_html(release, dataset="toy", ledger="1 draw, ε = 2", accuracy=accuracy)
    assert "secure sampler" in page and "Ledger entry" in page and "1 draw, ε = 2" in page
    secret = page.index(CONFIDENTIAL_HEADING)
    assert page.index("Publishable") < secret < page.index("mean_emd")
