"""The experiment runner: sweeps, summaries, the named experiments and their command line.

Everything runs on small hand-built hierarchies (a stub loader stands in for
the bundled datasets) with a small public bound K, so the file stays fast.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from cocoviz.cli.main import main
from cocoviz.evaluate.metrics import emd
from cocoviz.experiments import (
    EXPERIMENTS,
    FRAME_COLUMNS,
    SUMMARY_COLUMNS,
    WEST_COAST,
    Data,
    Sweep,
    markdown_table,
    parse_mix,
    regional_cut,
    run_error_by_size,
    run_experiment,
    run_sweep,
    summarize,
)
from cocoviz.experiments.kuo_figures import root_winners
from cocoviz.experiments.kuo_naive import NAIVE_CLIP, NAIVE_PROJECTION, clip_only, clip_only_error, clip_only_frame
from cocoviz.experiments.runner import trial_seed
from cocoviz.hierarchy import Hierarchy
from cocoviz.methods.estimators import fit_naive, query_naive
from cocoviz.privacy.noise import FastSampler

STATES = {"CA": 3, "OR": 2, "WA": 2, "NY": 2}


def small_tree(name: str = "x", seed: int = 0) -> Hierarchy:
    """A 3-level tree (root / 4 states / 9 counties) with a housing-like size law and a few outliers."""
    rng = np.random.default_rng([seed, sum(map(ord, name))])
    rows = []
    for state, n_counties in STATES.items():
        for c in range(n_counties):
            sizes = np.concatenate([rng.geometric(0.4, 200), rng.integers(20, 60, 3)])
            s, n = np.unique(sizes, return_counts=True)
            rows.append(pd.DataFrame({"state": state, "county": f"{state}-{c}", "size": s, "count": n}))
    return Hierarchy.from_counts(pd.concat(rows), size="size", count="count", levels=["state", "county"])


def stub_loader(name: str, *, scale=None, seed: int = 0) -> Hierarchy:
    return small_tree(name, seed)


def tiny_sweep(**kw) -> Sweep:
    defaults = dict(
        datasets=[Data("a", tree=small_tree("a"), depth=1)],
        mixes=["Hc×Hg", "Hg"],
        epsilons=[0.5, 1.0],
        merges=["weighted", "average"],
        trials=3,
        seed=7,
        max_size=200,
    )
    defaults.update(kw)
    return Sweep(**defaults)


# ------------------------------------------------------------------ sweeps
def test_sweep_frame_is_tidy_and_complete():
    frame = run_sweep(tiny_sweep())
    assert list(frame.columns) == FRAME_COLUMNS
    # 2 mixes × 2 ε × 2 merges × 3 trials releases, each with 1 + 4 nodes.
    assert len(frame) == 2 * 2 * 2 * 3 * 5
    assert set(frame["mix"]) == {"Hc×Hg", "Hg×Hg"}
    assert frame["emd"].dtype == np.int64 and (frame["emd"] >= 0).all()
    assert set(frame["level_name"]) == {"(root)", "state"}
    root = frame[frame["level"] == 0]
    assert (root["groups"] == small_tree("a").groups(())).all()
    assert np.allclose(root["omniscient"], root["sizes"] / root["level_epsilon"])  # D/ε


def test_sweep_is_deterministic_for_a_seed():
    a, b = run_sweep(tiny_sweep()), run_sweep(tiny_sweep())
    pd.testing.assert_frame_equal(a, b)
    c = run_sweep(tiny_sweep(seed=8))
    assert not np.array_equal(a["emd"].to_numpy(), c["emd"].to_numpy())


def test_trials_do_not_depend_on_the_rest_of_the_sweep():
    """Trial t's noise is keyed by (seed, t) only: a bigger sweep repeats the smaller one's rows."""
    small = run_sweep(tiny_sweep(mixes=["Hg"], epsilons=[1.0], merges=["weighted"]))
    big = run_sweep(tiny_sweep())
    part = big[(big["mix"] == "Hg×Hg") & (big["epsilon"] == 1.0) & (big["merge"] == "weighted")]
    pd.testing.assert_frame_equal(small.reset_index(drop=True), part.reset_index(drop=True))


@pytest.mark.slow
def test_two_workers_give_the_same_frame_and_report_progress():
    sweep = tiny_sweep(mixes=["Hc"], epsilons=[1.0], merges=["weighted"], trials=4)
    calls = []
    inline = run_sweep(sweep, workers=1)
    pooled = run_sweep(sweep, workers=2, progress=lambda done, total: calls.append((done, total)))
    pd.testing.assert_frame_equal(inline, pooled)
    assert calls[0] == (0, 4) and calls[-1] == (4, 4)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_budget_total_splits_evenly_and_bottom_up_spends_it_on_the_leaves():
    sweep = Sweep(
        datasets=[Data("a", tree=small_tree("a"))],
        mixes=["Hc"],
        epsilons=[0.9],
        budget="total",
        consistencies=["bottom-up", "top-down"],
        trials=1,
        max_size=200,
    )
    frame = run_sweep(sweep)
    assert np.allclose(frame["epsilon"], 0.3) and np.allclose(frame["total_epsilon"], 0.9)
    bu, td = frame[frame["consistency"] == "bottom-up"], frame[frame["consistency"] == "top-down"]
    assert np.allclose(bu["level_epsilon"], 0.9) and np.allclose(td["level_epsilon"], 0.3)
    assert set(bu["merge"]) == {"no merge"} and set(td["merge"]) == {"weighted"}


def test_sweep_validation():
    with pytest.raises(ValueError, match="ε"):
        tiny_sweep(epsilons=[0.0])
    with pytest.raises(ValueError, match="merge"):
        tiny_sweep(merges=["median"])
    with pytest.raises(ValueError, match="trials"):
        tiny_sweep(trials=0)
    with pytest.raises(ValueError, match="unknown method"):
        tiny_sweep(mixes=["Hc×Hx"])
    with pytest.raises(ValueError, match="has 3 methods"):
        run_sweep(tiny_sweep(mixes=["Hc×Hc×Hc"]))
    with pytest.raises(ValueError, match="workers"):
        run_sweep(tiny_sweep(trials=1), workers=0)


def test_parse_mix_and_regional_cut():
    assert parse_mix("Hc×Hg") == parse_mix("Hc*Hg") == parse_mix(("Hc", "Hg")) == ("Hc", "Hg")
    tree = small_tree()
    west = regional_cut(tree, ["CA", "OR", "WA"])
    assert [p[0] for p in west.nodes(1)] == ["CA", "OR", "WA"]
    assert west.groups(()) == sum(tree.groups((s,)) for s in ("CA", "OR", "WA"))
    np.testing.assert_array_equal(west.histogram(("OR", "OR-1")), tree.histogram(("OR", "OR-1")))
    assert Data("white", regions=WEST_COAST).key == "white-west"
    with pytest.raises(ValueError, match="TX"):
        regional_cut(tree, ["TX"])


# --------------------------------------------------------------- summaries
def test_summarize_on_a_hand_made_frame():
    """Mean over the nodes of a level per trial, then mean and sd/√n (ddof 1) over trials."""
    rows = []
    # Level 0: one node; trials 0, 1, 2 have emd 10, 20, 60.
    for t, e in enumerate([10, 20, 60]):
        rows.append(("d", "Hc", 0, t, "r", 100, e))
    # Level 1: two nodes; per-trial means (1+3)/2 = 2, (2+6)/2 = 4, (5+7)/2 = 6.
    for t, (e1, e2) in enumerate([(1, 3), (2, 6), (5, 7)]):
        rows += [("d", "Hc", 1, t, "a", 40, e1), ("d", "Hc", 1, t, "b", 60, e2)]
    frame = pd.DataFrame(rows, columns=["dataset", "mix", "level", "trial", "node", "groups", "emd"])
    frame["epsilon"] = 0.5
    frame["omniscient"] = frame["groups"] / 0.5
    out = summarize(frame).set_index("level")
    assert list(out.columns[-len(SUMMARY_COLUMNS) :]) == SUMMARY_COLUMNS
    assert out.at[0, "mean"] == pytest.approx(30.0)
    assert out.at[0, "sd"] == pytest.approx(math.sqrt(((10 - 30) ** 2 + (20 - 30) ** 2 + (60 - 30) ** 2) / 2))
    assert out.at[0, "se"] == pytest.approx(out.at[0, "sd"] / math.sqrt(3))
    assert out.at[1, "mean"] == pytest.approx(4.0)
    assert out.at[1, "sd"] == pytest.approx(2.0)
    assert out.at[1, "se"] == pytest.approx(2.0 / math.sqrt(3))
    assert out.at[1, "nodes"] == 2 and out.at[1, "trials"] == 3
    assert out.at[1, "groups"] == pytest.approx(50.0) and out.at[1, "omniscient"] == pytest.approx(100.0)
    # One trial: no spread to measure.
    assert math.isnan(summarize(frame[frame["trial"] == 0]).loc[0, "se"])


def test_summarize_keeps_configurations_apart():
    frame = run_sweep(tiny_sweep(trials=2))
    out = summarize(frame)
    assert len(out) == 2 * 2 * 2 * 2  # mixes × ε × merges × levels
    assert (out["trials"] == 2).all()
    one = frame[
        (frame["mix"] == "Hg×Hg") & (frame["epsilon"] == 1.0) & (frame["merge"] == "average") & (frame["level"] == 1)
    ]
    row = out[
        (out["mix"] == "Hg×Hg") & (out["epsilon"] == 1.0) & (out["merge"] == "average") & (out["level"] == 1)
    ].iloc[0]
    assert row["mean"] == pytest.approx(one.groupby("trial")["emd"].mean().mean())


def test_error_by_size_sums_to_the_emd():
    tree = small_tree()
    curves, trials = run_error_by_size([Data("a", tree=tree)], epsilon=1.0, trials=2, max_size=200)
    assert set(curves["method"]) == {"Hg", "Hc"} and len(trials) == 4
    root = run_sweep(
        Sweep(
            datasets=[Data("a", tree=tree, depth=0)], mixes=["Hg", "Hc"], consistencies=["none"], trials=2, max_size=200
        )
    )
    # The same seed gives the same releases, so the curves' sums are the sweep's emd.
    assert sorted(trials["emd"]) == sorted(root["emd"])
    assert (trials["error_p25_size"] <= trials["error_p75_size"]).all()


@pytest.mark.slow
def test_png_export_writes_real_images(tmp_path):
    # kaleido drives the system Chromium (the test command installs both): the CLI's PNGs are real images.
    result = run_experiment(
        "table3", out=tmp_path, trials=1, epsilons=[1.0], max_size=200, loader=stub_loader, png=True
    )
    pngs = sorted((tmp_path / "table3").glob("*.png"))
    assert [p.stem for p in pngs] == sorted(result.figures)
    for path in pngs:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5_000


def test_markdown_table():
    md = markdown_table(pd.DataFrame({"a": ["x"], "b": [1234567.0], "c": [3]}))
    assert md.splitlines() == ["| a | b | c |", "|---|---|---|", "| x | 1,234,567 | 3 |"]


# --------------------------------------------------------- named experiments
#: The paper's experiments that are sweeps of releases (one row per node, FRAME_COLUMNS).
SWEEP_EXPERIMENTS = ("table3", "figure4", "figure5", "figure6", "table4")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_each_experiment_runs_end_to_end(name, tmp_path):
    eps = [1.0] if name in ("table3", "table4", "figure1") else [0.5, 1.0]
    result = run_experiment(name, out=tmp_path, trials=2, epsilons=eps, max_size=200, loader=stub_loader, png=False)
    folder = tmp_path / name
    for file in ("table.md", "figures.html", "config.json"):
        assert (folder / file).stat().st_size > 0
    trials = pd.read_csv(folder / "trials.csv")
    assert set(trials["trial"]) == {0, 1}
    assert trials.notna().all().all()  # no value reads back as NA
    if name == "figure1":
        assert {"emd", "error_p50_size", "method"} <= set(trials.columns)
        assert {"size", "error", "mean_error"} <= set(pd.read_csv(folder / "curves.csv").columns)
    elif name in ("wu-e2", "wu-e3"):  # prefix-sum errors, not emd (tests/test_experiments_wu.py)
        assert {"method", "J", "tau", "isotonic", "mae", "rel"} <= set(trials.columns)
    elif name in ("tao-e4", "tao-e5"):  # per-node l1 and emd (tests/test_experiments_tao_hcp.py)
        assert {"epsilon", "node", "l1", "emd"} <= set(trials.columns)
    elif name in SWEEP_EXPERIMENTS:  # the others have their own tests (wu-e1 here, tao-e6)
        assert list(trials.columns) == FRAME_COLUMNS
        summary = pd.read_csv(folder / "summary.csv")
        assert {"mean", "se", "trials", "level"} <= set(summary.columns)
        assert (summary["trials"] == 2).all()
    config = json.loads((folder / "config.json").read_text())
    assert config["experiment"] == name and config["trials"] == 2
    assert "figures.html" in config["written"]
    assert "<div" in (folder / "figures.html").read_text()
    assert result.markdown.count("|") > 10


def test_clip_only_naive_equals_a_hand_computation():
    # H = [0, 2, 1, 0, 1, 0] over sizes 0..5 (the slides' example, K = 5); noisy H = [1, -1, 3, -2, 0, 2].
    # Clipped: [1, 0, 3, 0, 0, 2] (7 groups where G = 4). Hc = [0, 2, 3, 3, 4, 4], clipped Hc = [1, 1, 4, 4, 4, 6]:
    # |differences| = 1 + 1 + 1 + 1 + 0 + 2 = 6.
    truth, noisy = np.array([0, 2, 1, 0, 1, 0]), np.array([1, -1, 3, -2, 0, 2])
    assert clip_only(noisy).tolist() == [1, 0, 3, 0, 0, 2]
    assert clip_only_error(truth, noisy) == 6
    # The exact projection of the same noisy H keeps G = 4 groups, and misplaces fewer persons.
    projected = fit_naive(noisy, groups=4, epsilon=1.0)
    h_hat = np.zeros(6, np.int64)
    np.add.at(h_hat, projected.sizes, projected.counts)
    assert h_hat.sum() == 4 and emd(truth, h_hat) < 6


def test_clip_only_naive_uses_the_noise_of_the_exact_projection():
    tree = small_tree("a").keep_levels([])
    frame = clip_only_frame([tree], ["a"], [1.0], trials=2, seed=3, max_size=80)
    assert list(frame.columns) == FRAME_COLUMNS and len(frame) == 2
    for trial in (0, 1):
        # The naive release's stream: seed (3, trial), level 0, node 0, query 0, scale Δ/ε = 2.
        noisy = FastSampler(trial_seed(3, trial)).draw(query_naive(*tree.node_runs(()), 80), 2.0, (0, 0, 0))
        expected = int(
            np.abs(
                np.cumsum(np.pad(tree.histogram(()), (0, 81 - tree.max_size - 1))) - np.cumsum(np.maximum(noisy, 0))
            ).sum()
        )
        assert frame.loc[frame["trial"] == trial, "emd"].item() == expected


def test_table3_shows_both_readings_of_naive_labelled(tmp_path):
    result = run_experiment(
        "table3", datasets=["housing"], trials=2, epsilons=[1.0], max_size=200, loader=stub_loader, png=False
    )
    assert "| 1 | naive (exact projection) |" in result.markdown
    assert "| 1 | naive (clip only, as the paper appears to) |" in result.markdown
    summary = result.frames["summary"].set_index("mix")
    # Clipping keeps every positive noise cell up to K: worse than the projection.
    assert summary.at["naive-clip", "mean"] > 2 * summary.at["naive", "mean"]
    names = {trace.name for trace in result.figures["table3"].data}
    assert {NAIVE_PROJECTION, NAIVE_CLIP, "Hc", "Hg"} <= names


def test_figure6_root_winners_compare_each_methods_better_series():
    rows = [
        ("Hc×Hc×Hc", "top-down", 0.5, 30.0),
        ("Hc×Hc×Hc", "none", 0.5, 20.0),
        ("Hg×Hg×Hg", "top-down", 0.5, 10.0),
        ("Hg×Hg×Hg", "none", 0.5, 40.0),
        ("Hc×Hc×Hc", "top-down", 1.0, 5.0),
        ("Hc×Hc×Hc", "none", 1.0, 6.0),
        ("Hg×Hg×Hg", "top-down", 1.0, 15.0),
        ("Hg×Hg×Hg", "none", 1.0, 7.5),
    ]
    summary = pd.DataFrame(rows, columns=["mix", "consistency", "epsilon", "mean"]).assign(dataset="d", level=0)
    summary = pd.concat([summary, summary.assign(level=1, mean=1.0)])  # other levels are ignored
    winners = root_winners(summary)
    assert winners["winner"].tolist() == ["Hg", "Hc"]
    assert winners["lowest series"].tolist() == ["Hg×Hg×Hg top-down", "Hc×Hc×Hc top-down"]
    assert winners["best Hg / best Hc"].tolist() == [0.5, 1.5]


def test_experiment_datasets_follow_the_paper():
    """2-level runs use state level only; 3-level runs use the West Coast cuts and taxi's full tree."""
    seen = {}

    def loader(name, *, scale=None, seed=0):
        seen.setdefault(name, 0)
        seen[name] += 1
        return small_tree(name, seed)

    r5 = run_experiment("figure5", trials=1, epsilons=[1.0], max_size=200, loader=loader, datasets=["white"])
    assert set(r5.frames["trials"]["level"]) == {0, 1}
    r6 = run_experiment("figure6", trials=1, epsilons=[1.0], max_size=200, loader=loader, datasets=["housing", "taxi"])
    assert set(r6.frames["trials"]["dataset"]) == {"housing-west", "taxi"}
    assert set(r6.frames["trials"]["level"]) == {0, 1, 2}
    assert {"white", "housing-west", "taxi"} <= set(seen)
    r4 = run_experiment("table4", trials=1, max_size=200, loader=loader, datasets=["white"], whole_country=True)
    assert set(r4.frames["trials"]["dataset"]) == {"white"} and r4.config["whole_country"]
    with pytest.raises(ValueError, match="unknown dataset"):
        run_experiment("table3", datasets=["census"], loader=loader)
    with pytest.raises(ValueError, match="unknown experiment"):
        run_experiment("table9")


