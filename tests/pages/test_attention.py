"""AppTest of the attention page (page skeleton): every view, preset and tour step runs in
order, outputs follow the widgets, the enlarged head follows the task, bad input gets a clear
message."""
from __future__ import annotations

import math

import numpy as np
from streamlit.testing.v1 import AppTest

from engine import attention as A
from live.controls import RECONNECT_TIMER_S
from tests.apptest import (live_components, chart_figure, chart_titles, choose_preset, metric, open_page,
                           open_view, plotly_array, show_step)
from ui.topics import ROOT

WEIGHTS = ROOT / "assets" / "weights"
PAGE = "topics/attention/page.py"
SLUG = "attention"
VIEWS = ["Mechanics", "Positional encoding", "Trained transformer", "Masks", "Real model"]


def page_at(view: str | None = None, **state) -> AppTest:
    at = open_page(PAGE)
    for k, v in state.items():
        at.session_state[k] = v
    if view is not None:
        return open_view(at, SLUG, view)
    at.run()
    return at


def all_text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_defaults_and_mechanics_follow_widgets():
    at = page_at()
    assert [t.label for t in at.tabs] == VIEWS
    assert not at.error
    h0, w0 = metric(at, "Mean row entropy"), metric(at, "Largest weight")
    at.session_state["at_dk"] = 64
    at.toggle(key="at_scale").set_value(False).run()
    assert not at.exception
    h1, w1 = metric(at, "Mean row entropy"), metric(at, "Largest weight")
    assert float(h1.split()[0]) < float(h0.split()[0])   # unscaled large d_k: sharper rows
    assert float(w1) > float(w0)
    at.toggle(key="at_perm").set_value(True).run()
    err = float(metric(at, "max |out(Px)"))
    assert err < 1e-5
    assert at.success and "shuffled order" in at.success[0].value
    weights = plotly_array(next(d for d in chart_figure(at, "at_fig_mech")["data"]
                                if d["name"] == "weights")["z"])
    assert np.allclose(weights.sum(1), 1.0, atol=1e-5)


def test_every_preset_then_every_step_then_every_view():
    at = page_at()
    names = list(at.selectbox(key="attention__preset").options)
    assert len(names) >= 10
    views_seen = set()
    for name in names:
        choose_preset(at, SLUG, name)
        assert not at.error, name
        # the preset's text is shown only when every widget holds its value
        assert at.info and "Controls changed" not in all_text(at), name
        views_seen.add(at.session_state["attention_view"])
    assert views_seen == set(VIEWS)
    from topics.attention.page import STEPS
    for i, step in enumerate(STEPS):
        show_step(at, SLUG, i)
        assert not at.error, step.title
        assert any(step.title in m.value for m in at.markdown), step.title
    for view in VIEWS:
        open_view(at, SLUG, view)
        assert not at.error, view


def test_positional_encoding_breaks_permutation_equivariance():
    at = page_at("Positional encoding")
    assert not at.error
    none = float(metric(at, "no positions"))
    with_pe = float(metric(at, "with PE"))
    assert none < 1e-5 < 1e-2 < with_pe
    assert any("Sinusoidal" in t for t in chart_titles(at))
    same = chart_figure(at, "at_fig_pe_b")["data"][0]["z"]
    at.radio(key="at_pe_mode").set_value("add sinusoidal PE").run()
    assert chart_figure(at, "at_fig_pe_b")["data"][0]["z"] != same   # the weights changed


def test_trained_reverse_model_and_bad_input():
    at = page_at("Trained transformer")
    assert not at.error
    text = all_text(at)
    assert "100% of tokens right" in text             # the shipped model reverses the example
    assert "Shipped model" in text
    assert any(t.startswith("layer") for t in chart_titles(at))
    at.text_input(key="at_seq").input("3 1 x 1 5 9 2 6").run()
    assert not at.exception
    assert at.error and "outside the vocabulary" in at.error[0].value
    at.text_input(key="at_seq").input("3 1 4").run()
    assert at.error and "exactly 8 digits" in at.error[0].value
    at.text_input(key="at_seq").input("1 2 3 4 5 6 7 8").run()
    assert not at.error
    assert "`8 7 6 5 4 3 2 1`" in all_text(at)        # correct answer shown for the new input
    at.selectbox(key="at_task").select("sort").run()
    assert not at.exception and not at.error
    assert "`0 1 2 4 4 5 7 9`" in all_text(at)          # the sort example's answer
    at.selectbox(key="at_task").select("lookup").run()
    assert not at.exception and not at.error
    assert "correct: `9 0`" in all_text(at)              # 1 7 4 2 9 0 3 5 | query 9 -> 9 0
    at.text_input(key="at_seq").input("1 7 1 2 9 0 3 5 9").run()
    assert at.error and "distinct" in at.error[0].value


