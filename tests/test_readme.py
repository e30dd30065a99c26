"""README's two commands exist, and .ci/run runs exactly the README's test command."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = "pip install -r requirements.txt && streamlit run app.py"
TEST = "pip install -r requirements-dev.txt && python -m pytest"


def test_readme_has_run_and_test_commands():
    text = (ROOT / "README.md").read_text()
    assert RUN in text and TEST in text


def test_ci_runs_the_readme_test_command_last():
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    assert lines[-1] == TEST
    assert "set -euo pipefail" in lines


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
