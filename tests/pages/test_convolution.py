"""The convolution page through AppTest: every view, every preset then every tour step in
order, widgets that change the numbers shown, uploads (good and bad), bad URL values, the
sliding window's auto-play."""
import base64
import io
import json
import re
from unittest import mock

import numpy as np
import pytest
import streamlit as st
import torch
import torch.nn.functional as F
from PIL import Image

from engine import conv
from tests.apptest import (chart_figure, choose_preset, metric, open_page, open_view,
                           plotly_array, rerun_fragment, show_step)
from topics.convolution import compute, page
from topics.convolution import figures as figs
from ui.page_keys import view_key

PAGE = "topics/convolution/page.py"
SLUG = "convolution"
TITLES = {v.key: v.title for v in page.VIEWS}


def _open(query=None, view=None):
    q = dict(query or {})
    if view:
        q[view_key(SLUG)] = TITLES[view]
    return open_page(PAGE, q)


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _png(h, w):
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (h, w, 3), dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def test_convolution_view_numbers_follow_the_widgets():
    at = _open()
    _ok(at)
    h, w = conv.load_image("china (photo)", max_side=256).shape
    assert (h, w) == (171, 256)
    assert metric(at, "Output size") == f"{h} × {w}"               # 3x3, p=1: same size
    assert metric(at, "Kernel sum") == "0"                           # Sobel x
    at.slider(key="cv_stride").set_value(2).run()
    _ok(at)
    assert metric(at, "Output size") == (f"{conv.conv_output_size(h, 3, 2, 1)} × "
                                          f"{conv.conv_output_size(w, 3, 2, 1)}")
    before = metric(at, "Output range")
    at.selectbox(key="cv_kernel").select("gaussian blur").run()
    _ok(at)
    assert metric(at, "Kernel sum") == "1" and metric(at, "Output range") != before
    # the sliding-window scrubber: its caption quotes the products' sum at that position
    open_view(at, SLUG, TITLES["slide"])
    frames = conv.conv_animation_frames(conv.downscale(conv.load_image("china (photo)", max_side=256), 8),
                                        conv.KERNELS["gaussian blur"], 2, 1, 1)
    at.slider(key="cv_pos").set_value(3).run()
    assert any(f"**{frames.sums[3]:.4f}**" in c.value for c in at.caption)
    # a dilated kernel wider than the small input: it still slides, on a geometry that fits,
    # and says what changed (it used to leave an error and no figure)
    at.select_slider(key="cv_size").set_value(32).run()
    at.slider(key="cv_padding").set_value(0).run()
    at.slider(key="cv_dilation").set_value(6).run()
    at.slider(key="cv_anim_n").set_value(5).run()
    assert not at.exception and not at.error
    assert any("spans 13 px" in i.value for i in at.info)


def test_every_preset_then_every_step_then_every_view_in_order():
    """As a teacher walks the page: presets one after the other (each opens its view and
    shows its text), then every step's Show me, then every tab; no exception, no error."""
    at = _open()
    for name, preset in page.PRESETS.items():
        choose_preset(at, SLUG, name)
        _ok(at)
        assert at.session_state[view_key(SLUG)] == TITLES[preset.view], name
        assert any(name in i.value for i in at.info), name
        assert at.get("plotly_chart"), name
    for i, step in enumerate(page.STEPS):
        assert step.body.strip(), step.title                    # every step has text
        show_step(at, SLUG, i)
        _ok(at)
        assert at.session_state[view_key(SLUG)] == TITLES[step.view], step.title
        assert any(step.title in m.value for m in at.markdown), step.title
    for title in TITLES.values():
        open_view(at, SLUG, title)
        _ok(at)
        assert at.get("plotly_chart"), title