def _enlarged(at: AppTest) -> str:
    return chart_figure(at, "at_fig_shipped_head")["layout"]["title"]["text"]


def test_enlarged_head_follows_the_task():
    """The enlarged head is the informative one of each task (the heads the engine
    tests name), also after a head was picked by hand for another task."""
    at = page_at("Trained transformer")
    expected_layer = {"reverse": 1, "copy": 1, "sort": 2, "lookup": 2}
    at.selectbox(key="at_head").select("layer 1 · head 1").run()
    assert _enlarged(at).startswith("layer 1 · head 1")
    for task, layer in expected_layer.items():
        if task == "reverse":
            continue
        at.selectbox(key="at_task").select(task).run()
        assert at.selectbox(key="at_head").value == "most informative head", task
        assert _enlarged(at).startswith(f"layer {layer} ·"), (task, _enlarged(at))
        assert "(best)" in _enlarged(at)
    at.selectbox(key="at_head").select("layer 3 · head 4").run()     # not in a 2x2 model
    assert not at.error and "(best)" not in _enlarged(at)


def test_every_task_shows_its_shipped_snapshot_labelled():
    at = page_at("Trained transformer")
    for task in A.TASKS:
        at.selectbox(key="at_task").select(task).run()
        assert not at.exception and not at.error, task
        assert not any("No shipped weights" in i.value for i in at.info), task
        text = all_text(at)
        _, info = A.load_pretrained(WEIGHTS / f"attention_{task}.pt")
        cfg = info["config"]
        assert f"Model shown: shipped snapshot** `attention_{task}.pt`" in text, task
        assert "trained live" not in text, task
        assert (f"{cfg['n_layers']} layers × {cfg['n_heads']} heads, d_model {cfg['d_model']}, "
                f"trained {info['steps']:,} iterations") in text, task
        assert "100% of tokens right" in text, task
        assert A.TASKS[task].pattern in text, task
        assert any(t.startswith("layer") for t in chart_titles(at)), task
        assert len(at.get("download_button")) == 2, task


def test_train_from_scratch_steps_and_says_it_is_live():
    at = page_at("Trained transformer", at_task="copy", at_source="train from scratch")
    text = all_text(at)
    assert "Model shown: trained live** in this session, iteration 0 (random" in text
    assert "shipped snapshot" not in text
    assert "Iteration **0**" in text
    assert (at.select_slider(key="at_layers").value, at.select_slider(key="at_heads").value,
            at.select_slider(key="at_dmodel").value) == (2, 2, 64)
    at.session_state["at_layers"] = 1
    at.session_state["at_dmodel"] = 32
    at.run()
    at.button(key="at_train__step").click().run()
    assert not at.exception
    text = all_text(at)
    assert "Iteration **20**" in text
    assert "Model shown: trained live** in this session, iteration 20." in text
    assert metric(at, "loss")


def test_masks_view_counts_change_with_pattern():
    at = page_at("Masks")
    assert any(t.startswith("causal: 136 of 256") for t in chart_titles(at))
    at.selectbox(key="at_mask").select("local").run()
    assert not at.exception
    # window 4 on n = 16: sum_i min(i + 1, 4) = 1 + 2 + 3 + 13 * 4 = 58
    assert any(t.startswith("local: 58 of 256") for t in chart_titles(at))
    at.selectbox(key="at_mask").select("local + strided").run()
    at.slider(key="at_mask_n").set_value(36).run()
    at.slider(key="at_window").set_value(6).run()
    assert any(t.startswith("local + strided: 291 of 1296") for t in chart_titles(at))
    assert any(f"{291 / 36 ** 1.5:.2f} n√n" in c.value for c in at.caption)
    assert math.isclose(291 / 36 ** 1.5, 1.347, abs_tol=1e-3)


