"""docs/CONFIGURATION.md lists every setting: each DLPLAY_ variable the code or a launcher
reads, each variable and Streamlit option the profiles set, with defaults that match the code."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "CONFIGURATION.md").read_text()
NAME = re.compile(r"\bDLPLAY_[A-Z0-9_]*[A-Z0-9]\b")
CODE = ["app.py", "playground.py", "ui", "live", "engine", "topics", "deploy", "scripts",
        "benchmarks", "compose.yaml", "Dockerfile"]
TESTS = ["tests", ".ci"]
SUFFIXES = {".py", ".sh", ".env", ".js", ".yaml", ".template", ".toml", ""}


def _names(places: list[str]) -> dict[str, str]:
    """Every DLPLAY_ name in the files under `places`, with one file that names it."""
    found: dict[str, str] = {}
    for place in places:
        path = ROOT / place
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for f in files:
            if f.suffix not in SUFFIXES or "__pycache__" in f.parts or "_artifacts" in f.parts:
                continue
            for name in NAME.findall(f.read_text(errors="ignore")):
                found.setdefault(name, str(f.relative_to(ROOT)))
    return found


def _rows(section: str | None = None) -> dict[str, str]:
    """`NAME` -> its table row, for the rows of the whole page or of one '## ' section."""
    text = DOC
    if section is not None:
        text = DOC.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): line for line in text.splitlines()
            if (m := re.match(r"\| `([A-Za-z0-9_.]+)`", line))}


def _split_settings_rows() -> dict[str, str]:
    """Streamlit rows name several options in one cell: `a.b`, `a.c`."""
    out = {}
    for line in DOC.split("## Streamlit settings\n", 1)[1].split("\n## ", 1)[0].splitlines():
        if line.startswith("| `"):
            for name in re.findall(r"`([a-zA-Z]+\.[a-zA-Z]+)`", line.split("|")[1]):
                out[name] = line
    return out


def test_every_variable_the_code_reads_is_documented():
    listed = _rows()
    missing = {n: f for n, f in _names(CODE).items() if n not in listed}
    assert not missing, f"add these to docs/CONFIGURATION.md: {missing}"


def test_every_variable_the_tests_read_is_documented():
    listed = _rows()
    missing = {n: f for n, f in _names(TESTS).items() if n not in listed}
    assert not missing, f"add these to docs/CONFIGURATION.md (For tests): {missing}"


def test_no_documented_variable_is_stale():
    known = set(_names(CODE + TESTS))
    stale = [n for n in _rows() if n.startswith("DLPLAY_") and n not in known]
    assert not stale, f"nothing reads {stale} any more"


def test_the_hosting_profile_is_documented_with_its_values():
    for line in (ROOT / "deploy" / "hosting.env").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, value = line.split("=", 1)
        assert key in DOC, key
        if key.startswith("DLPLAY_"):
            assert f"hosting profile: `{value}`" in _rows()[key], key


def test_every_streamlit_option_of_the_config_is_documented():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    rows = _split_settings_rows()
    for section, options in config.items():
        for option, value in options.items():
            name = f"{section}.{option}"
            assert name in rows, name
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            assert shown in rows[name], (name, value)


def test_defaults_match_the_code():
    from engine.device import configure_threads  # noqa: F401  (DLPLAY_TORCH_THREADS, default 1)
    from live import budget, checkpoint_store, worker_loop, workers
    rows = _rows()
    assert f"| `{budget.FPS:g}` |" in rows["DLPLAY_FRAME_BUDGET"]
    assert f"| `{workers.LEASE_S:g}` |" in rows["DLPLAY_LEASE_S"]
    assert f"| `{checkpoint_store.MAX_MB:g}` |" in rows["DLPLAY_CHECKPOINT_MAX_MB"]
    assert f"| `{worker_loop.NICE}` |" in rows["DLPLAY_WORKER_NICE"]
    assert "| `1` |" in rows["DLPLAY_TORCH_THREADS"]
    assert "| `inline` |" in rows["DLPLAY_TRAINERS"]
