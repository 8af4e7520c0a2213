"""Hostile token counts and ``kvplan`` command lines, for ``tests/fuzz_surfaces.py`` (not a test module).

* Token counts (:func:`planner.units.parse_tokens`, the one parser behind every page and flag): a count is read
  exactly as written (checked against :class:`fractions.Fraction`), thousands commas only in groups of three
  (``1,5M`` is refused, never 15,000,000), or refused with one clear line.
* Command lines: device files, FIFOs, directories, missing, empty, binary and oversize files as ``--config``,
  ``--plan`` and trace arguments, and hostile numbers in the flags. Each exits 0 (with valid JSON when ``--json``
  is given), 1 or 2 with exactly one line on stderr: never a traceback, never an "internal error".
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
from fractions import Fraction
from pathlib import Path

from hypothesis import strategies as st

from fuzz_surfaces import COUNTS, OUTCOMES, assert_clear
from planner.errors import PlanInputError
from planner.units import parse_tokens

# ---------------------------------------------------------------------------
# Token counts
# ---------------------------------------------------------------------------

TOKEN_SPECIALS = ["1,5M", "1,500,000", "1_500_000", "1.5M", "1,5", "15,00,000", "1,0000", "1,000.5", "1,000k",
                  "1e6", "1E6", "1e-3k", ".5k", "5.", "1__0", "_1", "1_", "1_k", "1,", ",1", "0", "00", "1e999999",
                  "9" * 40, "²", "١٢٣", "1\u202f000", "1 000", "0x10", "nan", "inf", "-1", "+1", "1kk", "k", "M"]
"""The issue's forms (``1,5M`` and the forms it must accept) and their neighbours."""
token_texts = lambda: st.one_of(  # noqa: E731
    st.sampled_from(TOKEN_SPECIALS),
    st.text(alphabet="0123456789,._eEkKmMgG+- ", min_size=1, max_size=14),
)
_SUFFIX = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
"""vLLM ``human_readable_int`` (vllm/utils/argparse_utils.py): lower case decimal, upper case binary."""
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")
_DIGIT_UNDERSCORES = re.compile(r"[0-9]+(?:_[0-9]+)*")
_SPACED = re.compile(r"[0-9]{1,3}(?:[ \u00a0\u202f][0-9]{3})+")


def check_token_text(text: str) -> None:
    """Accepted: the exact value written (commas only as thousands groups); else one clear refusal."""
    COUNTS["token counts"] += 1
    try:
        value = parse_tokens(text, minimum=0, maximum=10**12)
    except PlanInputError as exc:
        assert_clear(exc)
        if re.fullmatch(r"[0-9]{1,12}", text.strip()) and int(text) <= 10**12:
            raise AssertionError(f"a plain whole number was refused: {text!r}") from None
        OUTCOMES["token counts", "refused"] += 1
        return
    raw = text.strip()
    if _SPACED.fullmatch(raw):  # thousands grouped by spaces (SI style): 1 500 000
        assert value == int(re.sub(r"[ \u00a0\u202f]", "", raw))
    elif "," in raw:
        assert _GROUPED.fullmatch(raw), f"{text!r} has a comma outside groups of three and was read as {value:,}"
        assert value == int(raw.replace(",", ""))
    else:
        scale = _SUFFIX.get(raw[-1], 1)
        number = raw[:-1] if scale != 1 else raw
        if scale != 1:  # vLLM's pattern before a suffix: digits, an optional decimal part (whole before K, M, G, T)
            assert re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", number), f"{text!r}: not vLLM's form before a suffix"
            assert raw[-1].islower() or "." not in number, f"{text!r}: a decimal before a binary suffix"
        mantissa = re.split(r"[eE.]", number)[0]
        assert not mantissa or _DIGIT_UNDERSCORES.fullmatch(mantissa), f"{text!r}: underscores not between digits"
        assert Fraction(number.replace("_", "")) * scale == value, (text, value)
    OUTCOMES["token counts", "valid"] += 1