# ------------------------------------------------------------ command line
def test_cli_lists_and_runs_an_experiment(tmp_path, capsys):
    assert main(["experiment", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in EXPERIMENTS)
    code = main(
        [
            "experiment",
            "table3",
            "--out",
            str(tmp_path),
            "--scale",
            "0.001",
            "--trials",
            "2",
            "--workers",
            "1",
            "--datasets",
            "taxi,hawaiian",
            "--max-size",
            "20000",
            "--no-png",
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "table3:" in captured.out and "releases" in captured.err
    summary = pd.read_csv(tmp_path / "table3" / "summary.csv")
    assert set(summary["dataset"]) == {"taxi", "hawaiian"}
    assert set(summary["mix"]) == {"naive", "naive-clip", "Hc", "Hg"}
    assert main(["experiment", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err


@pytest.mark.slow
def test_wu_e1_compares_the_ways_of_choosing_k(tmp_path):
    result = run_experiment(
        "wu-e1", out=tmp_path, trials=3, epsilons=[0.5, 2.0], max_size=200, loader=stub_loader, datasets=["housing"]
    )
    full = result.frames["summary"]
    equal = full[full["budget"].str.startswith("equal total")]
    # At an equal total the private K is paid out of ε: the same total as the public K's.
    assert len(equal) == 4 * 2 * 2 and np.allclose(equal["total_epsilon"], equal["epsilon"])
    assert np.allclose(equal["k_epsilon"] / equal["epsilon"], [0.02, 0.1] * 8)
    assert np.allclose(full.loc[full["k_choice"] == "public", "emd_vs_public"], 1.0)
    summary = full[full["budget"].isin(["on top", "no ε_K"])].set_index(["k_choice", "epsilon"])
    assert set(summary.index.get_level_values(0)) == {"public", "noisy-max", "svt", "trunc-svt", "recursive", "oracle"}
    true_max = int(summary["true_max"].iloc[0])
    assert (summary.loc["public", "mean_K"] == 200).all()
    assert (summary.loc["oracle", "mean_K"] == true_max).all()
    assert (summary.loc["noisy-max", "mean_K"] >= true_max).all()  # β = 1e-6: never below here
    assert (summary.loc[["public", "oracle", "noisy-max"], "mean_truncation"] == 0).all()
    assert (summary.loc["noisy-max", "total_epsilon"] == summary.loc["public", "total_epsilon"] + 0.1).all()
    trials = result.frames["trials"]
    assert (trials["cells"] == trials["K"]).all()
    assert (summary.loc["trunc-svt", "total_epsilon"] == summary.loc["public", "total_epsilon"] + 0.1).all()
    assert (tmp_path / "wu-e1" / "table.md").read_text().count("| housing |") == 28