def test_receptive_field_presets_in_order_show_the_centre_output():
    """7x7 -> WaveNet -> VGG -> ERF (the order that crashed): each preset puts the chosen
    output at its stack's centre, whatever the previous one left."""
    at = _open()
    for name, stack, n in [("7×7 vs three 3×3", "three 3x3", 32),
                           ("WaveNet dilations 1-2-4-8", "dilated 1-2-4-8 (WaveNet, k=2)", 32),
                           ("VGG block (pooling multiplies the jump)", "VGG block", 32),
                           ("Effective field ≪ theoretical box", "3x3 x 12 (deep)", 64),
                           ("7×7 vs three 3×3", "three 3x3", 32)]:
        choose_preset(at, SLUG, name)
        _ok(at)
        c = compute.centre_of(stack, n)
        assert (at.slider(key="cv_out_row").value, at.slider(key="cv_out_col").value) == (c, c)
    # the WaveNet output (17 x 17 at n = 32) is at (8, 8), not (0, 0)
    assert compute.centre_of("dilated 1-2-4-8 (WaveNet, k=2)", 32) == 8
    # tour step 6 after a stack with a larger output: the row is clamped, no crash
    at = _open({"cv_stack": "three 3x3", "cv_rf_n": "64"}, view="rf")
    at.slider(key="cv_out_row").set_value(40).run()
    show_step(at, SLUG, 5)
    _ok(at)
    assert at.slider(key="cv_out_row").value == compute.centre_of("strided 6-layer", 64)


def test_receptive_field_view():
    at = _open({"cv_stack": "three 3x3"}, view="rf")
    _ok(at)
    assert metric(at, "Receptive field r") == "7 × 7"
    assert metric(at, "Conv weights (c = 64)") == f"{27 * 64 * 64:,}"
    at.selectbox(key="cv_stack").select("one 7x7").run()
    _ok(at)
    assert metric(at, "Receptive field r") == "7 × 7"
    assert metric(at, "Conv weights (c = 64)") == f"{49 * 64 * 64:,}"
    at.selectbox(key="cv_stack").select("dilated 1-2-4-8 (WaveNet, k=2)").run()
    _ok(at)
    assert metric(at, "Receptive field r") == "16 × 16"
    assert at.slider(key="cv_out_row").value == 8               # a new stack: its centre
    # choosing an output moves the highlighted input rows (caption)
    at.selectbox(key="cv_stack").select("VGG block").run()
    at.slider(key="cv_out_row").set_value(0).run()
    reg = conv.input_region(conv.STACKS["VGG block"], (0, at.slider(key="cv_out_col").value), 32)
    assert any(f"sees input rows {reg.clip_lo[0]}–{reg.clip_hi[0]}" in c.value for c in at.caption)


def _erf_readout(at) -> str:
    """The numbers written under the effective field's title."""
    return chart_figure(at, "cv_fig_erf")["layout"]["title"]["subtitle"]["text"]


def test_effective_field_view_numbers_follow_the_widgets():
    s = page.STATE.resolve(page.PRESETS["Effective field ≪ theoretical box"].settings)
    at = _open()
    choose_preset(at, SLUG, "Effective field ≪ theoretical box")
    _ok(at)
    erf = page.erf_of(s)
    readout = _erf_readout(at)
    assert f"2σ radius <b>{erf.radius_2sigma:.1f} px</b>" in readout
    assert "half-width of the box <b>12 px</b>" in readout
    assert f"mass in the central half <b>{conv.central_mass(erf)[0]:.0%}</b>" in readout
    at.radio(key="cv_erf_init").set_value("uniform weights, linear").run()
    _ok(at)
    assert _erf_readout(at) != readout
    # a few layers: the central half holds much less, the number moves with the stack
    moved = _erf_readout(at)
    at.selectbox(key="cv_stack").select("three 3x3").run()
    _ok(at)
    assert _erf_readout(at).split("<br>")[1] != moved.split("<br>")[1]


def test_bad_url_values_fall_back():
    at = _open({"cv_stride": "99", "cv_out_row": "999", "cv_kernel": "nonsense",
                view_key(SLUG): "nope"})
    _ok(at)
    assert at.slider(key="cv_stride").value == 4 or at.slider(key="cv_stride").value == 1
    at = _open({"cv_stack": "VGG block", "cv_rf_n": "notanumber"}, view="rf")
    _ok(at)
    assert at.slider(key="cv_rf_n").value == 32
    at.session_state["cv_out_row"] = 999               # a stale value from a larger output
    at.run()
    _ok(at)
    assert at.slider(key="cv_out_row").value == 7


