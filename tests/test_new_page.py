"""`python -m scripts.new_page` in a copy of the repository: the page it writes passes its own
tests and the suite's tests over every page before any topic code is written. The copy lives
in a temporary folder (tests never write tracked files)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.new_page import class_name, plan, prefix_for, used_prefixes, topic_entry

ROOT = Path(__file__).resolve().parent.parent


def test_prefix_is_the_slugs_initials_unless_taken():
    assert prefix_for("normalizing_flows", set()) == "nf"
    assert prefix_for("normalizing_flows", {"nf"}) == "no"
    assert prefix_for("graphs", {"gr"}) == "gra"
    assert {"gd", "rr", "gan"} <= used_prefixes()


def test_names_and_entry():
    assert class_name("language_models") == "LanguageModels"
    entry = topic_entry("demo", "Demo", "Foundations", "A sentence.", ":material/science:")
    assert entry.startswith("    Topic('demo', 'Demo', 'Foundations',") and entry.endswith("),\n")
    assert any(str(p).endswith("topics/demo/page.py") for p in plan("demo"))


def _copy_of_the_repository(dest: Path) -> None:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    untracked = subprocess.run(["git", "ls-files", "-z", "--others", "--exclude-standard"],
                               cwd=ROOT, capture_output=True, check=True).stdout.decode()
    for rel in [*tracked, *untracked.split("\0")]:
        if rel and (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)


@pytest.mark.slow
def test_a_new_page_passes_the_suite_before_any_topic_code(tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to copy")
    _copy_of_the_repository(tmp_path)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    made = subprocess.run([sys.executable, "-m", "scripts.new_page", "demo_page", "Demo page"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    assert "class DemoPageTrainer(TrainerBase)" in \
        (tmp_path / "engine/demo_page/trainer.py").read_text()
    assert (tmp_path / "assets/thumbnails/demo_page.png").stat().st_size > 1000
    again = subprocess.run([sys.executable, "-m", "scripts.new_page", "demo_page", "Demo"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "exists already" in again.stderr
    tests = ["tests/engine/test_demo_page.py", "tests/pages/test_demo_page.py",
             "tests/test_layers.py", "tests/test_topics.py", "tests/test_claims.py",
             "tests/pages/test_skeleton.py", "tests/pages/test_app.py",
             "tests/pages/test_plain_figures.py", "tests/lessons/test_lesson_format.py",
             "tests/test_lint.py", "tests/test_readme.py"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-m", "not e2e", "-k", "demo_page or layers or topics or lint or "
                          "live_tabs or readme", *tests], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-3000:]
    assert " passed" in run.stdout.splitlines()[-1]
