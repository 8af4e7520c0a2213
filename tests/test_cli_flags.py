"""Flags are taken only as written: argparse's abbreviation matching is off on every parser.

Without ``allow_abbrev=False`` argparse reads any unique prefix of a long flag
as the flag (``--gpu-memory-util 0.8`` as ``--gpu-memory-utilization``), and
``--shared-prefix 0`` was read as ``--shared-prefixes 0`` before
``--shared-prefix`` existed.
"""

from __future__ import annotations

import argparse

import pytest

from planner.cli import COMMANDS, build_parser, main


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # noqa: SLF001 - argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def test_every_parser_and_subparser_refuses_abbreviations() -> None:
    parser = build_parser()
    subs = _subparsers(parser)
    assert set(subs) == set(COMMANDS)
    assert parser.allow_abbrev is False
    assert {name: p.allow_abbrev for name, p in subs.items()} == dict.fromkeys(COMMANDS, False)


@pytest.mark.parametrize("argv", [
    ["plan", "--gpu-memory-util", "0.8"],          # a prefix of --gpu-memory-utilization
    ["plan", "--shared-prefixe", "2"],             # a prefix of --shared-prefixes
    ["plan", "--hit", "0.5"],                      # a prefix of --hit-rate
    ["frontier", "--context", "32k", "--hit-rat", "0.5"],
])
def test_an_abbreviated_flag_is_refused_with_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvplan: error: unrecognized arguments") and err.count("\n") == 1
