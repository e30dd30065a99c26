"""The inside of one training worker process (live/workers.py starts it): many trainers,
the playing ones trained round-robin in chunks of ~CHUNK_S seconds, views published.

Wire protocol on one duplex pipe, each message a cloudpickled tuple (send_bytes/recv_bytes):

    web -> worker   ("create", tid, seq, factory)       factory() builds the trainer here (bytes)
                    ("cmd", tid, seq, name, arg)        name: play | pause | pace | close
                    ("step", tid, seq, n)               exactly n iterations, then a reply
                    ("read", tid, seq, fn)              fn(trainer) -> plain data (fn: bytes)
                    ("stop",)                           the worker exits
    worker -> web   ("view", tid, seq, view)            a pickled TrainerView; seq: last command
                    ("checkpoint", tid, steps, trainer) the whole trainer pickled (bytes)
                    ("reply", tid, seq, ok, payload)    payload: the result, or the error text
                    ("seen", tid, seq)                  a read done that changed no steps
                    ("ready", pid)                      once, after the imports

Fair sharing: each turn trains ONE chunk of the next playing trainer (round-robin), sized by
its measured seconds per iteration so a chunk costs ~chunk_s (engine.training.run_for), so
k playing trainers each get ~1/k of the worker. A trainer's pace is a token bucket:
tokens += rate * dt (at most one second's worth), a chunk spends them, so "steps per frame"
keeps meaning the same speed as in the inline mode (rate = steps per frame / frame interval)
while training goes on between frames. Commands are read between chunks: Pause lands within
one chunk. Playing trainers that live.batching can step as one (same page, architecture and
settings: GANs of a class) share a turn: they are stepped together, each masked out once its
own tokens are spent, for up to BATCH_CHUNKS chunks, and written back to their own trainers
(views, checkpoints and commands see ordinary trainers). A batch is kept from turn to turn
while its members stay the same and no message touched any of them (a GPU batch keeps its
captured CUDA graph that way); otherwise it is built again from the members' trainers.

Views are published when a command was done (at once, with a fresh snapshot) and
while training every publish_s seconds, with the history decimated
(live.handle.decimate_history). A view while training takes a fresh snapshot only every
10x the snapshot's cost (so snapshots take <= ~10% of a worker) and otherwise carries the last
one: a trainer whose snapshot is costly (the adversarial page's robustness curve, ~1 s) still
shows its iteration count and loss history moving several times a second.

Checkpoints: a trainer that trained since its last checkpoint is pickled whole (weights,
optimizer state, history) every CHECKPOINT_S seconds, or every CHECKPOINT_SHARE x its pickling
cost when that is longer (<= ~5% of the worker), and sent to the web process, which keeps the
last one and resumes the trainer from it on a new worker if this one dies (live/workers.py).
"""
from __future__ import annotations

if __name__ == "__main__":       # a worker ends with the web process that started it, even
    from live.parent_watch import exit_with_parent      # while the imports below still run
    exit_with_parent()

import dataclasses
import gc
import math
import os
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import cloudpickle

from live import batching
from live.handle import CHUNK_S, TrainerView
from engine.training import run_for, tell_playing

PUBLISH_S = 0.15
NICE = 5                 # DLPLAY_WORKER_NICE: training yields CPU to the web process (0: off)
CHECKPOINT_S = float(os.environ.get("DLPLAY_CHECKPOINT_S", "") or 3.0)   # a playing trainer's
#                          checkpoint is at most this old when its worker dies
CHECKPOINT_SHARE = 20.0  # ... or 20 x its pickling cost when longer (<= ~5% of the worker)
SNAPSHOT_SHARE = 10.0    # publish at most every 10 x the snapshot's cost (GAN: ~18 ms -> 0.18 s)
BATCH_CHUNKS = 4         # a batch's turn lasts up to min(members, 4) chunks: it serves them all


