"""The Spanish gettext catalogue as the tests read it (Babel), and the strings the source asks it for.

:func:`wrapped_strings` reads the source the way an extractor does: every ``t("...")``, ``tn("...", "...")``,
chart word ``tr("...")`` and planner template ``msg("...")`` whose text is a constant (a template held in a
variable or a dict of templates is followed to its assignment in the same module; a figure builder's default
title to its parameter's default).
"""

from __future__ import annotations

import ast
import string
from functools import lru_cache
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "kvplan_app" / "locales"
PO = LOCALES / "es" / "LC_MESSAGES" / "kvplan.po"
MO = PO.with_suffix(".mo")
SOURCES = sorted([*(ROOT / "planner").rglob("*.py"), *(ROOT / "kvplan_app").rglob("*.py")])
"""Every module of the planner and the dashboard."""


@lru_cache(maxsize=None)
def spanish_catalogue() -> Catalog:
    with PO.open("rb") as f:
        return read_po(f)


def entries() -> list[Message]:
    """The catalogue's messages (its header left out)."""
    return [m for m in spanish_catalogue() if m.id]


def entry(msgid: str, context: str | None = None) -> Message | None:
    """The catalogue entry of ``msgid`` (the singular of a plural entry), or None."""
    return spanish_catalogue().get(msgid, context=context)


def spanish(msgid: str, context: str | None = None) -> str:
    """The Spanish of ``msgid`` (KeyError when the catalogue has no translation)."""
    found = entry(msgid, context)
    if found is None or not found.string or isinstance(found.string, tuple):
        raise KeyError(msgid)
    return found.string


def fields(text: str) -> set[str]:
    """The ``str.format`` fields of ``text``."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _constants(node: ast.AST) -> list[str]:
    """String constants an expression can evaluate to (a constant, ``a if c else b``, a dict's values)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _constants(node.body) + _constants(node.orelse)
    if isinstance(node, ast.Dict):
        return [s for v in node.values for s in _constants(v)]
    return []


def _defaults(tree: ast.AST) -> dict[str, list[str]]:
    """Parameter name -> its string defaults, over every function of a module."""
    out: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                out.setdefault(arg.arg, []).extend(_constants(default))
    return out


def wrapped_strings(names: tuple[str, ...] = ("t", "tn", "tr", "msg"), paths=None) -> dict[str | tuple[str, str], str]:
    """Every constant text passed to the functions ``names`` in ``paths`` (default: :data:`SOURCES`) -> where it
    is; a ``tn`` call gives (singular, plural). A call whose text cannot be followed to a constant is listed
    under the key ``("?", where)``."""
    out: dict = {}
    for path in paths or SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assigned: dict[str, list[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).extend(_constants(node.value))
        defaults = _defaults(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in names and node.args):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if node.func.id == "tn":
                pair = tuple(_constants(a)[0] for a in node.args[:2] if _constants(a))
                out.setdefault(pair if len(pair) == 2 else ("?", where), where)
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Subscript):
                arg = arg.value
            found = _constants(arg)
            if not found and isinstance(arg, ast.Name):
                found = assigned.get(arg.id, []) + defaults.get(arg.id, [])
            for text in found or [("?", where)]:
                out.setdefault(text, where)
    return out


def source_strings() -> set[str]:
    """Every string constant in :data:`SOURCES`."""
    out = set()
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out
