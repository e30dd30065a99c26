"""AppTest of the diffusion page: the forward numbers, every preset / step / view in order,
the reverse metrics against the class's own mode, widgets that change outputs, bad input that
gives a message, and the figure payload."""
from __future__ import annotations


import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import choose_preset, metric, open_page, open_view, show_step

PAGE = "topics/diffusion/page.py"
SLUG = "diffusion"


def _page() -> AppTest:
    return open_page(PAGE)


def _module():
    import topics.diffusion.page as page
    return page


def _view(at: AppTest) -> str:
    return at.session_state["diffusion_view"]


def test_forward_view_numbers_and_schedule():
    at = _page()
    assert [t.label for t in at.tabs] == ["Forward", "Reverse", "Steps vs quality", "Train",
                                          "Langevin"]
    expected = float(np.prod(1 - np.linspace(1e-4, 0.02, 1000)[:250]))   # linear, t = 250
    assert float(metric(at, "ᾱ_t")) == pytest.approx(expected, rel=1e-3)
    at.slider(key="df_t").set_value(100).run()
    assert float(metric(at, "ᾱ_t")) == pytest.approx(0.897, abs=1e-3)
    at.slider(key="df_t").set_value(500).run()
    assert float(metric(at, "ᾱ_t")) == pytest.approx(0.0786, abs=1e-4)
    at.selectbox(key="df_sched").select("cosine").run()
    assert float(metric(at, "ᾱ_t")) == pytest.approx(0.4938, abs=1e-3)
    at.selectbox(key="df_data").select("upload CSV").run()       # no file yet: safe fallback
    assert not at.exception
    assert any("No valid CSV" in w.value for w in at.warning)
    assert not at.error


def test_every_preset_then_every_step_then_every_view_in_order():
    """As a teacher does: every preset one after the other (each opens its tab and shows its
    text), then every step's Show me, then every tab: no exception, no error box."""
    page = _module()
    at = _page()
    seen = set()
    for name, preset in page.PRESETS.items():
        choose_preset(at, SLUG, name)
        assert not at.exception and not at.error, name
        assert _view(at) == next(v.title for v in page.VIEWS if v.key == preset.view), name
        assert any(preset.description[:40] in i.value for i in at.info), name
        if preset.view == "reverse":
            seen.add(metric(at, "Sliced W"))
    assert len(seen) >= 5                                       # presets change the result
    for i, step in enumerate(page.STEPS):
        show_step(at, SLUG, i)
        assert step.body and step.view, step.title                # every step has Show me
        assert _view(at) == next(v.title for v in page.VIEWS if v.key == step.view), step.title
        assert not at.error, step.title
    for view in page.VIEWS:
        open_view(at, SLUG, view.title)
        assert not at.error, view.title


def test_guidance_metrics_compare_with_the_class_alone():
    page = _module()
    at = _page()
    choose_preset(at, SLUG, "Guidance w = 3 on class 0")
    s = page.STATE.resolve(page.PRESETS["Guidance w = 3 on class 0"].settings)
    _, m = page.reverse_of(s)
    assert any("class 0 alone" in c.value for c in at.caption)
    assert float(metric(at, "Sliced W")) == pytest.approx(m["sw"], abs=1e-3)
    assert float(metric(at, "Spread ratio")) == pytest.approx(m["spread"], abs=0.01)
    assert m["spread"] < 0.8 and metric(at, "Outside the plot") == "0%"
    at.slider(key="df_w").set_value(0.0).run()                  # conditioning alone
    assert 0.85 < float(metric(at, "Spread ratio")) < 1.1


def test_sampler_change_changes_samples_and_steps_table():
    at = open_view(_page(), SLUG, "Reverse")
    assert any("the data" in c.value for c in at.caption)
    before = metric(at, "Sliced W")
    at.slider(key="df_steps").set_value(2).run()
    after = metric(at, "Sliced W")
    assert float(after) > float(before)
    at.selectbox(key="df_sampler").select("annealed Langevin").run()
    assert not at.exception and not at.warning
    open_view(at, SLUG, "Steps vs quality")
    at.button(key="df_sq_run").click().run()
    assert not at.exception and len(at.dataframe) == 1
    table = at.dataframe[0].value
    assert table.shape == (2, 7)


def test_class_out_of_range_warns_and_train_step():
    at = open_view(_page(), SLUG, "Reverse")
    at.selectbox(key="df_class").select("7").run()
    assert any("classes 0..2" in w.value for w in at.warning)
    open_view(at, SLUG, "Train")
    at.button(key="df_train__step").click().run()
    assert not at.exception
    steps = at.session_state["df_train__trainer"].steps
    assert steps > 0
    open_view(at, SLUG, "Reverse")
    at.selectbox(key="df_den").select("network from the Train tab").run()
    assert not at.exception
    assert any(f"after {steps} iterations" in c.value for c in at.caption)


def test_reverse_figures_stay_under_300_kb():
    at = open_view(_page(), SLUG, "Reverse")
    size = sum(len(c.proto.spec) for c in at.get("plotly_chart"))
    assert 0 < size <= 300_000, size


def test_reverse_export_is_built_only_when_asked_for():
    at = open_view(_page(), SLUG, "Reverse")
    assert not at.get("download_button")
    at.button(key="df_export").click().run()
    assert len(at.get("download_button")) == 2 and not at.exception       # CSV, JSON


def test_a_playing_train_tab_mounts_its_slots_once_and_the_route_serves_its_frames(monkeypatch):
    """The Train tab's frame is built as parts. Paused it checks
    they are drawable; on Play its fragment gets no run_every, both figures and the status
    line are live components bound to the page's token, and the frame route answers that token
    with the same slots; Pause draws Plotly again and the token stops answering."""
    from tests.apptest import pause_and_forget, play_and_fetch, push_on
    asked = push_on(monkeypatch)
    at = open_view(_page(), SLUG, "Train")
    mounted, frame = play_and_fetch(at, "df_train", {"df_fig_train_samples", "df_fig_loss"},
                                    asked)
    assert all("spec" in mounted[s] for s in ("df_fig_train_samples", "df_fig_loss"))
    assert not any(c.proto.id.endswith(("df_fig_train_samples", "df_fig_loss"))
                   for c in at.get("plotly_chart"))
    assert frame["slots"]["df_fig_loss"]["spec"]["data"][0]["name"] == "loss"
    pause_and_forget(at, "df_train")
    assert {"df_fig_train_samples", "df_fig_loss"} <= {
        c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")}


def test_the_reverse_caption_names_the_run_from_its_settings():
    from topics.diffusion import page as df
    s = df.STATE.resolve(df.PRESETS["DDPM, 1000 steps, exact denoiser"].settings)
    assert df.sampler_setup(s, False, 500) == "DDPM, 1000 steps, exact denoiser, 500 samples"
    s = df.STATE.resolve(df.PRESETS["DDIM, 10 noisy steps (η = 1)"].settings)
    assert df.sampler_setup(s, False, 500).startswith("DDIM, 10 steps, η = 1,")
    s = df.STATE.resolve(df.PRESETS["Guidance w = 3 with the trained network"].settings)
    assert "pretrained network" in df.sampler_setup(s, True, 500)
    assert "exact denoiser" in df.sampler_setup(s, False, 500)     # no network: exact ε*