@dataclass
class Slot:
    """One hosted trainer and its schedule."""
    trainer: Any = None
    error: str | None = None
    playing: bool = False
    rate: float = math.inf          # iterations per second while playing
    cap: int | None = None          # stop playing at this many iterations
    tokens: float = 0.0
    refilled: float = field(default_factory=time.perf_counter)
    sec_per_step: float = math.nan
    seq: int = 0                    # the last command done
    published: float = 0.0
    dirty: bool = True
    snap_s: float = 0.0             # what its last snapshot cost, seconds
    snapped: float = 0.0            # when that snapshot was taken (perf_counter)
    snap: Any = None                # and what it was
    ckpt_steps: int = 0             # iterations of the last checkpoint sent (0: the factory's)
    ckpt_at: float = field(default_factory=time.perf_counter)
    ckpt_s: float = 0.0             # what pickling it cost (inf: it cannot be pickled)
    batch_key: Any = None           # live.batching.key_of(trainer); None: stepped alone
    batched_with: int = 0           # how many others its last turn was shared with
    alone_because: str | None = None   # why it trained alone beside models of its kind
    version: int = 0                # counts the messages that may have changed the trainer

    def checkpoint_due(self, now: float) -> bool:
        steps = getattr(self.trainer, "steps", 0)
        return self.trainer is not None and steps != self.ckpt_steps and \
            now - self.ckpt_at >= max(CHECKPOINT_S, CHECKPOINT_SHARE * self.ckpt_s)

    def snapshot_due(self, now: float) -> bool:
        """A fresh snapshot at most every SNAPSHOT_SHARE x its cost: <= ~10% of the worker."""
        return now - self.snapped >= SNAPSHOT_SHARE * self.snap_s


