"""AppTest of the attention page: every tab and preset runs, outputs follow the widgets,
bad input gets a clear message."""
from __future__ import annotations


from streamlit.testing.v1 import AppTest

from engine import attention as A
from viz.topics import ROOT
from tests.apptest import metric, chart_titles

WEIGHTS = ROOT / "assets" / "weights"

PAGE = "topic_pages/attention.py"


def open_page(tab: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page(PAGE)
    if tab is not None:
        at.session_state["at_tab"] = tab
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception
    return at






def all_text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_defaults_and_mechanics_follow_widgets():
    at = open_page()
    assert [t.label for t in at.tabs] == ["Mechanics", "Positional encoding",
                                          "Trained transformer", "Masks"]
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


def test_every_preset_runs_and_sets_its_widgets():
    at = open_page()
    names = list(at.selectbox(key="at_preset").options)
    assert len(names) >= 8
    tabs_seen = set()
    for name in names:
        at.selectbox(key="at_preset").select(name).run()
        assert not at.exception, name
        assert not at.error, name
        # the picker shows the preset's description only when every widget holds its value
        assert at.info and "Controls changed" not in all_text(at), name
        tabs_seen.add(at.session_state["at_tab"])
    assert tabs_seen == {"Mechanics", "Positional encoding", "Trained transformer", "Masks"}


def test_positional_encoding_breaks_permutation_equivariance():
    at = open_page("Positional encoding")
    assert not at.error
    none = float(metric(at, "no positions"))
    with_pe = float(metric(at, "with PE"))
    assert none < 1e-5 < 1e-2 < with_pe
    titles = chart_titles(at)
    assert any("Sinusoidal" in t for t in titles)


def test_trained_reverse_model_and_bad_input():
    at = open_page("Trained transformer")
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


def test_every_task_shows_its_shipped_snapshot_labelled():
    """Each task loads assets/weights/attention_<task>.pt the same way; the page says the model
    shown is the shipped snapshot, gives the file's config and step count, and the snapshot
    answers the task's example correctly."""
    at = open_page("Trained transformer")
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
        # the enlarged head (default: the one with most weight on the source digits) is drawn
        assert any(t.startswith("layer") for t in chart_titles(at)), task


def test_train_from_scratch_steps_and_says_it_is_live():
    at = open_page("Trained transformer", at_task="copy", at_source="train from scratch")
    text = all_text(at)
    assert "Model shown: trained live** in this session, iteration 0 (random" in text
    assert "shipped snapshot" not in text
    assert "Iteration **0**" in text
    # the default architecture is the shipped snapshots' one
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


def test_masks_tab_counts_change_with_pattern():
    at = open_page("Masks")
    assert any(t.startswith("causal: 136 of 256") for t in chart_titles(at))
    at.selectbox(key="at_mask").select("local").run()
    assert not at.exception
    # window 4 on n = 16: sum_i min(i + 1, 4) = 1 + 2 + 3 + 13 * 4 = 58
    assert any(t.startswith("local: 58 of 256") for t in chart_titles(at))