def _unit_line(at) -> str:
    return next(m.value for m in at.markdown if "Σ window ⊙ kernel" in m.value
                or "the largest of its" in m.value)


def _clicked_unit_shows_its_sum(at, model, image):
    """The network overview: before a click the strongest unit of the last convolution is
    explained; a click (the pixel it chose, kept in the session) explains that unit, and the
    value its line prints is the map's value."""
    from topics.convolution.compute import UNIT_KEY, strongest_unit
    maps, _ = conv.feature_maps(model, image)
    layer, ch, r, q = strongest_unit(maps, 3)
    assert f"{maps[layer].name}, channel {ch}, row {r}, column {q}" in _unit_line(at)
    at.session_state[UNIT_KEY] = (5, 1, 2, 3, 4)          # conv2 + ReLU, channel 2, (3, 4)
    at.run()
    _ok(at)
    line = _unit_line(at)
    assert f"{maps[1].name}, channel 2, row 3, column 4" in line
    assert f"**{maps[1].maps[2, 3, 4]:.3f}**" in line
    at.session_state[UNIT_KEY] = (5, 2, 0, 1, 1)          # the max pool
    at.run()
    assert f"= **{maps[2].maps[0, 1, 1]:.3f}**" in _unit_line(at)


def test_a_click_on_a_tiled_map_names_its_channel_and_pixel():
    from topics.convolution.compute import unit_at
    shape = (16, 4, 4)                       # 8 tiles of 4×4 per row, one-pixel gaps
    assert unit_at(shape, 0, 0) == (0, 0, 0)
    assert unit_at(shape, 6, 2) == (1, 2, 1)              # second tile: x 5..8
    assert unit_at(shape, 4, 2) is None                   # the gap column
    assert unit_at(shape, 3, 8) == (8, 3, 3)              # second tile row: y 5..8
    assert unit_at((10, 4, 4), 12, 5) is None             # channel 10 does not exist


def test_feature_maps_and_equivariance_views():
    at = _open(view="maps")
    _ok(at)
    model = conv.load_digits_cnn()
    digits = conv.load_digits()
    _, probs = conv.feature_maps(model, digits.images[5])
    at.number_input(key="cv_digit").set_value(5).run()
    _ok(at)
    assert metric(at, "Label / prediction") == f"{digits.labels[5]} / {int(probs.argmax())}"
    _clicked_unit_shows_its_sum(at, model, digits.images[5])
    trained = float(metric(at, "Peak / mean (trained)"))
    random0 = float(metric(at, "Peak / mean (random init (seed 0))"))
    assert trained > 1.2 * random0                   # the measured difference the text quotes
    at = _open({"cv_image": "shapes"}, view="equi")
    _ok(at)
    assert float(metric(at, "max |conv(Tx) − T conv(x)|")) < 1e-5
    unpooled, pooled = metric(at, "Change without pooling"), metric(at, "Change after 4×4 max pool")
    assert float(pooled) < float(unpooled)
    at.slider(key="cv_shift_x").set_value(0).run()
    assert metric(at, "Change without pooling") == "0.00"


def test_uploads_good_and_bad():
    at = _open({"cv_image": "upload (PNG/JPEG)"})
    _ok(at)
    data = _png(600, 900)
    at.file_uploader(key="cv_upload").set_value(("big.png", data, "image/png")).run()
    _ok(at)
    h, w = conv.downscale(conv.load_upload(data), 256).shape   # the 256 px working size
    assert w == 256 and metric(at, "Output size") == f"{h} × {w}"
    at.file_uploader(key="cv_upload").set_value(("notes.png", b"not an image at all", "image/png")).run()
    assert not at.exception
    assert any("not a PNG or JPEG" in e.value for e in at.error)
    assert metric(at, "Output size") == "171 × 256"          # fell back to the china photo


def test_custom_kernel_grid_and_even_kernel_message():
    at = _open({"cv_kernel": "custom"})
    _ok(at)
    assert metric(at, "Kernel sum") == "1"                        # the grid starts as identity
    at.select_slider(key="cv_ksize").set_value(2).run()
    _ok(at)
    h, w = conv.load_image("china (photo)", max_side=256).shape
    assert metric(at, "Output size") == f"{h + 1} × {w + 1}"      # 2x2 kernel, p=1: n + 1
    open_view(at, SLUG, TITLES["equi"])
    assert not at.exception
    assert any("odd-sized kernel" in e.value for e in at.error)    # message, not a traceback


