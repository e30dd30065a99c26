"""engine/ is pure computation: no module, packages included, may import a UI library
(docs/ARCHITECTURE.md)."""
import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
FORBIDDEN = {"streamlit", "plotly", "altair"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


MODULES = sorted(ENGINE.rglob("*.py"))      # engine/<topic>/ packages too


def test_engine_has_modules():
    assert {"device.py", "training.py", "datasets.py"} <= {p.name for p in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ENGINE)))
def test_engine_module_imports_no_ui_library(path):
    assert not (_imports(path) & FORBIDDEN), f"{path.relative_to(ENGINE)} imports {_imports(path) & FORBIDDEN}"


def test_the_check_catches_a_ui_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy\nfrom plotly import graph_objects as go\n")
    assert _imports(bad) & FORBIDDEN == {"plotly"}
