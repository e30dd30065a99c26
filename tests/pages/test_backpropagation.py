"""AppTest of topics/backpropagation/page.py: defaults, the backward walk (Step / Play /
Reset / slider), every preset and tour step (what they claim is on screen), every tab, widget
changes that must change the numbers, the URL, and bad input that must give a message."""
from __future__ import annotations

import json
import numpy as np
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import (chart_figure, choose_preset, metric, open_page, open_view,
                           plotly_array, rerun_fragment, show_step)
from topics.backpropagation import page as bp

SLUG = "backpropagation"
PAGE = "topics/backpropagation/page.py"


def _page(query: dict | None = None) -> AppTest:
    return open_page(PAGE, query)


def _frame(at: AppTest, first_column: str):
    """The dataframe whose first column is `first_column`, indexed by it."""
    frame = next(d.value for d in at.dataframe if d.value.columns[0] == first_column)
    return frame.set_index(first_column)


def _table(at: AppTest):
    return _frame(at, "input")


def _trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name") == name)


def _graph(at: AppTest) -> dict:
    return chart_figure(at, "bp_graph")


def _step_labels(fig: dict) -> list[str]:
    """The boxed downstream gradients on the current backward step's edges."""
    return sorted(a["text"] for a in fig["layout"].get("annotations", ())
                  if a.get("name") == "step")


def _products(fig: dict) -> str:
    """The current step's upstream × local = downstream products (the title's subtitle)."""
    return fig["layout"]["title"].get("subtitle", {}).get("text", "")


def _title(fig: dict) -> str:
    return fig["layout"]["title"]["text"]