# ---------------------------------------------------------------- sliding window: auto-play

def _shown_value(at) -> float:
    (cap,) = [c.value for c in at.caption if "Σ products" in c.value]
    return float(re.search(r"\*\*(-?[\d.]+)\*\*", cap).group(1))


def _output_panel(at) -> np.ndarray:
    """z of the sliding-window figure's output panel (NaN where not yet filled in)."""
    (trace,) = [t for t in chart_figure(at, "cv_fig_slide")["data"] if t.get("xaxis") == "x3"]
    return plotly_array(trace["z"])


def _conv2d_reference(anim_n: int, kernel: str, stride=1, padding=1, dilation=1) -> np.ndarray:
    small = conv.downscale(conv.load_image("china (photo)", max_side=256), anim_n)
    return F.conv2d(torch.as_tensor(small)[None, None],
                    torch.as_tensor(conv.KERNELS[kernel])[None, None],
                    stride=stride, padding=padding, dilation=dilation)[0, 0].numpy()


WINDOW = "cv_window"      # the key of the sliding window's run_every fragment


def test_sliding_window_runs_a_transposed_convolution_like_torch():
    """5x5 input, 3x3 kernel, stride 2: an 11x11 output; at the last position it is
    F.conv_transpose2d's, and the caption quotes the input value being spread."""
    at = _open({"cv_slide_op": "transposed convolution", "cv_stride": "2", "cv_padding": "0",
                "cv_anim_n": "5", "cv_image": "digit (8x8)", "cv_kernel": "gaussian blur"},
               view="slide")
    _ok(at)
    small = conv.downscale(conv.load_image("digit (8x8)", max_side=256), 5)
    ref = F.conv_transpose2d(torch.as_tensor(small)[None, None],
                             torch.as_tensor(conv.KERNELS["gaussian blur"])[None, None],
                             stride=2)[0, 0].numpy()
    at.slider(key="cv_pos").set_value(24).run()
    (trace,) = [t for t in chart_figure(at, "cv_fig_slide")["data"]
                if t.get("xaxis") == "x3" and t["type"] == "heatmap"]
    np.testing.assert_allclose(plotly_array(trace["z"]), ref, atol=5e-5)
    assert any(f"**{small[4, 4]:.4f}** adds" in c.value for c in at.caption)


def test_sliding_window_pools_like_torch():
    """Max pooling, 2x2 with stride 2 on the 8x8 input: the output panel is F.max_pool2d's
    4x4 and the caption quotes the largest value of the window; average pooling its mean."""
    at = _open({"cv_slide_op": "max pooling", "cv_stride": "2", "cv_padding": "0"},
               view="slide")
    _ok(at)
    small = torch.as_tensor(conv.downscale(conv.load_image("china (photo)", max_side=256), 8))
    ref = F.max_pool2d(small[None, None], 2, 2)[0, 0].numpy()
    last = ref.size - 1
    at.slider(key="cv_pos").set_value(last).run()
    np.testing.assert_allclose(_output_panel(at), ref, atol=5e-5)
    assert any(f"largest value in the window = **{ref.ravel()[last]:.4f}**" in c.value
               for c in at.caption)
    at.radio(key="cv_slide_op").set_value("average pooling").run()
    _ok(at)
    at.slider(key="cv_pos").set_value(last).run()
    ref = F.avg_pool2d(small[None, None], 2, 2)[0, 0].numpy()
    np.testing.assert_allclose(_output_panel(at), ref, atol=5e-5)


def test_play_starts_at_the_top_left_output():
    at = _open(view="slide")
    _ok(at)
    assert at.slider(key="cv_pos").value == 0
    at.button(key="cv_play").click().run()
    assert at.session_state["cv_at"] == 0
    assert any("Output (0, 0)" in c.value and "Position 1 of" in c.value for c in at.caption)
    rerun_fragment(at, WINDOW)
    assert at.session_state["cv_at"] == 1


