"""Progress for work that takes more than a couple of seconds: a bar with steps done / total.

    with progress("Training nets for the sweep", unit="nets") as report:
        for i, piece in enumerate(pieces):
            parts.append(cached_piece(piece))            # st.cache_data per piece
            report(i + 1, len(pieces))

Report between cached calls, never from inside one: st.cache_data records the elements a
cached function draws and replays them, which fails for a bar drawn in an outer block. The bar
appears once the work has taken `delay_s` and is removed when the block ends, so pieces read
back from the cache send nothing. `chunked_steps` splits a long "train to N" into
chunks with a bar and a Cancel button between them: Streamlit stops a running script when a
widget changes, and the Cancel callback forgets the target, so the trainer keeps the steps it
has done and nothing else runs."""
from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterator

import streamlit as st

Report = Callable[[int, int], None]


def progress_text(label: str, done: int, total: int, unit: str) -> str:
    return f"{label}: {done:,} of {total:,} {unit}"


@contextlib.contextmanager
def progress(label: str, unit: str = "steps", delay_s: float = 0.3,
             below: Callable[[], None] | None = None) -> Iterator[Report]:
    """report(done, total) draws the bar once `delay_s` has passed since the block began, so
    work read back from a cache (done in milliseconds) sends nothing to the browser. `below()`
    draws elements under the bar (a Cancel button) that leave with it."""
    holder = st.empty()
    with holder.container():
        slot = st.empty()
        if below is not None:
            below()
    start = time.perf_counter()

    def report(done: int, total: int) -> None:
        if time.perf_counter() - start < delay_s and done < total:
            return
        total = max(int(total), 1)
        slot.progress(min(max(done / total, 0.0), 1.0),
                      text=progress_text(label, int(done), total, unit))
    try:
        yield report
    finally:
        holder.empty()


def chunk_targets(start: int, target: int, chunks: int = 20) -> list[int]:
    """Intermediate targets from `start` (exclusive) to `target` (inclusive), about `chunks` of
    them, each at least one step further: [start + c, start + 2c, ..., target]."""
    if target <= start:
        return []
    size = max(1, -(-(target - start) // max(1, chunks)))
    return list(range(start + size, target, size)) + [target]


def _pending_key(key: str) -> str:
    return f"{key}__pending_target"


def request_target(key: str, target: int) -> None:
    """Button callback: ask for `target` steps; `chunked_steps` does the work in the script."""
    st.session_state[_pending_key(key)] = int(target)


def cancel_target(key: str) -> None:
    st.session_state.pop(_pending_key(key), None)


def chunked_steps(key: str, label: str, steps_of: Callable[[], int | None],
                  advance_to: Callable[[int], None], chunks: int = 20) -> bool:
    """Run the target a button asked for (request_target) in chunks, with a bar of steps done /
    total and a Cancel button; `steps_of()` is the trainer's step count (None: no trainer yet,
    the target waits), `advance_to(t)` trains up to step t. Returns True when it ran."""
    target = st.session_state.get(_pending_key(key))
    if target is None:
        return False
    start = steps_of()
    if start is None:
        return False
    def cancel_button() -> None:
        st.button("Cancel", key=f"{key}__cancel", on_click=cancel_target, args=(key,),
                  icon=":material/cancel:")
    with progress(label, unit="iterations", below=cancel_button) as report:
        report(0, target - start)
        for t in chunk_targets(start, target, chunks):
            advance_to(t)
            done = steps_of()
            report((done if done is not None else t) - start, target - start)
            if done is not None and done < t:       # stopped early (diverged): nothing more to do
                break
    cancel_target(key)
    return True
