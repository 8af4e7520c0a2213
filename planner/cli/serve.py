"""``kvplan serve``: run the dashboard from the installed package.

Runs ``streamlit run <kvplan_app>/app.py`` with the same Python. The package
ships its Streamlit settings next to the entry script
(``kvplan_app/.streamlit/config.toml``), which Streamlit reads as the
script-level config file; environment variables (``STREAMLIT_SERVER_PORT``)
and command-line options override it, as for any Streamlit app. Options after
``--`` go to Streamlit unchanged (``kvplan serve -- --server.baseUrlPath kvplan``).

On POSIX the process becomes the Streamlit server (``exec``), so a signal sent
to ``kvplan serve`` reaches the server itself.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from planner.cli.args import positive_int

MAX_PORT = 65535
"""Largest TCP port."""


def app_script() -> Path:
    """The dashboard's entry script inside the installed ``kvplan_app`` package."""
    return Path(str(files("kvplan_app") / "app.py"))


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``serve`` subcommand."""
    p = sub.add_parser("serve", help="start the dashboard (Streamlit) from the installed package",
                       description="Start the kvplan dashboard. Stop it with Ctrl+C.")
    p.add_argument("--port", type=positive_int(MAX_PORT),
                   help="TCP port (default: Streamlit's, 8501, or STREAMLIT_SERVER_PORT)")
    p.add_argument("--address", help="address to listen on, e.g. 127.0.0.1 (default: every interface)")
    p.add_argument("streamlit_args", nargs=argparse.REMAINDER, metavar="-- STREAMLIT_OPTION",
                   help="further `streamlit run` options, after --")
    p.set_defaults(func=run)


def streamlit_command(args: argparse.Namespace) -> list[str]:
    """The ``python -m streamlit run ...`` command line for ``args``."""
    command = [sys.executable, "-m", "streamlit", "run", str(app_script())]
    if args.port is not None:
        command += ["--server.port", str(args.port)]
    if args.address is not None:
        command += ["--server.address", args.address]
    extra = list(args.streamlit_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    return command + extra


def run(args: argparse.Namespace) -> int:
    """Replace this process with the Streamlit server (POSIX), or wait for it (elsewhere)."""
    command = streamlit_command(args)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execv(command[0], command)
    try:  # pragma: no cover - Windows
        return subprocess.call(command)
    except KeyboardInterrupt:  # pragma: no cover
        return 0
