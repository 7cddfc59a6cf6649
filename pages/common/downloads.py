"""Explore's downloads: the publishable table and release file, the parameters, the report, and — named
CONFIDENTIAL — every file that holds true values."""

from __future__ import annotations

import io
import json

import pandas as pd
import streamlit as st

from cocoviz.evaluate.against_truth import compare_histograms, level_summary, plain_reading
from cocoviz.hierarchy import path_columns
from pages.common import engine, state


def accuracy_frame(errors: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The per-node accuracy table of the downloads: evaluate's columns, the level's name and the reading."""
    frame = errors.copy()
    frame.insert(1, "level_name", [names[int(k)] for k in frame["level"]])
    frame["reading"] = [plain_reading(row) for _, row in frame.iterrows()]
    return download_frame(frame, names)


def download_frame(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """``frame`` with the node's path beside its name, one column per level ("path: <level>"): a node is
    identified by its labels, not by the joined name, in every file."""
    paths = path_columns(frame["node"], names).add_prefix("path: ")
    at = frame.columns.get_loc("node") + 1
    return pd.concat([frame.iloc[:, :at], paths.set_axis(frame.index), frame.iloc[:, at:]], axis=1)


def downloads_tab(tree, info, release, params: engine.Params, names: list[str], errors: pd.DataFrame) -> None:
    include_true = st.checkbox(
        "Include the true counts (for your own checks)",
        **state.bind("dl.true", False),
        disabled=not info.own_data,
        help="The true counts are the confidential data: never publish a file that "
        "contains them. Without them, the file is the release and may be published.",
    )
    include_true = include_true and info.own_data
    stem = f"cocoviz_{info.label.replace(' ', '_').replace(':', '')}"
    # A file holding true values must never pass for the publishable one: its name says so, loudly.
    table_stem = f"{stem}_CONFIDENTIAL_true_counts" if include_true else stem

    def frame() -> pd.DataFrame:
        f = compare_histograms(tree, release) if include_true else release.to_frame()
        f.insert(2, "level_name", [names[int(k)] for k in f["level"]])
        return download_frame(f, names)

    def as_parquet() -> bytes:
        buf = io.BytesIO()
        frame().to_parquet(buf, index=False)
        return buf.getvalue()

    def saved_release() -> bytes:
        buf = io.BytesIO()
        release.save(buf)
        return buf.getvalue()

    parameters = {
        **release.parameters(),
        "dataset": info.label,
        "seed": params.seed,
        "levels_used": list(tree.levels),
        "budget": release.budget.describe(),
    }
    # Two buttons a row: five in a row cut their labels short ("Release file (plan an…").
    d1, d2 = st.columns(2)
    d3, d4 = st.columns(2)
    d5, d6 = st.columns(2)
    table_kind = "Table with TRUE counts (confidential)" if include_true else "Table"
    d1.download_button(
        f"{table_kind} as CSV",
        lambda: frame().to_csv(index=False).encode(),
        file_name=f"{table_stem}.csv",
        mime="text/csv",
        key="dl_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    d2.download_button(
        f"{table_kind} as Parquet",
        as_parquet,
        file_name=f"{table_stem}.parquet",
        mime="application/vnd.apache.parquet",
        key="dl_parquet",
        on_click="ignore",
        icon=":material/download:",
    )
    d3.download_button(
        "Release file (plan and budget inside)",
        saved_release,
        file_name=f"{stem}_release.parquet",
        mime="application/vnd.apache.parquet",
        key="dl_release",
        on_click="ignore",
        icon=":material/inventory_2:",
        help="cocoviz.load_release reads it back exactly.",
    )
    d4.download_button(
        "Parameters as JSON",
        json.dumps(parameters, indent=2, default=str).encode(),
        file_name=f"{stem}_parameters.json",
        mime="application/json",
        key="dl_json",
        on_click="ignore",
        icon=":material/download:",
    )
    d5.download_button(
        "Accuracy per node as CSV (confidential)",
        lambda: accuracy_frame(errors, names).to_csv(index=False).encode(),
        file_name=f"{stem}_CONFIDENTIAL_accuracy.csv",
        mime="text/csv",
        key="dl_accuracy",
        on_click="ignore",
        icon=":material/download:",
        help="Per node: emd, persons misplaced per group, share of groups of exactly the right size, the "
        "yardstick D/ε and the ratio, with a one-line reading. Measured against the truth: for you, the data "
        "holder, never to publish.",
    )

    def report() -> bytes:
        from cocoviz.plots.report import release_report_html

        drawn, spent = engine.ledger_total(release.plan, info.identity)
        ledger = (
            None
            if release.sampler.startswith("fast")
            else f"Secure release recorded in the privacy ledger; this dataset's entries: {drawn} draw(s), "
            f"ε = {spent:g} in all."
        )
        accuracy = level_summary(errors) if include_true else None
        return release_report_html(
            release, dataset=info.label, level_names=names, ledger=ledger, accuracy=accuracy
        ).encode()

    d6.download_button(
        "Release report with accuracy (HTML, CONFIDENTIAL)" if include_true else "Release report (HTML)",
        report,
        file_name=f"{stem}_CONFIDENTIAL_report.html" if include_true else f"{stem}_report.html",
        mime="text/html",
        key="dl_report",
        on_click="ignore",
        icon=":material/article:",
        help="One self-contained file: the plan, the budget (and the ledger entry of a secure draw) and charts "
        "of the release — publishable. With the true counts included, the errors against the truth follow "
        "under a CONFIDENTIAL heading.",
    )
    st.caption(
        "Columns: level, node, level_name, size, "
        + (
            "private_count, true_count — one row per (node, size) where a count is non-zero"
            if include_true
            else "count — one row per released (node, size)"
        )
        + ". The accuracy file: one row per node (emd, emd_per_group, exact_share, omniscient, ratio, reading), "
        "measured against the truth — not to publish."
    )
    if release.sampler.startswith("fast"):
        st.caption(":material/science: This release used the fast sampler: exploration only, not for release.")
    settings_as_code(tree, info, release, params, stem)


def load_lines(tree, info) -> list[str]:
    """The lines of a script that build the dashboard's hierarchy as ``tree``: a bundled dataset by name (its
    chosen levels kept), an upload from the user's own file (a placeholder path and column to fill in)."""
    from pages.common import data

    if info.label in data.dataset_names():
        lines = ["from cocoviz.datasets import load_dataset", f"tree = load_dataset({info.label!r})"]
        full = data.load_bundled(info.label).levels
        if list(full) != list(tree.levels):
            lines.append(f"tree = tree.keep_levels({list(tree.levels)!r})")
        return lines
    return [
        "import pandas as pd",
        "from cocoviz.hierarchy import Hierarchy",
        "# Your persons table, as uploaded: fill in its path and group-id column.",
        'persons = pd.read_parquet("persons.parquet")',
        f'tree = Hierarchy.from_persons(persons, group="GROUP", levels={list(tree.levels)!r})',
    ]


