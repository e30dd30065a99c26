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


@dataclass(frozen=True)
class Autoplay:
    at: str        # session key of the index shown
    playing: str   # session key: auto-play on
    hold: str      # session key: skip the next advance (the run a click triggered)

    def is_playing(self) -> bool:
        return bool(st.session_state.get(self.playing, False))

    def toggle(self, last: int) -> None:
        """Play <-> Pause. Play at the last index starts again from 0."""
        playing = not self.is_playing()
        st.session_state[self.playing] = playing
        if playing:
            st.session_state[self.hold] = True
            if st.session_state.get(self.at, 0) >= last:
                st.session_state[self.at] = 0

    def toggle_everywhere(self, last: int) -> None:
        """toggle, then a rerun of the whole page. The button sits inside the page
        skeleton's view fragment: a fragment-only rerun left the player's run_every timer
        ticking after Pause (the page never settled and the server reran the player forever);
        a full rerun redraws the player without it. (A callback that calls toggle() itself
        should end the same way.)"""
        self.toggle(last)
        st.rerun(scope="app")

    def button(self, container, key: str, last: int, disabled: bool = False) -> bool:
        """The Play/Pause button; returns whether auto-play is on."""
        playing = self.is_playing() and not disabled
        container.button("Pause" if playing else "Play", key=key,
                         on_click=self.toggle_everywhere,
                         args=(last,), icon=":material/pause:" if playing else
                         ":material/play_arrow:", type="primary", width="stretch",
                         disabled=disabled)
        return playing
