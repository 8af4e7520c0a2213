"""Inputs that used to hang or slip through the command line: each now exits 2 with one line on stderr.

A FIFO named where a file is expected blocked ``open()`` forever (``--accelerators``, a reconcile log,
``reconcile --config``); a float that underflows to 0 (``1e-400``) was taken as 0; a subnormal bandwidth
(``1e-320`` GB/s) was accepted and later blamed on a field the user never set.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LOG = REPO / "planner" / "data" / "logs" / "vllm-21348-qwen3-235b-a22b-tp4.txt"


def _kvplan(*argv: str) -> subprocess.CompletedProcess:
    """``kvplan ARGV`` in a fresh interpreter; a hang is a failure (the timeout raises), never a pass."""
    return subprocess.run([sys.executable, "-m", "planner.cli", *argv], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL)


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("argv, field", [
    (("plan", "--accelerators", "{fifo}", "--gpu", "h20", "--model", "llama-3.1-70b"), "accelerators"),
    (("reconcile", "{fifo}"), "LOGFILE"),
    (("reconcile", "--config", "{fifo}", str(LOG)), "config"),
])
def test_a_fifo_is_refused_before_reading(fifo: Path, argv: tuple[str, ...], field: str) -> None:
    proc = _kvplan(*(a.format(fifo=fifo) for a in argv))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"kvplan: error: {field}: ") and "FIFO" in lines[0]


@pytest.mark.parametrize("value, words", [("1e-400", "underflows"), ("1e-310", "subnormal"),
                                          ("-3e-999", "underflows")])
def test_a_float_that_is_not_what_was_typed_is_refused(value: str, words: str) -> None:
    proc = _kvplan("plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", f"--hit-rate={value}")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "--hit-rate" in proc.stderr and words in proc.stderr


def test_zero_written_long_hand_is_still_zero() -> None:
    proc = _kvplan("plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--hit-rate", "0.000e-500", "--json")
    assert proc.returncode == 0, proc.stderr
    assert '"hit_rate":0.0' in proc.stdout


def test_a_subnormal_bandwidth_is_refused_naming_its_field(tmp_path: Path) -> None:
    acc = tmp_path / "acc.toml"
    acc.write_text('[[accelerator]]\nid = "h20"\nname = "H20"\nmemory_gib = 96\n'
                   'hbm_bandwidth_gb_s = 1e-320\nbf16_dense_tflops = 148\n')
    proc = _kvplan("plan", "--accelerators", str(acc), "--gpu", "h20", "--model", "llama-3.1-70b")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("kvplan: error: accelerator.hbm_bandwidth_gb_s: 1e-320 is not allowed; "
                                   "expected a finite number in [0.001, 1,000,000]")


def test_a_sample_rate_that_keeps_no_block_is_refused() -> None:
    """1e-300 of the blocks is none of them (a block is kept when its 64-bit hash < rate * 2^64): it crashed
    the sweep with a TypeError (an internal error, exit 1) before."""
    proc = _kvplan("trace", "sample:conversation", "--sample-rate", "1e-300", "--sweep")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "kvplan: error: argument --sample-rate: '1e-300' is not in [1e-06, 1]"


@pytest.mark.parametrize("flag, value, allowed", [
    # PlanInputs: context_tokens in [1, 100,000,000], output_tokens in [0, 100,000,000] (the field ranges);
    # a token count outside them is out of range, not "not a whole number"
    ("--context", "-5", "[1, 100,000,000]"), ("--context", "1e30", "[1, 100,000,000]"),
    ("--output-tokens", "-1", "[0, 100,000,000]"),
])
def test_a_token_count_out_of_range_names_the_range(flag: str, value: str, allowed: str) -> None:
    proc = _kvplan("plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", flag, value)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and repr(value) in lines[0] and allowed in lines[0]
    assert "not a whole number" not in lines[0]


@pytest.mark.parametrize("command", ["kv", "plan", "reconcile"])
def test_empty_config_path_is_refused_as_empty(command, capsys):
    # Path("") reads as "."; the error named '.' where the user gave nothing
    from planner.cli import main
    assert main([command, "--config", ""]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--config: '' is not allowed" in err and "'.'" not in err