# ---------------------------------------------------------------------------
# kvplan command lines
# ---------------------------------------------------------------------------

_DIR = Path(tempfile.mkdtemp(prefix="kvplan-fuzz-cli-"))
"""Files the command lines name (made once per process; a FIFO among them)."""


def _paths() -> list[str]:
    fifo = _DIR / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
        (_DIR / "empty.json").write_bytes(b"")
        (_DIR / "binary.json").write_bytes(bytes(range(256)) * 4)
        (_DIR / "nan.json").write_text('{"schema_version": 1, "inputs": {"hit_rate": NaN}}')
        (_DIR / "big.json").write_bytes(b" " * 1_000_001 + b"{}")  # past the config (1 MB) and plan (64 KiB) caps
        (_DIR / "trace.jsonl").write_text("".join(
            json.dumps({"timestamp_s": i, "input_length": 1024, "output_length": 16, "hash_ids": [i % 3, i]}) + "\n"
            for i in range(50)))
    return ["/dev/zero", "/dev/null", "/dev/urandom", str(fifo), str(_DIR), str(_DIR / "missing.json"),
            str(_DIR / "empty.json"), str(_DIR / "binary.json"), str(_DIR / "nan.json"), str(_DIR / "big.json"),
            "\x00", ""]


HOSTILE_NUMBERS = ["1,5M", "1,500,000", "1_500_000", "1.5M", "0", "-1", "5e-324", "1e-300", "nan", "inf", "1e999",
                   "²", "0.0005", "0.001", "1e308", "100000000", "1e12"]
"""Values for counts, speeds and sizes: ambiguous, zero, denormal, huge, not numbers."""


@st.composite
def cli_argvs(draw) -> list[str]:
    """A ``kvplan`` command line with a hostile file or number."""
    path = draw(st.sampled_from(_paths()))
    number = draw(st.sampled_from(HOSTILE_NUMBERS))
    trace = str(_DIR / "trace.jsonl")
    return draw(st.sampled_from([
        ["kv", "--config", path], ["kv", "--config", path, "--json"], ["plan", "--plan", path, "--json"],
        ["trace", path], ["trace", path, "--json"],
        ["kv", "--model", "llama-3.1-8b", "--context", number, "--json"],
        ["kv", "--model", "mistral-7b-v0.1", "--context", number, "--engine", "vllm", "--kv-budget-gib", number],
        ["plan", "--context", number, "--json"], ["plan", "--measured-usable-kv-gib", number],
        ["plan", "--measured-kv-bytes-per-token", number, "--json"],
        ["plan", "--session-decode-tokens-per-s", number, "--json"], ["plan", "--prefill-tokens-per-s", number],
        ["plan", "--hbm-gib", number, "--json"], ["plan", "--output-tokens", number, "--json"],
        ["trace", trace, "--session-decode-tokens-per-s", number, "--json"],
        ["trace", trace, "--ttl-s", number, "--capacity-blocks", number, "--json"],
        ["frontier", "--contexts", number, "--json"], ["frontier", "--hit-rates", number, "--json"],
    ]))


def check_cli(argv: list[str]) -> None:
    """Exit 0 (valid JSON on stdout with ``--json``), or 1 / 2 with one line on stderr; no traceback."""
    from planner.cli import main

    COUNTS["cli"] += 1
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    stderr = err.getvalue()
    assert "Traceback" not in stderr and "internal error" not in stderr, (argv, stderr[-2000:])
    if code == 0:
        if "--json" in argv:
            json.loads(out.getvalue(), parse_constant=lambda c: (_ for _ in ()).throw(AssertionError((argv, c))))
        OUTCOMES["cli", "valid"] += 1
        return
    assert code in (1, 2), (argv, code, stderr)
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("kvplan trace:")]
    assert len(lines) == 1 and lines[0].startswith("kvplan: "), (argv, stderr[-2000:])
    OUTCOMES["cli", "refused"] += 1