class Worker:
    def __init__(self, conn, chunk_s: float = CHUNK_S, publish_s: float = PUBLISH_S,
                 batch: bool | None = None):
        self.conn, self.chunk_s, self.publish_s = conn, float(chunk_s), float(publish_s)
        self.slots: dict[int, Slot] = {}
        self.turn: deque[int] = deque()
        self.running = True
        self.batch = batching.enabled() if batch is None else bool(batch)
        self.batch_s_per_step: dict[Any, float] = {}    # batch key -> seconds per iteration
        self.batched_turns = 0                         # turns that stepped a batch
        self.batches: dict[Any, tuple[tuple, Any]] = {}    # key -> ((tid, version)..., batch)
        self.batches_built = 0

    # ---- messages ----------------------------------------------------------------------
    def send(self, *msg: Any) -> None:
        self.conn.send_bytes(cloudpickle.dumps(msg))

    def publish(self, tid: int, slot: Slot, fresh: bool = True) -> None:
        """Send the trainer's view; `fresh=False` (a view while training) reuses the last
        snapshot unless a new one is due (Slot.snapshot_due)."""
        if slot.error is not None or slot.trainer is None:
            view = TrainerView.failed(slot.error or "The trainer is not built yet.")
        else:
            t0 = time.perf_counter()
            try:
                if fresh or slot.snap is None or slot.snapshot_due(t0):
                    slot.snap = slot.trainer.snapshot()
                    slot.snapped, slot.snap_s = t0, time.perf_counter() - t0
                view = TrainerView.of(slot.trainer, snapshot=slot.snap)
                if slot.batched_with or slot.alone_because:
                    view = dataclasses.replace(view, batched_with=slot.batched_with,
                                               alone_because=slot.alone_because)
            except Exception as exc:  # noqa: BLE001 - a broken snapshot is the page's message
                view = TrainerView.failed(f"The trainer's snapshot failed: {exc}",
                                          int(getattr(slot.trainer, "steps", 0)))
        try:
            data = cloudpickle.dumps(view)
        except Exception as exc:  # noqa: BLE001 - e.g. a snapshot that cannot be pickled
            data = cloudpickle.dumps(
                TrainerView.failed(f"The trainer's view could not be sent: {exc}"))
        self.send("view", tid, slot.seq, data)     # bytes: the web side unpickles on demand
        slot.published, slot.dirty = time.perf_counter(), False

    def checkpoint(self, tid: int, slot: Slot) -> None:
        """Send the whole trainer pickled; one that cannot be pickled is not tried again."""
        t0 = time.perf_counter()
        slot.ckpt_at, slot.ckpt_steps = t0, int(slot.trainer.steps)
        try:
            data = cloudpickle.dumps(slot.trainer)
        except Exception:  # noqa: BLE001 - no checkpoint: a worker death restarts it at 0
            slot.ckpt_s = math.inf
            return
        slot.ckpt_s = time.perf_counter() - t0
        self.send("checkpoint", tid, slot.ckpt_steps, data)

    def handle(self, msg: tuple) -> None:
        kind = msg[0]
        if kind == "stop":
            self.running = False
            return
        tid, seq = msg[1], msg[2]
        if kind == "create":
            slot = Slot(seq=seq)
            try:
                slot.trainer = cloudpickle.loads(msg[3])()
                slot.ckpt_steps = int(getattr(slot.trainer, "steps", 0))
            except Exception as exc:  # noqa: BLE001 - bad settings: a message, not a crash
                slot.error = f"Building the trainer failed: {type(exc).__name__}: {exc}"
            slot.batch_key = self._batch_key(slot.trainer)
            self.slots[tid] = slot
            self.turn.append(tid)
            self.publish(tid, slot)
            return
        slot = self.slots.get(tid)
        if slot is None:
            if kind in ("step", "read"):
                self.send("reply", tid, seq, False, "This trainer was released; press Reset.")
            return
        slot.seq = seq
        if not (kind == "cmd" and msg[3] == "pace"):    # a pace changes no trainer
            slot.version += 1
        steps = getattr(slot.trainer, "steps", None)
        if kind == "cmd":
            self.command(tid, slot, msg[3], msg[4])
        elif kind in ("step", "read"):
            self.request(tid, slot, kind, msg[3])
        if tid not in self.slots:
            return
        if not slot.playing and slot.trainer is not None and \
                slot.trainer.steps != slot.ckpt_steps and slot.ckpt_s < math.inf:
            self.checkpoint(tid, slot)        # Pause or Step: the state a worker death keeps
        if kind == "read" and getattr(slot.trainer, "steps", None) == steps:
            self.send("seen", tid, seq)       # a read that trained nothing: no new picture
        else:
            self.publish(tid, slot)

    def command(self, tid: int, slot: Slot, name: str, arg: Any) -> None:
        if name == "play":
            slot.playing = slot.trainer is not None and slot.trainer.diverged_at is None
            tell_playing(slot.trainer, slot.playing)
            slot.refilled, slot.tokens = time.perf_counter(), 0.0
        elif name == "pause":
            slot.playing = False
            tell_playing(slot.trainer, False)
        elif name == "pace":
            slot.rate, slot.cap = float(arg[0]), arg[1]
        elif name == "close":
            self.batches = {k: v for k, v in self.batches.items()
                            if tid not in dict(v[0])}   # no kept batch holds its trainer
            del self.slots[tid]
            self.turn.remove(tid)
            slot.trainer = None
            gc.collect()

    def request(self, tid: int, slot: Slot, kind: str, arg: Any) -> None:
        if slot.trainer is None:
            self.send("reply", tid, slot.seq, False, slot.error or "No trainer.")
            return
        try:
            if kind == "step":
                result = self.train(slot, int(arg), math.inf)
            else:
                result = cloudpickle.loads(arg)(slot.trainer)
            payload = cloudpickle.dumps(result)
        except Exception as exc:  # noqa: BLE001 - the caller gets the error text
            self.send("reply", tid, slot.seq, False,
                      f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}")
            return
        self.send("reply", tid, slot.seq, True, payload)

    # ---- training ----------------------------------------------------------------------
    def train(self, slot: Slot, n: int, budget_s: float):
        first = 1 if math.isnan(slot.sec_per_step) else \
            max(1, int(self.chunk_s / max(slot.sec_per_step, 1e-6)))
        tick = run_for(slot.trainer, n, budget_s, chunk=first, chunk_s=self.chunk_s)
        if tick.steps_done:
            slot.sec_per_step = tick.seconds / tick.steps_done
            slot.dirty = True
        return tick

    def runnable(self, slot: Slot, now: float) -> bool:
        if not slot.playing:
            return False
        if math.isinf(slot.rate):
            slot.tokens = math.inf
        else:
            slot.tokens = min(max(slot.rate, 1.0),
                              slot.tokens + slot.rate * (now - slot.refilled))
        slot.refilled = now
        return slot.tokens >= 1.0

    def _batch_key(self, trainer: Any) -> Any:
        if not self.batch or trainer is None:
            return None
        try:
            return batching.key_of(trainer)
        except Exception:  # noqa: BLE001 - a trainer the batcher cannot read trains alone
            return None

    @staticmethod
    def allowance(slot: Slot) -> int:
        """Iterations the slot may train now: its tokens, up to its cap."""
        n = slot.tokens if math.isfinite(slot.tokens) else 10 ** 9
        if slot.cap is not None:
            n = min(n, slot.cap - slot.trainer.steps)
        return int(n)

    def one_turn(self) -> bool:
        """Train one chunk of the next runnable trainer, together with every runnable trainer
        of the same batch key; False when none could train."""
        now = time.perf_counter()
        for _ in range(len(self.turn)):
            tid = self.turn[0]
            self.turn.rotate(-1)
            slot = self.slots[tid]
            if not self.runnable(slot, now):
                continue
            mates = self.mates(tid, slot, now)
            if mates:
                try:
                    self.train_batch([(tid, slot), *mates])
                except Exception:  # noqa: BLE001 - a batch that fails: its members train alone
                    for _, s in ((tid, slot), *mates):
                        s.batch_key = None
                return True
            n = self.allowance(slot)
            if n >= 1:
                tick = self.train(slot, n, self.chunk_s)
                slot.tokens -= tick.steps_done
                slot.batched_with, slot.alone_because = 0, self.why_alone(tid, slot)
            self.after_training(tid, slot)
            return True
        return False

    def after_training(self, tid: int, slot: Slot) -> None:
        if slot.trainer.diverged_at is not None or \
                (slot.cap is not None and slot.trainer.steps >= slot.cap):
            slot.playing, slot.dirty = False, True
            tell_playing(slot.trainer, False)
            self.publish(tid, slot)

    def why_alone(self, tid: int, slot: Slot) -> str | None:
        """Why a trainer trained alone while models of its kind play beside it (None when
        none does, or batching is off)."""
        if not self.batch or not any(
                t != tid and s.playing and type(s.trainer) is type(slot.trainer)
                for t, s in self.slots.items()):
            return None
        if slot.batch_key is None:
            return batching.why_not(slot.trainer)
        return "the other models here differ in shape or settings"

    def mates(self, tid: int, slot: Slot, now: float) -> list[tuple[int, Slot]]:
        """The other playing slots with slot's batch key (none when it has no key, or when
        none of them may train now); those that may not are masked out of the turn."""
        if slot.batch_key is None or self.allowance(slot) < 1:
            return []
        mates = [(t, s) for t, s in self.slots.items()
                 if t != tid and s.batch_key == slot.batch_key and s.trainer is not None
                 and s.playing]
        ready = [self.runnable(s, now) and self.allowance(s) >= 1 for _, s in mates]
        return mates if any(ready) else []

    def batch_for(self, members: list[tuple[int, Slot]]) -> Any:
        """The kept batch of these members if none of them changed since, else a new one."""
        key = members[0][1].batch_key
        who = tuple(sorted((tid, s.version) for tid, s in members))
        kept = self.batches.get(key)
        if kept is not None and kept[0] == who:
            return kept[1]
        order = dict(members)
        batch = batching.batch_of([order[tid].trainer for tid, _ in who])
        self.batches[key] = (who, batch)
        self.batches_built += 1
        return batch

    def train_batch(self, members: list[tuple[int, Slot]]) -> None:
        """One turn for a batch: the members stepped as one (live.batching) for up to
        min(members, BATCH_CHUNKS) chunks, each member until its tokens or cap run out
        (it is masked out after that), then every member's state written back."""
        members = sorted(members, key=lambda m: m[0])      # the kept batch's row order
        slots = [s for _, s in members]
        key = slots[0].batch_key
        left = [max(0, self.allowance(s)) for s in slots]
        before = [s.trainer.steps for s in slots]
        batch = self.batch_for(members)
        t0 = time.perf_counter()
        budget = self.chunk_s * min(len(slots), BATCH_CHUNKS)
        per = self.batch_s_per_step.get(key, math.nan)
        try:
            while True:
                active = [n > 0 and s.trainer.diverged_at is None for n, s in zip(left, slots)]
                spent = time.perf_counter() - t0
                if not any(active) or spent >= budget:
                    break
                m = min(n for n, a in zip(left, active) if a)
                # the first batch of this key takes one iteration: it measures the cost
                m = 1 if math.isnan(per) else min(m, max(1, int((budget - spent) / per)))
                t = time.perf_counter()
                batch.step(m, active)
                per = (time.perf_counter() - t) / m
                left = [n - m if a else n for n, a in zip(left, active)]
        except Exception:
            self.batches.pop(key, None)        # built again (or not at all) next time
            raise
        finally:              # what the members reached goes back to them, even on a failure
            self.batch_s_per_step[key] = per
            for k, (tid, slot) in enumerate(members):
                batch.unstack(k)
                done = slot.trainer.steps - before[k]
                if done:
                    slot.tokens -= done
                    slot.dirty = True
                    slot.batched_with, slot.alone_because = len(members) - 1, None
                self.after_training(tid, slot)
        self.batched_turns += 1

    def wait_s(self) -> float:
        """How long the loop may block on the pipe: until a token or a publication is due."""
        due = self.publish_s
        for slot in self.slots.values():
            if slot.playing and math.isfinite(slot.rate) and slot.rate > 0:
                due = min(due, max(0.0, (1.0 - slot.tokens) / slot.rate))
        return max(0.002, due)

    def run(self) -> None:
        self.send("ready", _pid())
        while self.running:
            trained = self.one_turn()
            timeout = 0.0 if trained else self.wait_s()
            while self.running and self.conn.poll(timeout):
                self.handle(cloudpickle.loads(self.conn.recv_bytes()))
                timeout = 0.0
            now = time.perf_counter()
            for tid, slot in list(self.slots.items()):
                if slot.dirty and now - slot.published >= self.publish_s:
                    self.publish(tid, slot, fresh=False)
                if slot.checkpoint_due(now):
                    self.checkpoint(tid, slot)


