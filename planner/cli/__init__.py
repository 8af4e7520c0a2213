"""The ``kvplan`` command line: one subcommand per module in this package.

Each subcommand module exposes ``register(subparsers)``, which adds its parser
and sets ``func`` to a callable ``(args) -> int``. Bad input raises
:class:`planner.errors.PlanInputError`; :func:`main` prints it as one line on
stderr and exits with code 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from planner.errors import PlanInputError, short_repr

SUBCOMMANDS = ("kv", "plan", "catalog", "frontier", "trace", "probe")
"""Subcommand modules, in help order (``catalog`` provides ``models`` and ``gpus``)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit code 2."""

    def error(self, message: str) -> None:
        self.exit(2, f"kvplan: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every available subcommand."""
    parser = _Parser(prog="kvplan", description="KV-cache capacity planner for LLM serving.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"planner.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"planner.cli.{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run kvplan; returns the exit code (0 ok, 2 bad input, 1 busy, out of memory or an internal error).

    Whatever happens, the user sees one line on stderr, never a traceback (``KVPLAN_DEBUG=1`` re-raises).
    """
    parser = build_parser()
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