def test_play_advances_over_fragment_ticks_and_matches_conv2d():
    at = _open({"cv_anim_n": "5"}, view="slide")
    ref = _conv2d_reference(5, "sobel x")                       # the page's defaults: s=1, p=1
    last = ref.size - 1
    at.slider(key="cv_pos").set_value(0).run()
    at.button(key="cv_play").click().run()
    assert at.button(key="cv_play").label == "Pause"
    assert at.session_state["cv_at"] == 0                      # the Play run itself does not move
    assert "cv_pos" not in [s.key for s in at.slider]         # a progress bar while playing
    assert at.progress[0].value == 0
    assert _shown_value(at) == pytest.approx(ref.ravel()[0], abs=5e-5)
    with mock.patch.object(conv, "conv_animation_frames", wraps=conv.conv_animation_frames) as full_runs:
        for pos in range(1, last + 1):
            rerun_fragment(at, WINDOW)
            assert at.session_state["cv_at"] == pos
            if pos < last:                                           # (percent)
                assert abs(at.progress[0].value - 100 * pos / last) < 1
            assert _shown_value(at) == pytest.approx(ref.ravel()[pos], abs=5e-5)
            panel = _output_panel(at).ravel()
            np.testing.assert_allclose(panel[:pos + 1], ref.ravel()[:pos + 1], atol=1e-5)
            assert np.isnan(panel[pos + 1:]).all()               # later cells still empty
            if pos < last:
                assert full_runs.call_count == 0                 # a tick reruns only the fragment
    # the last output is filled in: play stops and the page reruns once to show Play again
    assert full_runs.call_count == 1
    assert at.session_state["cv_playing"] is False
    assert at.button(key="cv_play").label == "Play" and at.slider(key="cv_pos").value == last
    rerun_fragment(at, WINDOW)
    assert at.session_state["cv_at"] == last                   # stopped: a tick does not move


def test_pause_stops_prev_next_and_speed():
    at = _open({"cv_anim_n": "5", "cv_speed": "4"}, view="slide")
    n_pos = _conv2d_reference(5, "sobel x").size
    at.slider(key="cv_pos").set_value(n_pos - 1).run()
    with mock.patch.object(st, "fragment", wraps=st.fragment) as frag:
        at.button(key="cv_play").click().run()                 # Play at the end starts over
        assert frag.call_args.kwargs["run_every"] == pytest.approx(1 / 4)
    assert at.session_state["cv_at"] == 0
    rerun_fragment(at, WINDOW)
    rerun_fragment(at, WINDOW)
    assert at.session_state["cv_at"] == 2
    assert any("playing at 4/s" in c.value for c in at.caption)
    at.button(key="cv_prev").click().run()                     # Prev while playing: back one,
    assert at.session_state["cv_at"] == 1                      # shown before the next tick
    assert any("Position 2 of" in c.value for c in at.caption)
    rerun_fragment(at, WINDOW)
    assert at.session_state["cv_at"] == 2
    at.run()                                # a full rerun while playing is a tick too (and
    assert at.session_state["cv_at"] == 3   # brings back the elements outside the fragment)
    with mock.patch.object(st, "fragment", wraps=st.fragment) as frag:
        at.button(key="cv_play").click().run()                 # Pause
        assert frag.call_args.kwargs["run_every"] is None      # no more ticks
    assert at.button(key="cv_play").label == "Play" and at.slider(key="cv_pos").value == 3
    rerun_fragment(at, WINDOW)
    rerun_fragment(at, WINDOW)
    assert at.session_state["cv_at"] == 3                      # paused: nothing moves
    at.run()
    assert at.slider(key="cv_pos").value == 3
    at.button(key="cv_next").click().run()
    assert at.slider(key="cv_pos").value == 4
    at.button(key="cv_prev").click().run()
    at.button(key="cv_prev").click().run()
    assert at.slider(key="cv_pos").value == 2
    at.slider(key="cv_pos").set_value(7).run()                 # scrubbing while paused
    assert at.session_state["cv_at"] == 7 and any("Position 8 of" in c.value for c in at.caption)
    at.button(key="cv_play").click().run()
    rerun_fragment(at, WINDOW)
    assert at.session_state["cv_at"] == 8                      # play goes on from there


