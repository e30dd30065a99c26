"""The convolution page through AppTest: every tab and preset, widgets that change the
numbers shown, uploads (good and bad), bad URL values."""
import io

import numpy as np
from PIL import Image

from engine import conv
from tests.apptest import metric, open_page

PAGE = "topic_pages/convolution.py"


def _open(query=None, tab=None):
    q = dict(query or {})
    if tab:
        q["cv_tab"] = tab
    return open_page(PAGE, q)




def _ok(at):
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def _png(h, w):
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (h, w, 3), dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def test_convolution_tab_numbers_follow_the_widgets():
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
    frames = conv.conv_animation_frames(conv.downscale(conv.load_image("china (photo)", max_side=256), 8),
                                        conv.KERNELS["gaussian blur"], 2, 1, 1)
    at.slider(key="cv_pos").set_value(3).run()
    assert any(f"**{frames.sums[3]:.4f}**" in c.value for c in at.caption)
    # a kernel that cannot fit: a message, not a traceback
    at.select_slider(key="cv_size").set_value(32).run()
    at.slider(key="cv_padding").set_value(0).run()
    at.slider(key="cv_dilation").set_value(6).run()
    at.slider(key="cv_anim_n").set_value(5).run()
    assert not at.exception and any("Could not show the sliding window" in e.value for e in at.error)


def test_every_preset_and_tab_runs():
    at = _open()
    names = list(at.selectbox(key="cv_preset").options)
    assert len(names) >= 8
    seen_tabs = set()
    for name in names:
        at.selectbox(key="cv_preset").select(name).run()
        _ok(at)
        seen_tabs.add(at.session_state["cv_tab"])
        assert at.metric, name                       # each preset shows its numbers
    assert seen_tabs == {"Convolution", "Receptive field", "Feature maps", "Equivariance"}


def test_receptive_field_tab():
    at = _open({"cv_stack": "three 3x3"}, tab="Receptive field")
    _ok(at)
    assert metric(at, "Receptive field r") == "7 × 7"
    assert metric(at, "Conv weights (c = 64)") == f"{27 * 64 * 64:,}"
    at.selectbox(key="cv_stack").select("one 7x7").run()
    _ok(at)
    assert metric(at, "Receptive field r") == "7 × 7"
    assert metric(at, "Conv weights (c = 64)") == f"{49 * 64 * 64:,}"
    at.selectbox(key="cv_stack").select("dilated 1-2-4-8 (WaveNet, k=2)").run()
    assert metric(at, "Receptive field r") == "16 × 16"
    # choosing an output moves the highlighted input rows (caption) and the ERF
    at.selectbox(key="cv_stack").select("VGG block").run()
    at.slider(key="cv_out_row").set_value(0).run()
    reg = conv.input_region(conv.STACKS["VGG block"], (0, at.slider(key="cv_out_col").value), 32)
    assert any(f"sees input rows {reg.clip_lo[0]}–{reg.clip_hi[0]}" in c.value for c in at.caption)
    radius = metric(at, "2σ radius of the effective field")
    at.radio(key="cv_erf_init").set_value("uniform weights, linear").run()
    _ok(at)
    assert metric(at, "2σ radius of the effective field") != radius


def test_bad_url_values_fall_back():
    at = _open({"cv_stride": "99", "cv_out_row": "999", "cv_kernel": "nonsense", "cv_tab": "nope"})
    _ok(at)
    assert at.slider(key="cv_stride").value == 1
    at = _open({"cv_out_row": "999", "cv_stack": "VGG block"}, tab="Receptive field")
    _ok(at)
    assert at.slider(key="cv_out_row").value <= 7


def test_feature_maps_and_equivariance_tabs():
    at = _open(tab="Feature maps")
    _ok(at)
    model = conv.load_digits_cnn()
    digits = conv.load_digits()
    _, probs = conv.feature_maps(model, digits.images[5])
    at.number_input(key="cv_digit").set_value(5).run()
    _ok(at)
    assert metric(at, "Label / prediction") == f"{digits.labels[5]} / {int(probs.argmax())}"
    at = _open({"cv_image": "shapes"}, tab="Equivariance")
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
    at.session_state["cv_tab"] = "Equivariance"
    at.run()
    assert not at.exception
    assert any("odd-sized kernel" in e.value for e in at.error)    # message, not a traceback
