"""The ``kvplan`` command line: one subcommand per module in this package, loaded lazily.

:data:`COMMANDS` maps each subcommand to the module that implements it and its
one-line help. Only the chosen subcommand's module is imported (``kvplan kv``
never loads the plan, the frontier, pandas or plotly); ``kvplan --help`` lists
every subcommand from the table without importing any of them.

Each subcommand module exposes ``register(subparsers)``, which adds its parser
(with the help text of :data:`COMMANDS`) and sets ``func`` to a callable
``(args) -> int``. Bad input raises :class:`planner.errors.PlanInputError`;
:func:`main` prints it as one line on stderr and exits with code 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Collection

from planner.errors import PlanInputError, short_repr

COMMANDS: dict[str, tuple[str, str]] = {
    "kv": ("kv", "KV bytes per token and per sequence"),
    "plan": ("plan", "sessions per GPU and per replica, request rate"),
    "models": ("catalog", "list catalog models"),
    "gpus": ("catalog", "list catalog accelerators"),
    "frontier": ("frontier", "sessions and request rate over accelerators, contexts, hit rates"),
    "trace": ("trace", "measured prefix-cache hit rates from a request trace"),
    "probe": ("probe", "allocate the quantized KV pool on this GPU (or CPU) and measure its real bytes"),
    "reconcile": ("reconcile", "compare a vLLM or SGLang start-up log with kvplan's prediction"),
    "recommend": ("recommend", "fewest GPUs (then cost) meeting a sessions or requests/s target"),
    "serve": ("serve", "start the dashboard (Streamlit) from the installed package"),
}
"""Subcommand -> (module in ``planner.cli``, one-line help), in help order."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2, and takes flags only as written.

    ``allow_abbrev=False`` on the parser and on every subparser (they are made
    with this class): argparse would otherwise read any unique prefix of a long
    flag as the flag itself (``--shared-prefix`` as ``--shared-prefixes``).
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:
        self.exit(2, f"kvplan: error: {message}\n")


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser with the modules of ``commands`` registered (every module when ``None``).

    The other subcommands get a placeholder parser carrying only their help
    line, so the usage and ``--help`` list them all.
    """
    parser = _Parser(prog="kvplan", description="KV-cache capacity planner for LLM serving.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    wanted = {module for name, (module, _) in COMMANDS.items() if commands is None or name in commands}
    for name, (module_name, help_text) in COMMANDS.items():
        if name in sub.choices:  # registered by a module that provides several commands
            continue
        if module_name in wanted:
            importlib.import_module(f"planner.cli.{module_name}").register(sub)
            wanted.discard(module_name)
        if name not in sub.choices:  # not wanted, or its module did not register it
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run kvplan; returns the exit code (0 ok, 2 bad input, 1 busy, out of memory or an internal error).

    Whatever happens, the user sees one line on stderr, never a traceback (``KVPLAN_DEBUG=1`` re-raises).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[:1] if argv and argv[0] in COMMANDS else ())
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # usage errors (code 2, one line printed) and --help (code 0)
            return int(exc.code or 0)
        return int(args.func(args) or 0)
    except PlanInputError as exc:
        print(f"kvplan: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `kvplan models | head`
        return 0
    except OverflowError as exc:
        print(f"kvplan: error: a number is too large ({exc})", file=sys.stderr)
        return 2
    except MemoryError:
        print("kvplan: error: out of memory (a smaller input, or more memory for this process)", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback; KVPLAN_DEBUG=1 shows it
        if os.environ.get("KVPLAN_DEBUG"):
            raise
        print(f"kvplan: internal error: {type(exc).__name__}: {short_repr(str(exc), 200)} "
              "(please report it; KVPLAN_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
