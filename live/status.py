"""The line over a live frame: the iteration, the training speed, a worker's restart, the
class batch it trained in; and the divergence warning."""
from __future__ import annotations

import streamlit as st

from engine.training import TickResult
from live.handle import TrainerView


def status_text(trainer: TrainerView, tick: TickResult | None,
                target: int | None = None) -> str:
    """The line over a live frame: "Iteration **N** · R it/s this frame" (while a lesson slide
    trains to T: "Training to T: **N** / T · ..."), and for a minute
    after a worker died "· The training worker restarted; resumed from iteration M.", and
    "· trained in one batch with K other models" while a worker batches it (live.batching), or
    "· trained alone: <why>" while models of its kind play beside it unbatched."""
    text = f"Iteration **{trainer.steps:,}**" if target is None else \
        f"Training to {target:,}: **{trainer.steps:,}** / {target:,}"
    if tick is not None and tick.steps_done and tick.seconds > 0:
        text += f" · {tick.steps_done / tick.seconds:,.0f} it/s this frame"
    if getattr(trainer, "notice", None):      # its worker died: resumed from a checkpoint
        text += f" · {trainer.notice}"
    others = getattr(trainer, "batched_with", 0)
    if others:                                # a worker stepped it with classmates' models
        text += f" · trained in one batch with {others} other {_plural(others, 'model')}"
    elif getattr(trainer, "alone_because", None):
        text += f" · trained alone: {trainer.alone_because}"
    return text


def _plural(n: int, word: str) -> str:
    return word if n == 1 else f"{word}s"


def status_line(trainer: TrainerView, tick: TickResult | None,
                 target: int | None = None) -> None:
    st.caption(status_text(trainer, tick, target))
    if trainer.diverged_at is not None:
        st.warning(f"Training diverged at iteration {trainer.diverged_at} (a value became "
                   f"infinite or NaN). Lower the learning rate and press Reset.",
                   icon=":material/warning:")
