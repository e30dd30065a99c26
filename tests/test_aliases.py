"""One meaning per import alias: across the code a newcomer reads (app.py, engine/,
live/, ui/, topics/), `F` may not be torch.nn.functional in one file and a figures module in
another. A page's own figures module counts as one meaning wherever it is imported
(`figs` = topics.<page>.figures), likewise a page's measures module (`M` =
engine.<topic>.reads), a page's engine package and its modules.

KNOWN lists double meanings accepted for now (none): the test fails on any new one, and
does not fail when a known one is fixed."""
import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCOPE = [ROOT / "app.py", ROOT / "playground.py", *sorted((ROOT / "engine").rglob("*.py")),
         *sorted((ROOT / "live").glob("*.py")), *sorted((ROOT / "ui").glob("*.py")),
         *sorted((ROOT / "topics").rglob("*.py"))]

KNOWN: set[tuple[str, str, str]] = set()   # all fixed; the test fails on any new one


def meaning(target: str) -> str:
    if re.fullmatch(r"topics\.\w+\.(\w+_)?figures", target):
        return "<a page's figures module>"
    if re.fullmatch(r"engine\.\w+\.reads", target):
        return "<a page's measures module>"
    return target


def aliases(path: Path) -> list[tuple[str, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.asname, meaning(a.name)) for a in node.names if a.asname]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [(a.asname, meaning(f"{node.module}.{a.name}")) for a in node.names if a.asname]
    return out


def double_meanings(files: list[Path]) -> set[tuple[str, str, str]]:
    """(alias, meaning, file) for every use of an alias that means more than one thing."""
    uses: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in files:
        for alias, what in aliases(path):
            uses[alias][what].add(path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT)
                                  else path.name)
    out = set()
    for alias, meanings in uses.items():
        if len(meanings) > 1:
            # the most common meaning is the convention; the others are the double meanings
            common = max(meanings, key=lambda m: len(meanings[m]))
            out |= {(alias, m, f) for m, fs in meanings.items() if m != common for f in fs}
    return out


def test_the_check_finds_a_double_meaning(tmp_path):
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text("from torch.nn import functional as F\n")
    b.write_text("import torch.nn.functional as F\nfrom topics.gan import figures as figs\n")
    c.write_text("from topics.vae import figures as F\nfrom topics.vae import figures as figs\n")
    assert double_meanings([a, b, c]) == {("F", "<a page's figures module>", "c.py")}


def test_no_alias_gets_a_second_meaning():
    new = double_meanings(SCOPE) - KNOWN
    assert not new, f"an alias that already means something else elsewhere: {sorted(new)}"
