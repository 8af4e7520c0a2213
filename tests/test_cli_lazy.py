"""The command line loads only what the chosen subcommand needs; ``kvplan serve`` runs the packaged app.

What is imported is asserted, never how long it takes (``bench/bench_cli.py`` measures the time).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli import COMMANDS, build_parser, main
from planner.cli.serve import app_script, streamlit_command

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ("pandas", "plotly", "pydantic", "numpy", "streamlit", "torch", "pyarrow")
"""Libraries `kvplan kv` must not load."""

PLAN_SIDE = ("planner.capacity", "planner.frontier", "kvplan_app.charts.figures", "kvplan_app.charts.frontier",
             "planner.files.planfile", "planner.catalog.tiers", "planner.files.export", "planner.traces", "planner.probe")
"""planner modules that only other subcommands need."""


def _modules_after(argv: list[str]) -> tuple[int, list[str]]:
    """Exit code and sys.modules of a fresh interpreter that ran ``kvplan argv``."""
    code = ("import json, sys; from planner.cli import main; rc = main(%r); "
            "print(json.dumps([rc, sorted(sys.modules)]))" % (argv,))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rc, modules = json.loads(proc.stdout.strip().splitlines()[-1])
    return rc, modules


def test_kv_imports_only_its_own_subcommand_and_no_heavy_library():
    rc, modules = _modules_after(["kv", "--model", "deepseek-v4.1-flash", "--context", "1m"])
    assert rc == 0
    assert [m for m in modules if m.split(".")[0] in HEAVY] == []
    assert [m for m in modules if m.startswith("planner.cli.")] == ["planner.cli.args", "planner.cli.kv"]
    assert [m for m in modules if m.startswith(PLAN_SIDE)] == []


def test_help_lists_every_subcommand_without_importing_any(capsys):
    rc, modules = _modules_after(["--help"])
    assert rc == 0
    assert [m for m in modules if m.startswith("planner.cli.")] == []
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name, (_, help_text) in COMMANDS.items():
        assert name in out and help_text.split()[0] in out


def test_table_help_is_the_help_each_module_registers():
    parser = build_parser()  # every module
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    registered = {a.dest: a.help for a in sub._choices_actions}
    assert registered == {name: help_text for name, (_, help_text) in COMMANDS.items()}


def test_unknown_subcommand_is_one_line_exit_2(capsys):
    assert main(["bogus"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'bogus'" in err


def test_each_subcommand_loads_only_its_module():
    for name, (module, _) in COMMANDS.items():
        parser = build_parser([name])
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        assert sub.choices[name].get_default("func") is not None, name
        others = [n for n, (m, _) in COMMANDS.items() if m != module]
        assert all(sub.choices[n].get_default("func") is None for n in others), name


def test_serve_runs_the_packaged_entry_script_with_its_config():
    script = app_script()
    assert script == ROOT / "kvplan_app" / "app.py"
    assert (script.parent / ".streamlit" / "config.toml").is_file()
    # the checkout's project-level config is the same file (a link), so `streamlit run app.py` reads it too
    assert (ROOT / ".streamlit" / "config.toml").resolve() == (script.parent / ".streamlit" / "config.toml").resolve()
    args = build_parser(["serve"]).parse_args(["serve", "--port", "8520", "--address", "127.0.0.1", "--",
                                               "--server.baseUrlPath", "kvplan"])
    assert streamlit_command(args) == [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", "8520",
                                       "--server.address", "127.0.0.1", "--server.baseUrlPath", "kvplan"]
    bare = build_parser(["serve"]).parse_args(["serve"])
    assert streamlit_command(bare) == [sys.executable, "-m", "streamlit", "run", str(script)]


@pytest.mark.parametrize("port", ["0", "65536", "http"])
def test_serve_refuses_a_bad_port(capsys, port):
    assert main(["serve", "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--port" in err
