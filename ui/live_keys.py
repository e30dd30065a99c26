"""Every session-state key of one live panel (live.controls.live_training(key, ...)), in one
object: the live runtime, the frame route and the lesson player read and write a panel's
state only through these names, never through spelled-out "<key>__..." strings.

    k = live_keys("gan")
    st.session_state[k.playing] = False          # "gan__playing"
"""
from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class LiveKeys:
    key: str

    def _(self, name: str) -> str:
        return f"{self.key}__{name}"

    # the trainer and what the page last drew
    @property
    def handle(self) -> str: return self._("handle")             # live.handle.TrainerHandle
    @property
    def trainer(self) -> str: return self._("trainer")           # the trainer (inline mode)
    @property
    def config(self) -> str: return self._("config")             # the config it was built with
    @property
    def view(self) -> str: return self._("view")                 # the last TrainerView drawn
    # what the buttons asked
    @property
    def playing(self) -> str: return self._("playing")
    @property
    def pending_step(self) -> str: return self._("pending_step")
    # widgets (their Streamlit keys)
    @property
    def play(self) -> str: return self._("play")
    @property
    def step(self) -> str: return self._("step")
    @property
    def reset(self) -> str: return self._("reset")
    @property
    def spf(self) -> str: return self._("spf")
    @property
    def spf_kept(self) -> str: return self._("spf_kept")     # survives the tab being closed
    # frames pushed through the frame route (live/push.py)
    @property
    def push_source(self) -> str: return self._("push_source")
    @property
    def push_off(self) -> str: return self._("push_off")     # reruns for good (undrawable part)
    @property
    def pushes(self) -> str: return self._("pushes")         # its parts are canvas-drawable
    @property
    def push_id(self) -> str: return self._("push_id")
    @property
    def push_token(self) -> str: return self._("push_token")
    # set by the lesson player: replace the trainer on the next draw; a slide's `train = N`
    # (Play stops by itself at N, then train_reached notes N so Reset asks for N again)
    @property
    def reset_asked(self) -> str: return self._("reset_asked")
    @property
    def train_to(self) -> str: return self._("train_to")
    @property
    def train_reached(self) -> str: return self._("train_reached")
    # set by the card beside the figure: the iterations its claims read on this run
    # (ui.claims.OnRun.at); a frame that passes one redraws the page, so the card shows the
    # value; `claim_seen`: the iteration of the frame before
    @property
    def claim_marks(self) -> str: return self._("claim_marks")
    @property
    def claim_seen(self) -> str: return self._("claim_seen")


@functools.lru_cache(maxsize=256)
def live_keys(key: str) -> LiveKeys:
    return LiveKeys(key)
