"""What one live frame costs the web process in CPU time (issue 22, item 3): the GAN page at
its defaults under AppTest, paused, its live fragment rerun as a run_every tick does, so the
number is the frame's cost without training (training moves to workers in item 1).

`python -m benchmarks live_frame` prints the median CPU ms per frame; `python
benchmarks/bench_live_frame.py --profile` also prints the cProfile table of those frames."""
from __future__ import annotations

import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import Measurement  # noqa: E402

FRAMES = 15


def _page():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("topic_pages/gan.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _profiled_script_runs(profile: cProfile.Profile):
    """Run AppTest's script thread under `profile` (cProfile sees one thread only)."""
    from unittest import mock

    from streamlit.testing.v1.local_script_runner import LocalScriptRunner
    original = LocalScriptRunner._run_script

    def run(self, *args, **kwargs):
        profile.enable()
        try:
            return original(self, *args, **kwargs)
        finally:
            profile.disable()
    return mock.patch.object(LocalScriptRunner, "_run_script", run)


def frame_cpu_ms(frames: int = FRAMES, profile: cProfile.Profile | None = None) -> list[float]:
    """CPU ms of each of `frames` fragment reruns of the GAN page's live fragment (paused)."""
    import contextlib

    from tests.apptest import rerun_fragment
    at = _page()
    rerun_fragment(at)                       # warm: caches, imports
    out = []
    with _profiled_script_runs(profile) if profile else contextlib.nullcontext():
        for _ in range(frames):
            c0 = time.process_time()
            rerun_fragment(at)
            out.append((time.process_time() - c0) * 1e3)
    return out


def live_frame() -> Measurement:
    ms = frame_cpu_ms()
    return Measurement(statistics.median(ms), "ms CPU",
                       f"GAN page defaults, paused live fragment rerun under AppTest (draw: "
                       f"snapshot, metrics, 3 figures, Streamlit marshalling; AppTest's own "
                       f"element-tree parsing included); min {min(ms):.0f}, max {max(ms):.0f}, "
                       f"{len(ms)} frames; target <= 40")


BENCHMARKS = {"live frame: GAN fragment CPU per frame": live_frame}


if __name__ == "__main__":
    from engine.device import configure_threads
    configure_threads()
    prof = cProfile.Profile() if "--profile" in sys.argv else None
    ms = frame_cpu_ms(profile=prof)
    print(f"median {statistics.median(ms):.1f} ms CPU per frame over {len(ms)} frames "
          f"(min {min(ms):.1f}, max {max(ms):.1f})")
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
