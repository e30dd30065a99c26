"""The house's import rules (docs/ARCHITECTURE.md), checked on every import statement of the
app's modules, those inside functions included:

    topics/  ->  live/  ->  ui/  ->  engine/        (imports only go down, or sideways
                                                    within a layer)

- no import circle between any two app modules (a circle closed by an import inside a
  function counts: it is still a circle a reader has to untangle);
- topic folders never import each other (topics/<a>/ never imports topics/<b>/);
- the worker side of live/ (what runs in a worker process) imports neither ui/ nor a UI
  library: a worker never loads Streamlit or Plotly;
- a private name (_x) is imported only within its own package (an engine or topic package,
  or one of live/ and ui/)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["engine", "ui", "live", "topics"]          # bottom to top
TOP_SCRIPTS = {"app": 4, "playground": 4}            # above every layer
WORKER_SIDE = ["live.handle", "live.workers", "live.worker_link", "live.worker_loop",
               "live.ray_workers", "live.backends", "live.batching", "live.parent_watch"]
UI_LIBRARIES = {"streamlit", "plotly", "altair"}


def app_modules() -> dict[str, Path]:
    mods = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    for name in TOP_SCRIPTS:
        mods[name] = ROOT / f"{name}.py"
    return mods


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    """The app module an imported dotted name lands in (its longest known prefix)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, mods: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(app modules it imports, top-level names of everything it imports)."""
    ours, tops = set(), set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                     for a in node.names]
        else:
            continue
        for name in names:
            tops.add(name.split(".")[0])
            target = _resolve(name, mods)
            if target is not None and target != module:
                ours.add(target)
    return ours, tops


def import_graph() -> dict[str, set[str]]:
    mods = app_modules()
    return {m: imports_of(m, p, mods)[0] for m, p in mods.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def rank(module: str) -> int:
    top = module.split(".")[0]
    return TOP_SCRIPTS.get(top, LAYERS.index(top) if top in LAYERS else -1)


def test_the_app_has_no_import_circle():
    found = circles(import_graph())
    assert not found, f"import circles: {found}"


def test_imports_only_go_down():
    up = sorted((a, b) for a, bs in import_graph().items() for b in bs if rank(b) > rank(a))
    assert not up, f"imports from a lower layer to a higher one: {up}"


def test_topic_folders_do_not_import_each_other():
    def folder(m: str) -> str | None:
        parts = m.split(".")
        return parts[1] if parts[0] == "topics" and len(parts) > 2 else None
    crossing = sorted((a, b) for a, bs in import_graph().items() for b in bs
                      if folder(a) and folder(b) and folder(a) != folder(b))
    assert not crossing, crossing


@pytest.mark.parametrize("module", WORKER_SIDE)
def test_the_worker_side_loads_no_ui(module):
    mods = app_modules()
    ours, tops = imports_of(module, mods[module], mods)
    assert not tops & UI_LIBRARIES, f"{module} imports {tops & UI_LIBRARIES}"
    assert all(m.split(".")[0] in ("engine", "live") for m in ours), sorted(ours)
    assert all(m in WORKER_SIDE or not m.startswith("live.") for m in ours), sorted(ours)


def package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in ("engine", "topics") else parts[0]


def private_crossings(mods: dict[str, Path]) -> list[tuple[str, str, list[str]]]:
    """(importer, source, private names) for every private name imported across packages."""
    crossing = []
    for module, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            source = _resolve(node.module, mods)
            private = [a.name for a in node.names
                       if a.name.startswith("_") and not a.name.startswith("__")]
            if source and private and package_of(source) != package_of(module):
                crossing.append((module, source, private))
    return crossing


def test_no_private_name_is_imported_from_another_package():
    crossing = private_crossings(app_modules())
    assert not crossing, crossing


def test_the_private_name_check_catches_a_crossing(tmp_path):
    files = {"engine.datasets": "def _mix(): pass\n",
             "engine.diffusion.data": "from engine.datasets import _mix\n",
             "engine.gan.nets": "def _state(): pass\n",
             "engine.gan.trainer": "from engine.gan.nets import _state\n"}
    mods = {}
    for name, text in files.items():
        mods[name] = tmp_path / f"{name}.py"
        mods[name].write_text(text)
    assert private_crossings(mods) == [("engine.diffusion.data", "engine.datasets", ["_mix"])]


def test_the_checks_catch_a_circle_and_an_upward_import():
    graph = {"ui.a": {"ui.b"}, "ui.b": {"live.c"}, "live.c": {"ui.a"}, "engine.d": set()}
    assert circles(graph) == [["live.c", "ui.a", "ui.b"]]
    assert rank("ui.b") < rank("live.c") and rank("engine.d") < rank("ui.a")
    assert rank("app") > rank("topics.gan.page")
    assert package_of("engine.gan.nets") == "engine.gan" != package_of("engine.datasets")
    assert package_of("live.push") == package_of("live.controls") == "live"