def _pid() -> int:
    import os
    return os.getpid()


def worker_nice(env: dict | None = None) -> int:
    """The nice value a worker adds to its own (DLPLAY_WORKER_NICE, default NICE; 0..19)."""
    raw = (os.environ if env is None else env).get("DLPLAY_WORKER_NICE", "")
    try:
        return min(19, max(0, int(raw))) if raw.strip() else NICE
    except ValueError:
        return NICE


def lower_priority(env: dict | None = None) -> int:
    """Training is batch work beside an interactive server: a worker runs at a lower CPU
    priority (Linux CFS weight ~1.25^-nice: nice 5 -> ~1/3 of the web process's share when
    both want the CPU), so slider moves and frames are served first and training takes what
    is left. Returns the process's nice value afterwards (unchanged where unsupported)."""
    step = worker_nice(env)
    try:
        return os.nice(step)
    except (AttributeError, OSError):
        return 0


def worker_main(conn, chunk_s: float = CHUNK_S, publish_s: float = PUBLISH_S) -> None:
    """Run a worker on `conn` (a multiprocessing Connection) until "stop" or EOF."""
    from engine.device import configure_threads
    configure_threads()
    lower_priority()
    try:
        Worker(conn, chunk_s, publish_s).run()
    except (EOFError, OSError, KeyboardInterrupt):   # the web process went away
        pass


if __name__ == "__main__":      # python -m live.worker_loop FD CHUNK_S PUBLISH_S
    import sys
    from multiprocessing.connection import Connection
    worker_main(Connection(int(sys.argv[1])), float(sys.argv[2]), float(sys.argv[3]))
