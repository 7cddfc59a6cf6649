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
    assert "<script" not in page and "https://" not in page  # inline SVG: opens offline, no script
    assert page.count("<svg") == 3 and "group size j (log)" in page  # the root and the two regions, log axes
    assert "Methods statement" in page and "one person added to or removed from one group" in page
    assert "Released table — region" in page and "90% ± on each cumulative count" in page
    assert CONFIDENTIAL_HEADING not in page and "mean_emd" not in page


def test_the_default_releases_report_is_under_a_megabyte():
    from cocoviz.datasets import DEFAULT_DATASET

    tree = cocoviz.load_dataset(DEFAULT_DATASET)
    n = tree.depth + 1
    release = cocoviz.estimate(tree, epsilons=[1.0] * n, methods=["Hc"] * n, max_size=10_000, seed=0)
    page = release_report_html(release, dataset=DEFAULT_DATASET)
    assert len(page.encode()) < 1_000_000
    assert page.count("<table") >= 2 * n  # a released table and its accuracy per level


def test_the_data_holders_part_comes_after_the_publishable_one_under_its_heading():
    tree, release = _release(secure=True)
    accuracy = cocoviz.level_summary(cocoviz.evaluate(tree, release))
    page = release_report_html(release, dataset="toy", ledger="1 draw, ε = 2", accuracy=accuracy)
    assert "secure sampler" in page and "Ledger entry" in page and "1 draw, ε = 2" in page
    secret = page.index(CONFIDENTIAL_HEADING)
    assert page.index("Publishable") < secret < page.index("mean_emd")
