"""The sidebar's presets and per-level panel, and settings carried by the page's address (issue 25)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.support.app import APP, assert_clean, new_app


def node_shown(at) -> str:
    """The node named above its metrics ("**Node:** <name> — level …")."""
    line = next(m.value for m in at.markdown if m.value.startswith("**Node:** "))
    return line.removeprefix("**Node:** ").split(" — level ")[0]


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def keys(at) -> set[str]:
    return {w.key for w in at.sidebar.get("number_input")} | {w.key for w in at.sidebar.get("selectbox")}


def test_first_sight_has_total_split_and_method_only_and_per_level_keeps_values():
    at = new_app()
    assert_clean(at)
    assert "w.eps_n.0" not in keys(at) and "w.method.0" not in keys(at)  # per-level boxes not drawn
    assert at.number_input(key="w.eps.total").value == 2.0
    assert metric(at, "Total ε spent") == "2"
    # More to the leaves: 1 : 2 over root and regions.
    at.segmented_control(key="w.eps.split").set_value("leaves").run()
    assert_clean(at)
    assert at.session_state["cv.eps.0"] == 2 / 3 or abs(at.session_state["cv.eps.0"] - 0.666667) < 1e-9
    assert metric(at, "Total ε spent") == "2"
    # One method for every level.
    at.selectbox(key="w.methods.preset").set_value("Hg").run()
    assert_clean(at)
    assert [at.session_state[f"cv.method.{k}"] for k in (0, 1)] == ["Hg", "Hg"]
    # Opened, the per-level boxes show the preset's values; a level's own ε makes the split custom.
    at.toggle(key="w.per_level").set_value(True).run()
    assert_clean(at)
    assert at.selectbox(key="w.method.1").value == "Hg"
    assert abs(at.number_input(key="w.eps_n.1").value - 1.333333) < 1e-6
    at.number_input(key="w.eps_n.1").set_value(3.0).run()
    at.selectbox(key="w.method.0").set_value("Hc").run()
    assert_clean(at)
    assert at.segmented_control(key="w.eps.split").value == "custom"
    assert at.selectbox(key="w.methods.preset").value == "per level"
    # Closed again: the values are kept and still used.
    at.toggle(key="w.per_level").set_value(False).run()
    assert_clean(at)
    assert "w.eps_n.1" not in keys(at)
    assert metric(at, "Total ε spent") == "3.66667"
    # A new total under a custom split keeps the levels' proportions.
    at.number_input(key="w.eps.total").set_value(7.333334).run()
    assert_clean(at)
    assert abs(at.session_state["cv.eps.1"] - 6.0) < 1e-5


def test_a_refused_total_is_named():
    at = new_app()
    at.number_input(key="w.eps.total").set_value(0.0).run()
    assert_clean(at)
    assert any("total ε" in e.value for e in at.error)


def _linked(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    return at


def test_a_link_opens_its_release():
    at = _linked(dataset="toy", eps="0.5,2", methods="Hg,Hc", seed="3", consistency="bottom-up", node="b")
    assert_clean(at)
    assert not at.warning or not any("address" in w.value for w in at.warning)
    assert metric(at, "Total ε spent") == "2.5"
    assert at.session_state["cv.method.0"] == "Hg" and at.session_state["cv.method.1"] == "Hc"
    assert at.session_state["cv.seed"] == 3 and at.session_state["cv.consistency"] == "bottom-up"
    assert node_shown(at) == "b"
    assert at.segmented_control(key="w.eps.split").value == "custom"
    # The address then carries what is shown (a reload opens the same release).
    assert at.query_params["eps"] == ["0.5,2"] or at.query_params["eps"] == "0.5,2"


def test_bad_link_values_get_a_message_not_a_traceback():
    at = _linked(dataset="nope", eps="1,x", methods="Hq", k="0.5", seed="-1", node="zz", merge="max", colour="red")
    assert_clean(at)
    text = " ".join(w.value for w in at.warning)
    for part in ("dataset='nope'", "'x' is not a number", "'Hq'", "k", "seed", "node='zz'", "merge='max'", "colour"):
        assert part in text, part
    assert "the bundled ones:" in text and ", upload)" not in text  # "upload" is not listed as a dataset name
    # The defaults, nothing half-applied.
    assert at.session_state["cv.eps.0"] == 1.0 and at.session_state["cv.method.0"] == "Hc"
    assert at.session_state["cv.seed"] == 0


def _load(at, name: str, data: bytes) -> None:
    at.session_state["links.load_open"] = True
    at.run()
    next(u for u in at.file_uploader if u.key == "links.saved_file").set_value((name, data, "application/octet-stream"))
    at.run()


def test_a_saved_parameters_file_restores_the_sidebar():
    import json

    at = new_app()
    saved = {"epsilons": [0.5, 1.5], "methods": ["Hg", "Hc"], "max_size": 9, "consistency": "bottom-up"}
    _load(at, "p.json", json.dumps({**saved, "merge": "weighted", "seed": 7, "dataset": "toy"}).encode())
    assert_clean(at)
    assert metric(at, "Total ε spent") == "2"
    assert [at.session_state[f"cv.eps.{k}"] for k in (0, 1)] == [0.5, 1.5]
    assert at.session_state["cv.method.0"] == "Hg" and at.session_state["cv.K.toy"] == 9
    assert at.session_state["cv.seed"] == 7 and at.session_state["cv.consistency"] == "bottom-up"
    # Not a parameters file: named, nothing changed.
    _load(at, "other.json", b'{"colour": "red"}')
    assert_clean(at)
    assert any("'other.json' is not a saved parameters file" in e.value for e in at.error)
    assert at.session_state["cv.seed"] == 7


def test_a_saved_release_file_restores_the_sidebar():
    import io

    import cocoviz
    from cocoviz.datasets import load_dataset

    release = cocoviz.estimate(load_dataset("toy"), epsilons=[0.25, 2.0], methods=["Hc", "Hg"], max_size=8, seed=1)
    buf = io.BytesIO()
    release.save(buf)
    at = new_app()
    _load(at, "r.parquet", buf.getvalue())
    assert_clean(at)
    assert [at.session_state[f"cv.eps.{k}"] for k in (0, 1)] == [0.25, 2.0]
    assert [at.session_state[f"cv.method.{k}"] for k in (0, 1)] == ["Hc", "Hg"]
    assert metric(at, "Total ε spent") == "2.25"
    _load(at, "bad.parquet", b"not parquet")
    assert_clean(at)
    assert any("'bad.parquet' is not a saved cocoviz release" in e.value for e in at.error)


def test_an_accepted_upload_survives_a_reload_for_the_holder_of_its_address_only():
    from pages.common.data import UPLOAD

    at = new_app()
    at.selectbox(key="w.dataset").set_value(UPLOAD).run()
    at.text_input(key="w.upload.levels").set_value("state")
    at.file_uploader[0].set_value(("good.csv", b"state,size\nx,1\nx,3\ny,2\ny,2\n", "text/csv"))
    at.run()
    at.button(key="upload.accept").click().run()
    assert_clean(at)
    assert metric(at, "Groups G (public)") == "4"
    query = {k: at.query_params[k] for k in at.query_params}
    query = {k: v[0] if isinstance(v, list) else v for k, v in query.items()}
    assert query["dataset"] == "upload" and "-" in query["upload"]
    # A reload: a new session with the same address finds the upload and its settings.
    again = _linked(**query)
    assert_clean(again)
    assert metric(again, "Groups G (public)") == "4"
    assert again.session_state["cv.upload.levels"] == "state"
    # Another session without the token (the content hash alone) does not.
    other = _linked(**{**query, "upload": query["upload"].split("-")[0] + "-guess"})
    assert_clean(other)
    assert any("no longer kept on the server" in w.value for w in other.warning)
    assert any("Upload a CSV" in i.value for i in other.info)  # asked for the file again


def test_a_link_with_k_from_hg_opens_it():
    at = _linked(dataset="toy", eps="0.5,2", methods="Hg,Hc", k="from-hg")
    assert_clean(at)
    assert at.segmented_control(key="w.k_select").value == "from-hg"
    assert metric(at, "Total ε spent") == "2.5"  # from-hg spends no ε of its own
    assert at.query_params["k"] == ["from-hg"] or at.query_params["k"] == "from-hg"


def test_a_custom_split_and_per_level_methods_are_shown_where_they_are_set():
    """A link with per-level methods (Hg, Hc, Hc) opens the per-level panel and names them on the page."""
    at = _linked(methods="Hg,Hc,Hc")
    assert_clean(at)
    assert at.session_state["cv.per_level"] is True
    assert "w.method.0" in keys(at) and "w.method.1" in keys(at)
    shown = [m.value for m in at.markdown if m.value.startswith("Method per level:")]
    assert shown and "**Hg**" in shown[0] and "**Hc**" in shown[0]
    at = new_app(**{"cv.eps.split": "custom"})
    assert_clean(at)
    assert "w.eps_n.0" in keys(at)  # the custom split's per-level boxes are drawn at once


def _caption_of_rho(at) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("ρ per level"))


def test_a_zcdp_link_opens_its_zcdp_release_and_the_address_keeps_its_rho():
    at = _linked(dataset="toy", rhos="0.125,0.5", methods="Hg,Hc", seed="3")
    assert_clean(at)
    assert not at.warning or not any("address" in w.value for w in at.warning)
    assert at.session_state["cv.accounting"] == "zCDP"
    assert [at.session_state[f"cv.rho.{k}"] for k in (0, 1)] == [0.125, 0.5]
    assert _caption_of_rho(at).startswith("ρ per level 0.125, 0.5; ρ = 0.625 in all")
    assert at.query_params["rhos"] in (["0.125,0.5"], "0.125,0.5") and "eps" not in at.query_params
    # A pure-ε link opened next switches the accounting back.
    again = _linked(dataset="toy", eps="0.5,2", methods="Hg,Hc")
    assert again.session_state["cv.accounting"] == "pure ε" and metric(again, "Total ε spent") == "2.5"


def test_a_saved_zcdp_release_file_restores_its_rho():
    import io

    import cocoviz
    from cocoviz.datasets import load_dataset

    release = cocoviz.estimate(load_dataset("toy"), rhos=[0.25, 2.0], methods=["Hc", "Hg"], max_size=8, seed=1)
    buf = io.BytesIO()
    release.save(buf)
    at = new_app()
    _load(at, "r.parquet", buf.getvalue())
    assert_clean(at)
    assert at.session_state["cv.accounting"] == "zCDP"
    assert [at.session_state[f"cv.rho.{k}"] for k in (0, 1)] == [0.25, 2.0]
    assert _caption_of_rho(at).startswith("ρ per level 0.25, 2; ρ = 2.25 in all")
