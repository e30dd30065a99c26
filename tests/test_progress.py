"""ui/progress.py: chunk targets cover the work exactly; the bar reports done / total and
leaves nothing behind; a requested target is trained in chunks and then forgotten; Cancel
forgets it."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.progress import chunk_targets, progress_text


def test_chunk_targets_end_at_the_target_in_increasing_steps():
    for start, target, chunks in [(0, 1000, 20), (37, 1000, 20), (0, 7, 20), (990, 1000, 3)]:
        ts = chunk_targets(start, target, chunks)
        assert ts[-1] == target and ts == sorted(set(ts)) and ts[0] > start
        assert len(ts) <= chunks + 1
    assert chunk_targets(1000, 1000) == [] and chunk_targets(1200, 1000) == []


def test_progress_text_says_done_of_total():
    assert progress_text("Training", 250, 1000, "iterations") == "Training: 250 of 1,000 iterations"


def _script():
    import streamlit as st
    from ui.progress import chunked_steps, progress, request_target

    st.session_state.setdefault("steps", 0)
    st.session_state.setdefault("seen", [])
    st.button("Go", key="go", on_click=request_target, args=("t", 100))

    def advance(t):
        st.session_state["seen"].append(t)
        st.session_state["steps"] = t

    ran = chunked_steps("t", "Training", lambda: st.session_state["steps"], advance, chunks=4)
    st.write(f"ran={ran} steps={st.session_state['steps']}")
    with progress("Sweep", unit="runs") as report:
        for i in range(3):
            report(i + 1, 3)


def test_a_requested_target_is_trained_in_chunks_then_forgotten():
    at = AppTest.from_function(_script).run()
    assert "ran=False steps=0" in at.markdown[0].value
    at.button(key="go").click().run()
    assert not at.exception
    assert at.session_state["seen"] == [25, 50, 75, 100]
    assert "ran=True steps=100" in at.markdown[0].value
    assert "t__pending_target" not in at.session_state
    assert len(at.get("progress")) == 0           # the bars are gone once the work is done
    at.run()
    assert "ran=False steps=100" in at.markdown[0].value


def _stalling_script():
    import streamlit as st
    from ui.progress import chunked_steps, request_target

    st.session_state.setdefault("steps", 0)
    st.button("Go", key="go", on_click=request_target, args=("t", 100))

    def advance(t):                        # a run that stops at 50 (e.g. diverged)
        st.session_state["steps"] = min(t, 50)

    chunked_steps("t", "Training", lambda: st.session_state["steps"], advance, chunks=4)


def test_a_stalled_run_stops_and_leaves_no_cancel_behind():
    at = AppTest.from_function(_stalling_script).run()
    assert [b.key for b in at.button] == ["go"]
    at.button(key="go").click().run()
    assert not at.exception
    assert at.session_state["steps"] == 50
    assert "t__pending_target" not in at.session_state
    assert [b.key for b in at.button] == ["go"]           # Cancel leaves with the bar


def test_cancel_forgets_the_target(monkeypatch):
    import ui.progress as P
    state: dict = {}
    monkeypatch.setattr(P.st, "session_state", state)
    P.request_target("t", 10)
    assert state == {"t__pending_target": 10}
    P.cancel_target("t")
    assert state == {}


def test_lr_sweep_one_rate_at_a_time_equals_one_sweep():
    """The page's sweep (one cached learning rate at a time, to report progress) equals the
    engine's sweep over every rate, on a small net."""
    import numpy as np
    from engine.signal import training as T
    lrs, kw = (0.1, 3.0), dict(depth=2, width=8, steps=5, seed=1)
    whole = T.lr_sweep(lrs=lrs, **kw)
    cols = [T.lr_sweep(lrs=(lr,), **kw) for lr in lrs]
    pieces = T.sweep_from_losses(lrs, cols[0].labels,
                                 np.concatenate([c.final_loss for c in cols], axis=1), 5)
    np.testing.assert_allclose(pieces.final_loss, whole.final_loss, rtol=1e-6)
    assert (pieces.trains == whole.trains).all()
    np.testing.assert_array_equal(pieces.max_stable_lr, whole.max_stable_lr)


def test_robustness_points_equal_one_call_over_every_eps():
    """The page's curves, one cached (network, attack, ε) point at a time, equal the engine's
    one call over every ε."""
    from engine import adversarial as adv
    from topics.adversarial import compute as C
    d = C.heldout_digits()
    for kind in ("FGSM", "PGD"):
        spec = C._curve_spec(kind, 3, 2)
        ref = adv.robust_accuracy(C.model_of("robust", "cpu"), d.images, d.labels,
                                  [0.05, 0.1], spec)
        ours = [C._curve_point("robust", kind, 3, 2, "cpu", eps) for eps in (0.05, 0.1)]
        assert max(abs(a - b) for a, b in zip(ours, ref.accuracy)) <= 1.0 / ref.n
