"""parse(text) -> Graph: a safe parser for arithmetic expressions.

The text goes through Python's own `ast.parse(mode="eval")` and the tree is then walked with
a whitelist; nothing is ever evaluated by Python. Allowed: numbers, variable names, the
binary operators + - * / **, unary - and +, and calls of the functions in FUNCTIONS
(exp, log, sqrt, tanh, sigmoid, relu, sin, cos with one argument; max with two). Everything
else (attribute access, subscripts, lambda, comparisons, keywords, strings, names starting
with "_", ...) raises ValueError naming the token and its column. Size limits: MAX_CHARS
characters, MAX_NODES graph nodes, MAX_DEPTH levels of nesting.
"""
from __future__ import annotations

import ast
import math

from engine.autodiff.graph import Graph, Node
from engine.autodiff.ops import FUNCTIONS, OPS

MAX_CHARS = 4000
MAX_NODES = 1000
MAX_DEPTH = 200

OPERATOR_TOKENS = {ast.BitXor: "^", ast.MatMult: "@", ast.FloorDiv: "//", ast.Mod: "%",
                   ast.BitOr: "|", ast.BitAnd: "&", ast.LShift: "<<", ast.RShift: ">>"}
BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
HINTS = {ast.BitXor: "'^' is not a power in Python, write x**2",
         ast.MatMult: "'@' (matrix product) is not supported",
         ast.FloorDiv: "'//' is not supported, write /",
         ast.Mod: "'%' is not supported"}


def parse(text: str) -> Graph:
    """The computational graph of `text`; raises ValueError with the position on bad input."""
    if not isinstance(text, str):
        raise ValueError("the expression must be text")
    if len(text) > MAX_CHARS:
        raise ValueError(f"expression too long: {len(text):,} characters (the limit is "
                         f"{MAX_CHARS:,})")
    if not text.strip():
        raise ValueError("empty expression: type one, e.g. (x + y) * z")
    indent = len(text) - len(text.lstrip())          # columns count in the text as typed
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(_syntax_message(exc, indent)) from None
    except (RecursionError, MemoryError):
        raise ValueError(f"expression nested too deeply (the limit is {MAX_DEPTH} levels)") \
            from None
    builder = _Builder(text.strip(), indent)
    builder.visit(tree.body, depth=0)
    return Graph(tuple(builder.nodes), source=text.strip())


def _syntax_message(exc: SyntaxError, indent: int) -> str:
    where = f" at column {exc.offset + indent}" if exc.offset else ""
    line = (exc.text or "").rstrip("\n")
    token = ""
    if exc.offset and 0 < exc.offset <= len(line):
        token = f" (near {line[exc.offset - 1:exc.offset + 9]!r})"
    return f"syntax error{where}: {exc.msg}{token}"