# ---------------------------------------------------------------- sliding window: cell text

def _sliding_frames(anim_n: int, padding: int) -> conv.ConvFrames:
    small = conv.downscale(conv.load_image("china (photo)", max_side=256), anim_n)
    return conv.conv_animation_frames(small, conv.KERNELS["sobel x"], 1, padding, 1)


@pytest.mark.parametrize("anim_n, padding, numbers", [
    (5, 1, (True, True, True)),      # output 3 x 5
    (8, 1, (True, True, True)),      # output 5 x 8: its labels overlapped at the first row
    (12, 8, (False, True, False))])  # padded input 24 x 28, output 22 x 26: hover only
def test_sliding_window_numbers_fit_their_cells(anim_n, padding, numbers):
    """Each panel writes its numbers at one explicit size for every position (Plotly's own
    size used the 14 px page font while only the first output row was filled, and 5-character
    labels overlapped from 8 cells wide); at that size the longest label (0.65 em a character)
    fits the cell's width in a NOMINAL_WIDTH-wide chart. Too small a cell: no numbers, the
    title says to hover, the hover still gives every value."""
    frames = _sliding_frames(anim_n, padding)
    kernel = conv.KERNELS["sobel x"]
    grids = [frames.padded.shape, kernel.shape, frames.out_shape]
    sizes = set()
    for u in (0, 1, len(frames.sums) - 1):
        fig = json.loads(figs.sliding_window_figure(frames, u, kernel).to_json())
        lay = fig["layout"]
        heat = {t.get("xaxis", "x"): t for t in fig["data"] if t["type"] == "heatmap"}
        titles = [a["text"] for a in lay["annotations"]]
        for c, (axis, (gh, gw), shown) in enumerate(zip(("x", "x2", "x3"), grids, numbers)):
            t = heat[axis]
            assert t["hovertemplate"].startswith("row %{y}, col %{x}: %{z:.3f}")
            x0, x1 = lay[f"xaxis{'' if c == 0 else c + 1}"]["domain"]
            cell = min((figs.NOMINAL_WIDTH - 20) * (x1 - x0) / gw, (420 - 50) / gh)
            if not shown:
                assert "texttemplate" not in t and "text" not in t
                assert "(hover" in titles[c]
                assert figs.cell_text_px(cell, 3 if c == 0 else 5) == 0
                continue
            size = t["textfont"]["size"]
            labels = [v for row in t["text"] for v in row]
            longest = max(len(v) for v in labels)
            assert figs.MIN_TEXT_PX <= size <= 14
            assert longest * 0.65 * size <= cell                  # fits its cell
            assert "hover" not in titles[c]
            sizes.add((c, size))
        if numbers[2]:                                            # the output's labels: sums so far
            flat = [v for row in heat["x3"]["text"] for v in row]
            assert flat[:u + 1] == [f"{v:.2f}" if v != 0 else "0.00" for v in frames.sums[:u + 1]]
            assert set(flat[u + 1:]) <= {""}
    assert len(sizes) == sum(numbers)                             # one size per panel, every u
    if (anim_n, padding) == (8, 1):
        # the chart's geometry: output panel 242.88 px wide (Plotly's xaxis3._length in Chromium
        # at a 1400 x 1000 window, where the chart is 940 px wide) -> 30.4 px cells, 9 px text
        assert (figs.NOMINAL_WIDTH - 20) * np.diff(lay["xaxis3"]["domain"])[0] == pytest.approx(
            242.88, abs=0.5)
        assert (2, 9) in sizes


# ---------------------------------------------------------------- receptive field: image underlay

def _png_pixels(source: str) -> np.ndarray:
    head, data = source.split(",", 1)
    assert head == "data:image/png;base64"
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))


def _shape(fig_json: dict, name: str) -> dict:
    (shape,) = [s for s in fig_json["layout"]["shapes"] if s.get("name") == name]
    return shape


@pytest.mark.parametrize("stack, out", [("strided 6-layer", (0, 0)),      # box left/top of image
                                        ("strided 6-layer", (7, 7)),      # right/bottom
                                        ("VGG block", (3, 5)),
                                        ("dilated 1-2-4-8 (WaveNet, k=2)", (0, 16))])
