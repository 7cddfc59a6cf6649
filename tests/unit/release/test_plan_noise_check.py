"""An unsigned release file whose plan was edited after release is refused: its bands show the noise the plan's ε or
ρ makes, or the file is refused by name (:mod:`cocoviz.accuracy.intervals.noise_check`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cocoviz import Hierarchy, InputError, estimate, load_release
from cocoviz.accuracy.intervals.bands import LevelBands
from cocoviz.accuracy.intervals.noise_check import FALSE_REFUSAL, noise_problem
from cocoviz.plan import Plan
from cocoviz.privacy.noise import GaussianNoise
from cocoviz.release.files import band_columns
from tests.support import files as file_support

KEY = b"the data holder's key, 32 bytes"


def _tree(seed: int = 0, groups: int = 4000) -> Hierarchy:
    """Three levels: 1 root, 4 states, 16 counties; ``groups`` groups of sizes 1..60 with a few large ones."""
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.geometric(0.3, groups), 60)
    sizes[:5] = [200, 350, 90, 120, 400]
    county = rng.integers(0, 16, groups)
    frame = pd.DataFrame({"state": [f"s{c // 4}" for c in county], "county": [f"c{c}" for c in county], "size": sizes})
    return Hierarchy.from_groups(frame, size="size", levels=["state", "county"])


def _release(**options):
    options = {"methods": ["Hc", "Hc", "Hg"], "max_size": 500, "seed": 3, **options}
    if "rhos" not in options:
        options.setdefault("epsilons", [2.0, 2.0, 2.0])
    return estimate(_tree(), **options)


def _with_plan(path, out, **budget) -> None:
    """Rewrite the file at ``path`` to ``out`` with its plan's budget changed to ``budget`` (epsilons or rhos) and
    its budget entry made the changed plan's cost: the edit an attacker makes to an unsigned file."""

    def change(rows, meta):
        honest = load_release(path).plan
        data = {**honest.to_dict(), **budget}
        edited = Plan.from_dict(data, shape=honest.shape)
        meta["plan"].update(budget)
        cost = edited.cost().to_dict()
        meta["budget"].update({k: v for k, v in cost.items() if k not in ("sampler", "notes")})

    file_support.edit_file(path, out, change)


def test_a_lowered_epsilon_in_an_unsigned_file_is_refused_by_name(tmp_path, monkeypatch):
    _release().save(tmp_path / "r.parquet")
    _with_plan(tmp_path / "r.parquet", tmp_path / "lowered.parquet", epsilons=[0.002, 0.002, 0.002])
    with pytest.raises(InputError, match=r"narrower than its plan's ε = 0.002 allows: the file's plan was changed"):
        load_release(tmp_path / "lowered.parquet")
    # Nothing else in the edited file is wrong: without the check it loads, claiming ε = 0.006 in all.
    monkeypatch.setattr(band_columns, "noise_problem", lambda *args: None)
    assert load_release(tmp_path / "lowered.parquet").budget.total == pytest.approx(0.006)


def test_a_lowered_rho_in_an_unsigned_zcdp_file_is_refused_by_name(tmp_path):
    _release(rhos=[0.5, 0.5, 0.5]).save(tmp_path / "r.parquet")
    _with_plan(tmp_path / "r.parquet", tmp_path / "lowered.parquet", rhos=[5e-6, 5e-6, 5e-6])
    with pytest.raises(InputError, match=r"narrower than its plan's ρ = 5e-06 allows"):
        load_release(tmp_path / "lowered.parquet")


def test_a_raised_epsilon_is_refused_too_its_bands_would_claim_a_coverage_they_do_not_have(tmp_path):
    _release().save(tmp_path / "r.parquet")
    _with_plan(tmp_path / "r.parquet", tmp_path / "raised.parquet", epsilons=[200.0, 200.0, 200.0])
    with pytest.raises(InputError, match=r"wider than its plan's ε = 200 allows"):
        load_release(tmp_path / "raised.parquet")


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"epsilons": [0.05, 0.05, 0.05]},
        {"epsilons": [8.0, 0.5, 1.0]},
        {"rhos": [0.5, 0.5, 0.5]},
        {"rhos": [0.001, 0.02, 2.0]},
        {"methods": ["Hg", "Hg", "Hg"]},
        {"methods": ["naive", "Hcp", "Hc"], "epsilons": [1.0, 1.0, 1.0]},
        {"consistency": "bottom-up"},
    ],
)
def test_honest_files_load_with_and_without_bands_signed_or_not(tmp_path, options):
    release = _release(**options)
    release.save(tmp_path / "r.parquet")
    release.save(tmp_path / "signed.parquet", key=KEY)
    release.save(tmp_path / "bare.parquet", bands=False)
    assert any(b is not None for b in load_release(tmp_path / "r.parquet").bands)
    load_release(tmp_path / "signed.parquet", key=KEY)
    assert load_release(tmp_path / "bare.parquet").bands == [None] * 3


