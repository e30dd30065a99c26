"""Auto-play of one index (a sliding-window position, a replay snapshot) by an
@st.fragment(run_every=1/speed) whose every tick shows the next index.

The index lives in its own session key (`at`), not in the slider that edits it while paused:
the browser sends its timer ticks whether or not the last run has answered, so a tick can carry
a stale slider value (pages swap the slider for a progress bar while playing). The run that
Play itself triggers shows the current index (`hold`); the next tick advances. Used by the
convolution page (sliding window) and the VAE page (latent-space replay)."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx


@dataclass(frozen=True)
class Autoplay:
    at: str        # session key of the index shown
    playing: str   # session key: auto-play on
    hold: str      # session key: skip the next advance (the run a click triggered)

    def is_playing(self) -> bool:
        return bool(st.session_state.get(self.playing, False))

    def set(self, playing: bool, last: int) -> None:
        """Play (True) or Pause (False). Play at the last index starts again from 0."""
        if playing == self.is_playing():
            return
        st.session_state[self.playing] = playing
        if playing:
            st.session_state[self.hold] = True
            if st.session_state.get(self.at, 0) >= last:
                st.session_state[self.at] = 0

    def toggle(self, last: int) -> None:
        """Play <-> Pause."""
        self.set(not self.is_playing(), last)

    def press(self, playing: bool, last: int) -> None:
        """The button's callback: the state its label promised ("Pause" -> paused), not a
        toggle (a replayed click must not flip it back). The whole page then
        reruns (button()): the button sits inside the page skeleton's view fragment, and a
        fragment-only rerun left the player's run_every timer ticking after Pause (the page
        never settled and the server reran the player forever); a full rerun redraws the
        player without it. That rerun is asked from the script, not from this callback:
        st.rerun() inside a click's callback let Streamlit replay the click's trigger in a
        later coalesced run (seen in Chromium once reruns got faster: a Play click replayed
        after a Pause, and the replay played on)."""
        self.set(playing, last)
        st.session_state[self._pressed] = True

    @property
    def _pressed(self) -> str:
        return f"{self.playing}__pressed"

    def button(self, container, key: str, last: int, disabled: bool = False) -> bool:
        """The Play/Pause button; returns whether auto-play is on."""
        if st.session_state.pop(self._pressed, False):
            ctx = get_script_run_ctx()
            if ctx is not None and getattr(ctx, "fragment_ids_this_run", None):
                st.rerun(scope="app")                  # see press()
        playing = self.is_playing() and not disabled
        container.button("Pause" if playing else "Play", key=key,
                         on_click=self.press,
                         args=(not playing, last), icon=":material/pause:" if playing else
                         ":material/play_arrow:", type="primary", width="stretch",
                         disabled=disabled)
        return playing