def test_rf_figure_draws_the_image_under_the_exact_boxes(stack, out):
    n = 32
    specs = conv.STACKS[stack]
    infos = conv.receptive_field(specs, n)
    region = conv.input_region(specs, out, n)
    image = conv.square_image(conv.load_image("china (photo)"), n)
    fig = json.loads(figs.rf_layers_figure(infos, region, image).to_json())
    (img,) = [t for t in fig["data"] if t["type"] == "image"]
    assert img.get("xaxis", "x") == "x" and img.get("yaxis", "y") == "y"      # the input panel
    assert (img["x0"], img["dx"], img["y0"], img["dy"]) == (0, 1, 0, 1)      # pixel (i, j) at (j, i)
    np.testing.assert_array_equal(_png_pixels(img["source"]), figs.to_rgb8(image, False))
    box, seen = _shape(fig, "receptive field box"), _shape(fig, "pixels seen")
    assert (box["x0"], box["x1"], box["y0"], box["y1"]) == (
        region.lo[1] - 0.5, region.hi[1] + 0.5, region.lo[0] - 0.5, region.hi[0] + 0.5)
    assert (seen["x0"], seen["x1"], seen["y0"], seen["y1"]) == (
        region.clip_lo[1] - 0.5, region.clip_hi[1] + 0.5, region.clip_lo[0] - 0.5,
        region.clip_hi[0] + 0.5)
    assert box["xref"] == seen["xref"] == "x" and box["yref"] == seen["yref"] == "y"
    # the axes show the whole box, padding included; the pixels seen lie inside the image
    x_lo, x_hi = sorted(fig["layout"]["xaxis"]["range"])
    y_lo, y_hi = sorted(fig["layout"]["yaxis"]["range"])
    assert x_lo <= box["x0"] and box["x1"] <= x_hi and y_lo <= box["y0"] and box["y1"] <= y_hi
    assert -0.5 <= seen["x0"] and seen["x1"] <= n - 0.5 and -0.5 <= seen["y0"] and seen["y1"] <= n - 0.5
    pad = max(region.pad_before + region.pad_after)
    assert any(s.get("name") == "padding" for s in fig["layout"]["shapes"]) == (pad > 0)


def test_rf_figure_rejects_an_image_of_the_wrong_size():
    infos = conv.receptive_field(conv.STACKS["three 3x3"], 32)
    region = conv.input_region(conv.STACKS["three 3x3"], (0, 0), 32)
    with pytest.raises(ValueError, match="expect 32x32"):
        figs.rf_layers_figure(infos, region, np.zeros((16, 32)))


def test_rf_tab_shows_the_selected_image_under_the_boxes():
    at = _open({"cv_stack": "strided 6-layer", "cv_rf_n": "48", "cv_image": "shapes"}, view="rf")
    at.slider(key="cv_out_row").set_value(0).run()
    at.slider(key="cv_out_col").set_value(0).run()
    _ok(at)
    fig = chart_figure(at, "cv_rf_click")
    (img,) = [t for t in fig["data"] if t["type"] == "image"]
    expected = conv.square_image(conv.load_image("shapes", max_side=256), 48)
    np.testing.assert_array_equal(_png_pixels(img["source"]), figs.to_rgb8(expected, False))
    region = conv.input_region(conv.STACKS["strided 6-layer"], (0, 0), 48)
    assert region.lo[0] < 0                                     # this box reaches into the padding
    box = _shape(fig, "receptive field box")
    assert (box["y0"], box["y1"]) == (region.lo[0] - 0.5, region.hi[0] + 0.5)


def test_show_me_clicked_inside_the_view_fragment_opens_the_steps_view():
    """In the browser Show me sits in the open view's fragment, so its click reruns only that
    fragment; the page must still switch to the step's tab (follows_the_tour)."""
    from tests.apptest import _run
    from ui.page_keys import tour_key
    at = _open(view="equi")
    at.session_state[tour_key(SLUG)] = 0                       # step 1 opens "Sliding window"
    at.run()
    at.button(key=f"{tour_key(SLUG)}__show").click()
    _run(at, at._tree.get_widget_states(), fragment=True, key=None)
    _ok(at)
    assert at.session_state[view_key(SLUG)] == TITLES["slide"]
    assert at.slider(key="cv_pos").value == 0                  # the sliding window is drawn
    assert any("Σ products" in c.value for c in at.caption)


