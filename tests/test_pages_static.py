"""Page scripts hold no bare strings or expressions after their docstring: with Streamlit's
"magic" they would be written to the page (a constant's docstring once showed up on the Frontier page)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "kvplan_app" / "views").glob("*.py")) + [ROOT / "app.py"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_bare_module_level_strings(script):
    body = ast.parse(script.read_text(encoding="utf-8")).body
    bare = [node.lineno for i, node in enumerate(body) if i and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)]
    assert bare == [], f"{script.name}: bare literal(s) at lines {bare} would render on the page"


def test_magic_is_off():
    assert "magicEnabled = false" in (ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8")