def _truncated_weights(tmp_path, monkeypatch, names):
    """Point the shipped-model loader at a folder holding truncated copies of `names`."""
    from ui import shipped_models
    for name in names:
        data = (WEIGHTS / name).read_bytes()
        (tmp_path / name).write_bytes(data[: len(data) // 3])
    monkeypatch.setattr(shipped_models, "WEIGHTS", tmp_path)


def test_a_corrupt_shipped_file_warns_and_trains_from_scratch(tmp_path, monkeypatch):
    _truncated_weights(tmp_path, monkeypatch, [f"attention_{t}.pt" for t in A.TASKS])
    at = page_at("Trained transformer", at_task="copy")
    assert not at.exception and not at.error
    warnings = [w.value for w in at.warning]
    assert any("attention_copy.pt" in w and "corrupt" in w and "scripts.pretrain" in w
               for w in warnings), warnings
    text = all_text(at)
    assert "shipped snapshot" not in text
    assert "Model shown: trained live** in this session" in text


def test_the_playing_live_transformer_mounts_its_slots_and_the_route_serves_its_frames(
        monkeypatch):
    """The live frame's
    attention maps are heatmaps on category axes (the token labels), which the canvas draws
    once live/canvas.categories_as_numbers made them numeric (tick texts = the labels,
    queries top-down as Plotly's reversed category axis): the page is pushed, Play gives the
    fragment no run_every, every slot is a live component bound to the page's token and the
    route answers that token with the same slots. Pause draws Plotly again."""
    import gc
    import json
    from tests.apptest import plotly_array, record_run_every
    from topics.attention import page
    from live import push as live_push
    from live.budget import FrameBudget
    from live.parts import Payload
    monkeypatch.setattr(live_push, "enabled", lambda mode: True)
    monkeypatch.setattr(live_push, "BUDGET", FrameBudget(fps=10.0))
    asked = record_run_every(monkeypatch)
    at = page_at("Trained transformer", at_task="copy", at_source="train from scratch",
                 at_layers=1, at_dmodel=32)
    assert at.session_state["at_train__pushes"] is True
    asked.clear()
    at.button(key="at_train__play").click().run()
    assert not at.exception and at.session_state["at_train__playing"]
    assert asked and set(asked) <= {None, RECONNECT_TIMER_S}      # no frame timer
    mounted = {json.loads(c.proto.json)["poll"]["slot"]: json.loads(c.proto.json)
               for c in live_components(at)}
    assert {"at_fig_live_grid", "at_fig_live_head", "at_fig_live_answer",
            live_push.STATUS_SLOT} <= set(mounted)
    token = at.session_state["at_train__push_token"]
    frame_id = at.session_state["at_train__push_id"]
    assert all(m["poll"]["url"] == "/_dlplay/frame/" + frame_id and m["poll"]["token"] == token
               for m in mounted.values())
    head = mounted["at_fig_live_head"]["spec"]
    labels = head["layout"]["yaxis"]["ticktext"]
    assert labels[0].startswith("0:") and head["layout"]["yaxis"]["range"][0] > 0  # top-down
    assert head["layout"]["xaxis"]["ticktext"] == labels
    # categories as numbers 0..n-1; the labels every k-th of them (the figure's dtick)
    n = len(plotly_array(head["data"][0]["x"]))
    assert list(plotly_array(head["data"][0]["x"])) == list(range(n))
    ticks = list(head["layout"]["yaxis"]["tickvals"])
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1
    assert ticks == list(range(0, n, step)) and len(labels) == len(ticks)
    assert not at.get("plotly_chart")
    status, body = live_push.answer(token)
    assert status == 200 and set(json.loads(body)["slots"]) == set(mounted)
    assert "<b>Model shown: trained live</b> in this session" in mounted["at_live_model"]["html"]
    at.button(key="at_train__play").click().run()                 # Pause
    assert not at.exception and metric(at, "loss") and metric(at, "batch accuracy")
    assert "Model shown: trained live** in this session, iteration" in all_text(at)
    assert not live_components(at) and len(at.get("plotly_chart")) >= 2
    view = at.session_state["at_train__view"]
    handle = at.session_state["at_train__handle"]
    parts = page.live_parts_of(view, handle.read, task_name="copy",
                               digits=(3, 1, 4, 1, 5, 9, 2, 6), choice=page.AUTO)
    payload = Payload.of(parts, classroom=False)
    assert all(p is not None for p in payload.slots.values())       # every part drawable
    assert "spec" in payload.slots["at_fig_curves"] and "spec" in payload.slots["at_fig_live_grid"]
    answer = payload.slots["at_fig_live_answer"]["html"]
    assert "<code>3 1 4 1 5 9 2 6</code>" in answer and "**" not in answer
    assert json.dumps(payload.slots["at_live_model"]).count("<b>Model shown: trained live</b>")
    del at
    gc.collect()
    assert live_push.answer(token)[0] == 404


def test_markdown_html_reads_the_answer_line():
    from live.parts import Markdown
    out = Markdown("Input `1 2` → model: :green[**2**] :red[**~~1~~**] &nbsp; <x>").payload(False)["html"]
    assert '<code>1 2</code>' in out and "&nbsp;" in out and "&lt;x&gt;" in out
    assert '<span style="color:#158237"><b>2</b></span>' in out
    assert '<span style="color:#d6282b"><b><s>1</s></b></span>' in out