def test_a_file_without_bands_is_not_checked_and_says_nothing_of_its_noise(tmp_path):
    """Without bands (``save(bands=False)``) the file holds nothing derived from the noise but the released runs
    and stated variances, which follow no bound in ε: its lowered plan is not seen (sign the file)."""
    _release().save(tmp_path / "bare.parquet", bands=False)
    _with_plan(tmp_path / "bare.parquet", tmp_path / "lowered.parquet", epsilons=[0.002, 0.002, 0.002])
    assert load_release(tmp_path / "lowered.parquet").budget.total == pytest.approx(0.006)


# ------------------------------------------------------------------ the relations on exact draws
def _draw(rng, noise, n: int) -> np.ndarray:
    """``n`` i.i.d. draws of the law: the double-geometric as a difference of geometrics, the discrete Gaussian
    by inversion of its exact pmf."""
    if isinstance(noise, GaussianNoise):
        sigma = math.sqrt(float(noise.sigma2))
        k = np.arange(-int(40 * sigma) - 5, int(40 * sigma) + 6)
        pmf = np.exp(-(k * k) / (2 * float(noise.sigma2)))
        return rng.choice(k, size=n, p=pmf / pmf.sum())
    alpha = math.exp(-1 / noise)
    return rng.geometric(1 - alpha, n) - rng.geometric(1 - alpha, n)


TRUTHS = {  # non-decreasing truths of one node, worst cases included: flat, a steep ramp to G, one jump
    "flat": lambda n, g: np.full(n, g // 2),
    "ramp": lambda n, g: (np.arange(n) * g) // max(n - 1, 1),
    "jump": lambda n, g: np.where(np.arange(n) < n // 2, 0, g),
}


@pytest.mark.statistical
@pytest.mark.parametrize("noise", [0.5, 3.0, 40.0, GaussianNoise(1.0), GaussianNoise(400.0)])
@pytest.mark.parametrize("truth", sorted(TRUTHS))
@pytest.mark.parametrize("method", ["Hc", "Hg", "naive"])
def test_honest_envelopes_pass_and_a_thousandfold_lower_epsilon_is_caught(noise, truth, method):
    rng = np.random.default_rng(7)
    scale = math.sqrt(float(noise.sigma2)) if isinstance(noise, GaussianNoise) else noise
    claimed = GaussianNoise(float(noise.sigma2) * 1e6) if isinstance(noise, GaussianNoise) else noise * 1000
    cells, groups = np.array([3000, 40, 1, 4000]), np.array([2000, 30, 1, 50_000])
    ptr = np.concatenate([[0], np.cumsum(cells)])
    for trial in range(20):
        if method == "naive":  # counts summing to G
            t = np.concatenate([rng.multinomial(g, np.full(n, 1 / n)) for n, g in zip(cells, groups)])
        else:
            t = np.concatenate([TRUTHS[truth](n, g) for n, g in zip(cells, groups)])
        y = t + _draw(rng, noise, int(cells.sum()))
        bands = LevelBands.of(method, y, ptr)
        assert noise_problem(bands, noise, groups) is None, (trial, scale)
        assert "narrower" in noise_problem(bands, claimed, groups)


def test_the_false_refusal_bound_is_small():
    assert FALSE_REFUSAL <= 1e-9


def test_a_noisy_measurement_file_with_a_lowered_epsilon_is_refused(tmp_path):
    from cocoviz import measure
    from cocoviz.release.files.measurements_file import load_measurements, save_measurements, statement

    tree = _tree()
    plan = Plan.build(tree, epsilons=[2.0, 2.0, 2.0], methods=["Hc", "Hc", "Hg"], max_size=500)
    save_measurements(measure(plan, tree, seed=1), tmp_path / "m.parquet")
    load_measurements(tmp_path / "m.parquet")  # the honest file

    def change(rows, meta):
        edited = Plan.from_dict({**plan.to_dict(), "epsilons": [0.002] * 3}, shape=plan.shape)
        cost = edited.cost()
        meta["plan"]["epsilons"] = [0.002] * 3
        meta["budget"].update({k: v for k, v in cost.to_dict().items() if k not in ("sampler", "notes")})
        meta["statement"] = statement(type(cost).from_dict(meta["budget"]))

    file_support.edit_file(tmp_path / "m.parquet", tmp_path / "lowered.parquet", change)
    with pytest.raises(InputError, match=r"its answers of level \d are .*narrower than its plan's ε = 0.002 allows"):
        load_measurements(tmp_path / "lowered.parquet")
