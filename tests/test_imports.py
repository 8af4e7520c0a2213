"""`import planner` pulls in neither torch nor streamlit."""

import subprocess
import sys


def test_planner_imports_without_torch_or_streamlit():
    code = ("import sys, planner, planner.plan, planner.catalog, planner.cli, planner.figures; "
            "bad = [m for m in ('torch', 'streamlit') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