def settings_as_code(tree, info, release, params: engine.Params, stem: str) -> None:
    """The chosen settings as a plan file, a Python script and the release command (public parameters only)."""
    from cocoviz.plan.export import cli_line, plan_text, python_script

    st.markdown("**These settings as code** — public parameters only, no data")
    plan = release.plan
    script = python_script(plan, load_lines(tree, info), seed=None if params.secure else params.seed)
    c1, c2 = st.columns(2)
    c1.download_button(
        "Plan file (TOML)",
        plan_text(plan).encode(),
        file_name=f"{stem}_plan.toml",
        mime="application/toml",
        key="dl_plan",
        on_click="ignore",
        icon=":material/description:",
        help="python -m cocoviz release --plan FILE, or cocoviz.Plan.load(FILE, shape), reads it.",
    )
    c2.download_button(
        "Python script",
        script.encode(),
        file_name=f"{stem}_reproduce.py",
        mime="text/x-python",
        key="dl_script",
        on_click="ignore",
        icon=":material/code:",
        help="Draws this release again on the same data: bit-identical with the fast sampler's seed.",
    )
    source = "persons.parquet" if not info.label.startswith("toy") else "toy.csv"
    st.code(cli_line(plan, source, group="GROUP", levels=list(tree.levels), plan_file=f"{stem}_plan.toml"), "bash")
    st.caption(
        "The command draws with the secure sampler (a release to publish) from your persons table: put its path "
        "and its group-id column in place of persons.parquet and GROUP."
    )