def _shown(markdown: str) -> str:
    """What a Markdown element shows for text escaped by ui.plain_text.plain."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def _errors(at: AppTest) -> list[str]:
    return [_shown(e.value) for e in at.error]


def test_defaults_show_the_course_example_and_torch_agrees():
    at = _page()
    assert not _errors(at) and not at.warning
    table = _table(at)
    assert table["ours"].to_dict() == {"x": -4.0, "y": -4.0, "z": 3.0}
    assert table["torch.autograd"].to_dict() == {"x": -4.0, "y": -4.0, "z": 3.0}
    fig = _graph(at)
    assert _title(fig).startswith("Forward pass: f = −12")
    nodes = _trace(fig, "nodes")["text"]
    values = dict(zip(nodes, _trace(fig, "forward value")["text"]))
    assert values == {"x": "−2", "y": "5", "+": "3", "z": "−4", "×": "−12"}
    grads = _trace(fig, "gradient")["text"]
    assert grads == ["", "", "", "", "1"]                  # only the seed dL/dL = 1 so far
    assert at.slider(key="bp_step").value == 0


def test_step_play_reset_walk_the_backward_pass():
    at = _page()
    at.button(key="bp_next").click().run()
    fig = _graph(at)
    assert _title(fig) == "Backward step 1 of 2"
    assert _step_labels(fig) == ["<b>3</b>", "<b>−4</b>"]                  # downstream
    assert _products(fig) == "at ×: 1 × −4 = <b>−4</b> → +  ·  1 × 3 = <b>3</b> → z"
    assert not any(t.get("name") == "edge gradients" for t in fig["data"])  # = downstream
    assert dict(zip(_trace(fig, "nodes")["text"], _trace(fig, "gradient")["text"])) == \
        {"x": "", "y": "", "+": "−4", "z": "3", "×": "1"}
    at.button(key="bp_next").click().run()
    fig = _graph(at)
    assert _title(fig) == "Backward step 2 of 2 · done"
    # the + node's two edges carry the current step; the edges done in step 1 keep theirs
    assert _step_labels(fig) == ["<b>−4</b>"] * 2
    assert _products(fig) == "at +: −4 × 1 = <b>−4</b> → x  ·  −4 × 1 = <b>−4</b> → y"
    assert sorted(_trace(fig, "edge gradients")["text"]) == ["3", "−4"]
    assert dict(zip(_trace(fig, "nodes")["text"], _trace(fig, "gradient")["text"])) == \
        {"x": "−4", "y": "−4", "+": "−4", "z": "3", "×": "1"}
    at.button(key="bp_next").click().run()                  # past the end: stays at 2
    assert at.slider(key="bp_step").value == 2
    at.button(key="bp_reset").click().run()
    assert at.slider(key="bp_step").value == 0 and _title(_graph(at)).startswith("Forward")
    at.slider(key="bp_step").set_value(1).run()
    assert _title(_graph(at)) == "Backward step 1 of 2"
    # Play: a tick of the player fragment advances one step; at the end it stops
    at.button(key="bp_reset").click().run()
    at.button(key="bp_play").click().run()
    assert at.session_state[bp.PLAYING] and at.button(key="bp_play").label == "Pause"
    assert _title(_graph(at)) == "Forward pass: f = −12 · press Step to backpropagate"
    rerun_fragment(at, bp.WALK)                             # one tick
    assert _title(_graph(at)) == "Backward step 1 of 2"
    assert at.progress[0].value == 50                       # no slider while playing
    at.run()                                                # a full run does not advance
    assert _title(_graph(at)) == "Backward step 1 of 2"
    at.button(key="bp_play").click().run()                  # pause where the walk is
    assert not at.session_state[bp.PLAYING] and at.slider(key="bp_step").value == 1
    at.button(key="bp_play").click().run()
    rerun_fragment(at, bp.WALK)
    assert not at.session_state[bp.PLAYING]                # reached the end: stopped
    at.run()
    assert at.slider(key="bp_step").value == 2


def test_every_preset_shows_what_it_claims():
    at = _page()
    names = at.selectbox(key=f"{SLUG}__preset").options
    assert names == list(bp.PRESETS)
    seen = {}
    for name in names:
        choose_preset(at, SLUG, name)
        assert not _errors(at), (name, _errors(at))
        preset = bp.PRESETS[name]
        assert at.session_state[f"{SLUG}_view"] == next(v.title for v in bp.VIEWS
                                                        if v.key == preset.view)
        assert any(name in i.value for i in at.info), name       # its text beside the figure
        seen[name] = at
        if preset.view == "graph":
            table = _table(at)
            np.testing.assert_allclose(table["ours"], table["torch.autograd"],  # float64,
                                       rtol=1e-12, atol=1e-15, err_msg=name)   # two paths
            assert _title(_graph(at)).endswith("· done"), name   # walked to the end
            seen[name] = table["ours"].to_dict()
        elif preset.view == "gradcheck":
            seen[name] = (metric(at, "best h, central"), metric(at, "smallest error, central"))
        elif preset.view == "layers":
            seen[name] = _frame(at, "gradient")
        else:
            seen[name] = (metric(at, "forward passes"), metric(at, "reverse passes"))
    assert seen["Course example: (x + y)·z"] == {"x": -4.0, "y": -4.0, "z": 3.0}
    neuron = seen["Sigmoid neuron"]
    assert neuron["w0"] == pytest.approx(-0.19661193324148185, abs=1e-15)
    assert neuron["w2"] == pytest.approx(0.19661193324148185, abs=1e-15)
    assert seen["A variable used twice: gradients add"] == {"x": -1.0, "y": 3.0}
    assert set(seen["ReLU's zero-gradient region"].values()) == {0.0}
    assert seen["max as a gradient router"] == {"x": 2.0, "y": 0.0, "z": 4.0}
    best_h, best_err = seen["Gradient check on the sigmoid neuron"]
    assert 6e-7 <= float(best_h) <= 6e-5 and float(best_err) < 1e-9
    layer = seen["Linear layer + cross-entropy"]
    assert tuple(layer.loc["dL/dW", "shape"]) == (3, 5)
    assert layer["max |ours − autograd|"].max() < 1e-12
    assert seen["Scalar loss, 100 inputs: reverse mode"] == ("100", "1")
    assert seen["Few inputs, many outputs: forward mode"] == ("2", "64")


@pytest.mark.parametrize("index", range(len(bp.STEPS)))
def test_every_tour_step_opens_its_tab_and_sets_the_controls(index):
    at = _page()
    step = bp.STEPS[index]
    show_step(at, SLUG, index)
    assert not _errors(at)
    assert at.session_state[f"{SLUG}_view"] == next(v.title for v in bp.VIEWS
                                                    if v.key == step.view)
    for key, value in step.settings.items():
        shown = at.session_state[key]
        assert shown == value or (key == "bp_step" and shown == len(
            bp.graph_of(bp.STATE.resolve(step.settings)).trace)), key
    assert any(step.title in m.value for m in at.markdown)


def test_second_tour_step_shows_the_first_backward_step():
    at = _page()
    show_step(at, SLUG, 1)
    fig = _graph(at)
    assert _title(fig) == "Backward step 1 of 2"
    assert _step_labels(fig) == ["<b>3</b>", "<b>−4</b>"]
    assert "1 × 3 = <b>3</b>" in _products(fig) and "1 × −4 = <b>−4</b>" in _products(fig)


def test_typing_an_expression_and_values_changes_everything():
    at = _page()
    at.text_input(key="bp_expr").input("tanh(a) * b + a").run()
    assert [_shown(w.value) for w in at.warning] == ["No value for a, b: using 1."]
    at.text_input(key="bp_values").input("a = 0.5, b = 2, c = 7").run()
    assert not at.warning and any("ignored): c" in _shown(c.value) for c in at.caption)
    table = _table(at)
    import math
    assert table.loc["a", "ours"] == pytest.approx(2 * (1 - math.tanh(0.5) ** 2) + 1, abs=1e-15)
    assert table.loc["b", "ours"] == pytest.approx(math.tanh(0.5), abs=1e-15)
    np.testing.assert_allclose(table["ours"], table["torch.autograd"], rtol=1e-12, atol=1e-15)
    assert set(_trace(_graph(at), "nodes")["text"]) == {"a", "tanh", "b", "×", "+"}


@pytest.mark.parametrize("text, message, caret", [
    ("x + * y", "column 5", 4),
    ("foo(x)", "unknown function 'foo' at column 1", 0),
    ("__import__('os')", "unknown function '__import__'", 0),
    ("x.real", "attribute access", 0),
    ("", "empty expression", None),
])
def test_bad_expression_gives_a_message_with_the_position(text, message, caret):
    at = _page()
    at.text_input(key="bp_expr").input(text).run()
    assert not at.exception
    assert any(message in e for e in _errors(at)), _errors(at)
    if caret is not None:
        assert at.code[0].value.splitlines()[1] == " " * caret + "^"
    at.text_input(key="bp_expr").input("x * y").run()        # and the page recovers
    assert not _errors(at) and _table(at)["ours"].to_dict() == {"x": 5.0, "y": -2.0}


def test_bad_values_give_a_message():
    at = _page()
    at.text_input(key="bp_values").input("x = two").run()
    assert not at.exception and any("number in 'x = two'" in e for e in _errors(at))


def test_url_reproduces_the_expression_and_values():
    # the step is not in the URL (its range follows the graph; see the control's note)
    at = _page({"bp_expr": "max(x, y) * z", "bp_values": "x=4, y=1, z=2", "bp_m": "7"})
    assert _table(at)["ours"].to_dict() == {"x": 2.0, "y": 0.0, "z": 4.0}
    assert _title(_graph(at)).startswith("Forward pass: f = 8")
    assert at.query_params["bp_expr"] == "max(x, y) * z"
    bad = _page({"bp_m": "-3", "bp_expr": "x +"})
    assert not bad.exception and any("syntax error" in e for e in _errors(bad))


def test_gradient_check_tab_follows_the_expression():
    at = _page()
    open_view(at, SLUG, "Gradient check")
    fig = chart_figure(at, "bp_gradcheck")
    names = [t["name"] for t in fig["data"]]
    assert "forward difference" in names and "central difference" in names
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"
    assert any("No truncation error" in c.value for c in at.caption)   # (x + y) z is bilinear
    at.text_input(key="bp_expr").input("sin(x) * exp(y) + z").run()
    assert not any("No truncation error" in c.value for c in at.caption)
    assert 6e-7 <= float(metric(at, "best h, central")) <= 6e-5


def test_layers_tab_shapes_follow_the_sizes():
    at = _page()
    open_view(at, SLUG, "Layers")
    table = _frame(at, "gradient")
    assert tuple(table.loc["dL/dW", "shape"]) == (3, 5)
    at.slider(key="bp_lin_in").set_value(7).run()
    at.slider(key="bp_batch").set_value(2).run()
    table = _frame(at, "gradient")
    assert tuple(table.loc["dL/dW", "shape"]) == (3, 7)
    assert tuple(table.loc["dL/dx", "shape"]) == (2, 7)
    assert table["max |ours − autograd|"].max() < 1e-12
    titles = [a["text"] for a in chart_figure(at, "bp_layers")["layout"]["annotations"]]
    assert "dL/dW = δᵀx  (3, 7)" in titles and "dL/db = Σ δ  (3,)" in titles


def test_modes_tab_counts_passes_as_n_and_m_change():
    at = _page()
    open_view(at, SLUG, "Forward vs reverse mode")
    assert (metric(at, "forward passes"), metric(at, "reverse passes")) == ("16", "1")
    at.slider(key="bp_m").set_value(40).run()
    assert (metric(at, "forward passes"), metric(at, "reverse passes")) == ("16", "40")
    fig = chart_figure(at, "bp_modes")
    fwd = next(t for t in fig["data"] if t["name"].startswith("forward mode"))
    assert list(fwd["x"]) == list(fwd["y"])                  # n passes at every n


def test_a_200_node_graph_stays_small_and_fast_to_draw():
    from benchmarks.bench_backpropagation import TEXT
    at = _page({"bp_expr": TEXT, "bp_values": ", ".join(f"x{i} = 0.{i}" for i in range(10))})
    assert not _errors(at) and not at.warning
    fig = _graph(at)
    assert len(json.dumps(fig)) < 300_000
    assert len(_trace(fig, "nodes")["text"]) == 202
    assert "hover a node" in fig["layout"]["annotations"][-1]["text"]   # too tall to label
    assert not any(t.get("name") == "forward value" for t in fig["data"])


@pytest.mark.parametrize("expr, values, shown", [("x / y", "x = 1, y = 0", "∞"),
                                                 ("sqrt(x) * y", "x = -1, y = 2", "nan")])
def test_a_singular_point_is_named_and_its_gradients_spelled_out(expr, values, shown):
    """A NaN gradient used to show as an empty 'None' cell, and x/0 without a word."""
    import pyarrow as pa
    at = _page({"bp_expr": expr, "bp_values": values})
    assert any("singular or undefined here" in w.value for w in at.warning)
    table = next(d for d in at.dataframe if d.value.columns[0] == "input")
    display = pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_all()
    assert shown in display.to_pandas()["ours"].tolist()
    fine = _page({"bp_expr": "x * y", "bp_values": "x = 1, y = 2"})
    assert not any("singular" in w.value for w in fine.warning)

# ---- bad input: plain-text messages, inf/NaN explained, flat sums, long inputs ------------

def test_messages_are_plain_text_not_markdown():
    at = _page({"bp_expr": '__import__("os")'})
    raw = at.error[0].value
    assert r"\_\_import\_\_" in raw                     # shown as typed, not bold "import"
    assert "unknown function '__import__' at column 1" in _shown(raw)


@pytest.mark.parametrize("expr, values, why", [
    ("log(x) * y", "x = -1, y = 2", "log of a negative number (-1) at node 1 (log, column 1)"),
    ("9**9**9 + x", "x = 1", "overflows"),
    ("x / y", "x = 1, y = 0", "division by zero (1 / 0) at node 2"),
    ("sqrt(x)", "x = 0", "the local gradient of node 1"),
])
def test_inf_and_nan_results_say_where_and_why(expr, values, why):
    at = _page({"bp_expr": expr, "bp_values": values})
    assert not at.exception and not _errors(at)
    notes = [_shown(w.value) for w in at.warning if "Not a finite number" in _shown(w.value)]
    assert len(notes) == 1 and why in notes[0], [_shown(w.value) for w in at.warning]


def test_a_long_flat_sum_is_not_called_nested_and_long_inputs_are_elided():
    at = _page({"bp_expr": " + ".join(f"x{i}" for i in range(250)), "bp_values": "x0 = 1"})
    assert not at.exception and not _errors(at) and _graph(at)["data"]
    assert all(len(w.value) < 400 for w in at.warning)          # 249 names, elided
    at = _page({"bp_values": "a" * 1500})          # (over 2,000 the URL check resets it)
    assert not at.exception and len(_errors(at)) == 1 and len(_errors(at)[0]) < 300
    assert "1,500 characters" in _errors(at)[0]


def test_regression_losses_tab_draws_each_loss_and_its_autograd_slope():
    at = open_view(_page(), SLUG, "Regression losses")
    assert not at.exception and not at.error
    fig = chart_figure(at, "bp_losses_fig")
    slopes = {t["name"]: plotly_array(t["y"]) for t in fig["data"] if t.get("xaxis") == "x2"}
    assert set(slopes) == {"quadratic", "absolute", "huber"}
    assert slopes["quadratic"].max() == pytest.approx(6.0)           # 2e at e = 3
    assert slopes["huber"].max() == pytest.approx(1.0)               # clipped at δ = 1
    at.select_slider(key="bp_rl_delta").set_value(2.0).run()
    fig = chart_figure(at, "bp_losses_fig")
    huber = [plotly_array(t["y"]) for t in fig["data"]
             if t.get("xaxis") == "x2" and t["name"] == "huber"][0]
    assert huber.max() == pytest.approx(2.0)
    at.multiselect(key="bp_rl_losses").set_value([]).run()
    assert at.warning and not at.exception
