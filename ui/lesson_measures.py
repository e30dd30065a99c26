"""The measurements a lesson file's claims may name ("<page>.<function>"): each is a function
of the page's full settings s (and keyword arguments from the file) that returns the number
the page draws from, the same functions the pages' own presets and tour steps use.

A lesson file can only pick from this table: it names a measurement, it never carries code.
A topic adds to it by marking a function with `@lesson_measure` (below).
"""
from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Mapping

from ui.topics import ROOT


@dataclass(frozen=True)
class Measure:
    name: str          # "<page>.<function>"
    module: str        # the topic module that defines it
    function: str
    slow: bool = False  # trains a model: its claim is a slow test

    @cached_property
    def func(self) -> Callable[..., float]:
        return getattr(importlib.import_module(self.module), self.function)

    def bind(self, args: Mapping[str, Any]) -> None:
        """TypeError unless `args` are keyword arguments the function takes."""
        inspect.signature(self.func).bind({}, **args)

    def measure(self, args: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], float]:
        args = dict(args)
        return lambda s: float(self.func(s, **args))


def lesson_measure(fn: Callable | None = None, *, trains: bool = False, page: str = ""):
    """Marks fn(s, **args) -> float as a measurement lesson files may name: a function of
    topics/<page>/compute.py, or of topics/lesson_probes.py with its `page` named.
    `trains=True`: it trains a model (its claims are slow tests). The function itself is
    returned unchanged; MEASURES below is read from these marks."""
    def mark(f: Callable) -> Callable:
        return f
    return mark(fn) if fn is not None else mark


def _marked(path: Path) -> list[tuple[str, bool, str]]:
    """(function, trains, page) of each @lesson_measure function defined in `path`, read from
    its source (no import: the table costs nothing until a measurement runs)."""
    out = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            name = (call.func if call else dec)
            if isinstance(name, ast.Name) and name.id == "lesson_measure":
                kw = {k.arg: ast.literal_eval(k.value) for k in (call.keywords if call else [])}
                out.append((node.name, bool(kw.get("trains", False)), kw.get("page", "")))
    return out


def _measures() -> dict[str, Measure]:
    topics = ROOT / "topics"
    out = {}
    for path in sorted(topics.glob("*/compute.py")):
        page = path.parent.name
        for fn, trains, _ in _marked(path):
            out[f"{page}.{fn}"] = Measure(f"{page}.{fn}", f"topics.{page}.compute", fn, trains)
    for fn, trains, page in _marked(topics / "lesson_probes.py"):
        out[f"{page}.{fn}"] = Measure(f"{page}.{fn}", "topics.lesson_probes", fn, trains)
    return out


MEASURES: dict[str, Measure] = _measures()
