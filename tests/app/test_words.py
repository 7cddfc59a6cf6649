"""One name for each thing across the page: the fast sampler's streams and the noise law (issue 39, item 11)."""

from __future__ import annotations

from tests.support.app import assert_clean, new_app


def test_the_budget_panel_names_the_sampler_and_the_noise_as_the_rest_of_the_page():
    at = new_app(**{"explore.budget": True, "cv.eps.0": 0.91})
    assert_clean(at)
    texts = [i.value for i in at.info] + [w.value for w in at.warning] + [s.value for s in at.success]
    assert not any("seeded numpy" in t for t in texts)
    assert any("Philox counter streams" in t for t in texts)
    table = next(d.value for d in at.dataframe if "noise" in d.value.columns)
    assert set(table["noise"]) == {"double-geometric (discrete Laplace)"}