def test_a_dilation_too_wide_for_the_small_input_still_slides_and_says_so():
    """A geometry set on the Convolution tab left Sliding window as an error, no figure."""
    at = open_page("topics/convolution/page.py", {"cv_dilation": "6"})
    open_view(at, "convolution", "Sliding window")
    assert not at.error and not at.exception
    assert any("spans 13 px" in i.value and "the dilation is" in i.value for i in at.info)
    assert at.get("plotly_chart")


def test_a_shift_by_the_image_size_says_it_wraps_to_no_shift():
    """'Shift right 8' on an 8 px digit wrapped to no shift and read 'change 0.00'."""
    from topics.convolution.compute import wrap_note
    assert wrap_note((8, 8), 0, 8).endswith("every change is 0.")
    assert "right 9 px on 8 px is 1 px" in wrap_note((8, 8), 0, 9)
    assert wrap_note((8, 8), 1, -1) is None and wrap_note((8, 8), 1, 3) is None
    assert wrap_note((8, 8), -8, 0).endswith("every change is 0.")


def test_a_stale_browser_message_after_show_me_does_not_close_the_asked_tab():
    """The browser sends every widget value with each message: one sent before it learnt of
    the tab Show me opened still names the old tab, in its URL and its widget values
    (ui.page_keys.hold_asked_view). AppTest does not send the tabs' value: the stale message
    is written as the browser's would arrive, into the URL and the session."""
    from tests.apptest import _run
    from ui.page_keys import tour_key
    at = _open(view="equi")
    at.session_state[tour_key(SLUG)] = 0                       # step 1 opens "Sliding window"
    at.run()
    at.button(key=f"{tour_key(SLUG)}__show").click()
    _run(at, at._tree.get_widget_states(), fragment=True, key=None)
    assert at.session_state[view_key(SLUG)] == TITLES["slide"]
    at.query_params[view_key(SLUG)] = TITLES["equi"]           # e.g. a viewport report
    at.session_state[view_key(SLUG)] = TITLES["equi"]
    at.run()
    _ok(at)
    assert at.session_state[view_key(SLUG)] == TITLES["slide"]
    assert at.slider(key="cv_pos").value == 0                  # the sliding window is drawn


def test_show_me_pressed_while_the_next_step_is_drawn_shows_that_step():
    """In the browser "Next" then a quick "Show me" can click the button the run before drew
    (its callback registered with that run's arguments) while the next step's card is being
    drawn: it must apply the step the tour is at, not the one before (step 2 = Sobel x on a
    photo, step 3 = stride 2 on the checkerboard)."""
    from ui.page_keys import tour_key
    at = _open()
    at.session_state[tour_key(SLUG)] = 1
    at.run()
    at.session_state[tour_key(SLUG)] = 2           # "Next" arrived; its rerun not drawn yet
    at.button(key=f"{tour_key(SLUG)}__show").click().run()
    _ok(at)
    assert at.session_state["cv_image"] == "checkerboard"
    assert at.session_state["cv_kernel"] == "laplacian" and at.session_state["cv_stride"] == 2


def test_an_arrow_pressed_while_the_next_step_is_drawn_moves_on_from_that_step():
    """The tour's arrows count from the step the tour is at when the click arrives: a second
    "Next" that reaches the callback of the run before still moves one step further."""
    from ui.page_keys import tour_key
    at = _open()
    at.session_state[tour_key(SLUG)] = 1
    at.run()
    at.session_state[tour_key(SLUG)] = 2           # the first "Next" arrived
    at.button(key=f"{tour_key(SLUG)}__next").click().run()
    _ok(at)
    assert at.session_state[tour_key(SLUG)] == 3
    at.button(key=f"{tour_key(SLUG)}__prev").click().run()
    assert at.session_state[tour_key(SLUG)] == 2