class _Builder:
    def __init__(self, source: str, indent: int):
        self.source = source
        self.indent = indent
        self.nodes: list[Node] = []
        self.variables: dict[str, int] = {}

    def fail(self, node: ast.AST, what: str, hint: str = "", col: int | None = None) -> None:
        """Raise ValueError("<what> at column <c><hint>") (c: 1-based in the typed text)."""
        if col is None:
            col = getattr(node, "col_offset", None)
        where = "" if col is None else f" at column {col + 1 + self.indent}"
        raise ValueError(f"{what}{where}{hint}")

    def token(self, node: ast.AST) -> str:
        text = ast.get_source_segment(self.source, node) or type(node).__name__
        return text if len(text) <= 30 else text[:27] + "..."

    def add(self, op: str, inputs: tuple[int, ...], label: str, at: ast.AST,
            value: float = 0.0) -> int:
        if len(self.nodes) >= MAX_NODES:
            self.fail(at, f"expression too large: more than {MAX_NODES} nodes")
        self.nodes.append(Node(len(self.nodes), op, inputs, label,
                               getattr(at, "col_offset", -1) + 1 + self.indent, value))
        return len(self.nodes) - 1

    def binop(self, node: ast.BinOp) -> str:
        op = BINOPS.get(type(node.op))
        if op is None:
            col = self.operator_column(node)
            token = OPERATOR_TOKENS.get(type(node.op), type(node.op).__name__)
            self.fail(node, f"operator {token!r}", f" is not allowed: "
                      f"{HINTS.get(type(node.op), 'use + - * / **')}", col)
        return op

    def chain(self, node: ast.BinOp, depth: int) -> int:
        """A binary operation; a left chain of one family (x1 + x2 + ... + xk) is walked as
        the flat list it is (one level deep, not k), iteratively (no recursion per term)."""
        links = [node]
        family = _family(node)
        while family is not None and _family(links[-1].left) == family:
            links.append(links[-1].left)
        ops = [self.binop(link) for link in links]
        acc = self.visit(links[-1].left, depth + 1)
        for link, op in zip(reversed(links), reversed(ops)):
            b = self.visit(link.right, depth + 1)
            acc = self.add(op, (acc, b), OPS[op].symbol, link)
        return acc

    def visit(self, node: ast.AST, depth: int) -> int:
        """The node id of `node`; depth = how many operations enclose it."""
        if depth > MAX_DEPTH:
            self.fail(node, f"expression nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            return self.chain(node, depth)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            a = self.visit(node.operand, depth + 1)
            return a if isinstance(node.op, ast.UAdd) else self.add("neg", (a,), "−", node)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        self.fail(node, f"{_describe(node)} {self.token(node)!r}", " is not allowed (numbers, "
                  "names, + - * / **, and function calls only)")
        raise AssertionError  # unreachable: fail() raises

    def operator_column(self, node: ast.BinOp) -> int | None:
        """0-based column of a binary operator's token (between its two operands)."""
        if node.left.end_lineno != node.right.lineno:
            return None
        start, end = node.left.end_col_offset, node.right.col_offset
        gap = self.source[start:end]
        stripped = gap.strip().strip("()").strip()
        return start + gap.index(stripped) if stripped else None

    def constant(self, node: ast.Constant) -> int:
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            what = f"string {self.token(node)}" if isinstance(v, (str, bytes)) \
                else repr(self.token(node))
            self.fail(node, what, " is not a number")
        try:
            value = float(v)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            self.fail(node, f"number {self.token(node)!r}", " is too large")
        return self.add("const", (), f"{value:g}", node, value)

    def name(self, node: ast.Name) -> int:
        name = node.id
        if name.startswith("_"):
            self.fail(node, f"name {name!r}", " is not allowed (names may not start with '_')")
        if name in FUNCTIONS:
            self.fail(node, f"{name!r} is a function: call it, e.g. {name}(x)")
        if name not in self.variables:
            self.variables[name] = self.add("input", (), name, node)
        return self.variables[name]

    def call(self, node: ast.Call, depth: int) -> int:
        if not isinstance(node.func, ast.Name):
            self.fail(node, f"call of {self.token(node.func)!r}",
                      f" is not allowed (only {', '.join(sorted(FUNCTIONS))})")
        fname = node.func.id
        if fname not in FUNCTIONS:
            self.fail(node, f"unknown function {fname!r}",
                      f" (known: {', '.join(sorted(FUNCTIONS))})")
        if node.keywords:
            self.fail(node.keywords[0].value, f"keyword arguments are not allowed in {fname}()")
        op = FUNCTIONS[fname]
        if any(isinstance(a, ast.Starred) for a in node.args):
            self.fail(node, f"'*' arguments are not allowed in {fname}()")
        if len(node.args) != op.arity:
            self.fail(node, f"{fname}() takes {op.arity} argument{'s' * (op.arity > 1)}, "
                            f"got {len(node.args)}")
        args = tuple(self.visit(a, depth + 1) for a in node.args)
        return self.add(op.name, args, op.symbol, node)


def _family(node: ast.AST) -> str | None:
    """"sum" for + and -, "product" for * and /: a left chain of one family (a + b - c + d)
    is flat, not nested."""
    if not isinstance(node, ast.BinOp):
        return None
    return {ast.Add: "sum", ast.Sub: "sum", ast.Mult: "product", ast.Div: "product"}.get(
        type(node.op))


def _describe(node: ast.AST) -> str:
    kinds = {ast.Attribute: "attribute access", ast.Subscript: "subscript",
             ast.Lambda: "lambda", ast.Compare: "comparison", ast.BoolOp: "boolean operator",
             ast.IfExp: "if-expression", ast.Tuple: "tuple", ast.List: "list",
             ast.Dict: "dict", ast.Set: "set", ast.JoinedStr: "string",
             ast.NamedExpr: "assignment", ast.Starred: "starred expression",
             ast.UnaryOp: "operator", ast.Await: "await", ast.Yield: "yield"}
    for kind, text in kinds.items():
        if isinstance(node, kind):
            return text
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return "comprehension"
    return type(node).__name__


def _short(text: str, n: int = 40) -> str:
    """repr(text), elided to about n characters (a message never echoes a long input)."""
    return repr(text) if len(text) <= n else f"{text[:n]!r}… ({len(text):,} characters)"


def parse_values(text: str) -> dict[str, float]:
    """'x = -2, y = 5; z = -4' -> {"x": -2.0, "y": 5.0, "z": -4.0}. Each number is read by
    float() (never eval); a bad item raises ValueError naming it."""
    values: dict[str, float] = {}
    items = [item.strip() for item in text.replace(";", ",").split(",")]
    for item in items:
        if not item:
            continue
        name, sep, number = (part.strip() for part in item.partition("="))
        if not sep or not name.isidentifier() or name.startswith("_"):
            raise ValueError(f"cannot read {_short(item)}: write name = number, e.g. x = -2")
        try:
            value = float(number)
        except ValueError:
            raise ValueError(f"cannot read the number in {_short(item)}") from None
        if not math.isfinite(value):
            raise ValueError(f"{_short(name)} must be a finite number, not {_short(number)}")
        values[name] = value
    return values
