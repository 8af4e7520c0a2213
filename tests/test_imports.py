"""`planner` is the numbers only: it pulls in neither torch, Streamlit nor Plotly, and imports nothing of the app."""

import ast
import pathlib
import subprocess
import sys

PLANNER = pathlib.Path(__file__).resolve().parents[1] / "planner"


def test_planner_imports_without_torch_streamlit_or_plotly():
    code = ("import sys, planner, planner.plan, planner.catalog.entries, planner.cli, planner.frontier, "
            "planner.recommend, planner.traces, planner.engines.reconcile, planner.files.planfile, planner.probe; "
            "bad = [m for m in ('torch', 'streamlit', 'plotly', 'kvplan_app') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_charts_import_without_streamlit():
    code = ("import sys, kvplan_app.charts.figures, kvplan_app.charts.frontier, kvplan_app.charts.traces; "
            "bad = [m for m in ('torch', 'streamlit') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_planner_module_names_the_app_plotly_or_streamlit():
    """Every import statement in planner/, functions' bodies included (a lazy import is still a dependency)."""
    found = []
    for path in sorted(PLANNER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.relative_to(PLANNER)}: {n}" for n in names
                      if n.split(".")[0] in ("kvplan_app", "plotly", "streamlit")]
    assert found == []
