"""ui/topics.py: every ready topic names its engine modules (Topic.engine), they import,
the page imports them, and the gallery shows where the code is."""
import ast
import importlib
from pathlib import Path

import pytest

from ui.topics import ROOT, TOPICS, TOPICS_BY_SLUG

READY = list(TOPICS)
SHARED = {"engine.datasets", "engine.device", "live.handle", "engine.nets", "engine.training",
          "engine.weights", "live.workers"}


def engine_imports(source: str) -> set[str]:
    """The engine modules a file imports: `from engine import gan as G` -> engine.gan,
    `from engine.gan.trainer import X` -> engine.gan.trainer, `import engine.gan` -> engine.gan."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "engine":
                out |= {f"engine.{a.name}" for a in node.names}
            elif node.module.startswith("engine."):
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("engine.")}
    return out


def imports_module(imported: set[str], module: str) -> bool:
    return any(m == module or m.startswith(module + ".") for m in imported)


def test_engine_imports_reads_every_import_form():
    src = ("from engine import gan as G, vae\nfrom engine.optim.runs import race\n"
           "import engine.regions\nfrom enginex import y\nimport numpy\n")
    got = engine_imports(src)
    assert got == {"engine.gan", "engine.vae", "engine.optim.runs", "engine.regions"}
    assert imports_module(got, "engine.optim") and not imports_module(got, "engine.op")


@pytest.mark.parametrize("topic", READY, ids=lambda t: t.slug)
def test_engine_modules_import_and_the_page_uses_them(topic):
    assert topic.engine, f"{topic.slug}: name its engine module(s) in ui/topics.py"
    # the page and the modules it is split into (topics/<slug>/: page, compute, figures, tour)
    files = sorted((ROOT / "topics" / topic.slug).glob("*.py"))
    page = set().union(*(engine_imports(f.read_text(encoding="utf-8")) for f in files))
    for module in topic.engine:
        assert module.startswith("engine.") and module not in SHARED
        importlib.import_module(module)
        assert imports_module(page, module), \
            f"neither {topic.page_file} nor topics/{topic.slug}/*.py imports {module}"
    for path in topic.engine_files:
        assert (ROOT / path).exists(), path


def test_each_engine_module_belongs_to_one_topic():
    owners: dict[str, str] = {}
    for t in TOPICS:
        for module in t.engine:
            assert module not in owners, f"{module} listed by {owners.get(module)} and {t.slug}"
            owners[module] = t.slug


def test_engine_files_name_modules_and_packages():
    assert TOPICS_BY_SLUG["gradient_descent"].engine_files == ("engine/optim/",)
    assert TOPICS_BY_SLUG["relu_regions"].code_files == ("topics/relu_regions/",
                                                         "engine/regions/")
    assert all(not Path(p).is_absolute() for t in TOPICS for p in t.code_files)


def test_gallery_links_say_where_the_code_is():
    from tests.apptest import run_app
    at = run_app()
    assert not at.exception
    helps = [el.proto.help for el in at.get("page_link")]
    for topic in READY:
        assert "The code: " + ", ".join(topic.code_files) in helps
