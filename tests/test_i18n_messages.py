"""Every planner message a page can show has its Spanish: input rules, notes, warnings, refusals.

Planner messages are :class:`planner.messages.Message` objects built from constant English templates, so the
catalogue is checked against the templates themselves (by reading the source), and then against what the
planner really says: every refusal the fuzz strategies reach, and every note for every catalog model and KV
format the Model and Plan pages offer. A message may come back unchanged only when it holds no English words.
"""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import fuzz_surfaces as fs
from catalogue import entry
from kvplan_app.i18n import translate_message
from planner.catalog.entries import models
from planner.engines.capacity import VLLMSettings, theory_vs_engine, vllm_capacity
from planner.errors import PlanInputError, PydanticRule
from planner.kv.formats import FORMATS
from planner.kv.notes import past_maximum_note, window_cap
from planner.messages import Message, msg
from planner.kv.models import NATIVE
from planner.plan import make_inputs, plan
from planner.plan.rebase import rebase
from planner.units import GiB
from test_probe_layout import result_dict  # the hand-written DeepSeek V4.1 ProbeResult at 1,000 tokens

ROOT = Path(__file__).resolve().parents[1]
PLANNER = ROOT / "planner"
SOURCES = [*sorted(PLANNER.rglob("*.py")), ROOT / "kvplan_app" / "state.py", ROOT / "kvplan_app" / "links.py",
           ROOT / "kvplan_app" / "link_models.py", ROOT / "kvplan_app" / "jobs.py",
           ROOT / "kvplan_app" / "views" / "probe.py"]
"""Where planner messages are written (and the dashboard's link warnings: the codec and the session state)."""

ENGLISH_WORDS = frozenset(
    "the is are not with of and per this for needs need only when an to at by from or be it its which would "
    "cannot must than into on was were has have there their these those each every".split())
"""Function words that mark a sentence as English (none is also a Spanish word)."""
_QUOTED = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"")
_FIELD_OR_NAME = re.compile(r"\{[^{}]*\}|\S*[_./=]\S*|--\S+")
"""A template field, or a token holding ``_ . / =`` (an identifier, a path, a URL, a flag value)."""


def english_words(text: str) -> set[str]:
    """English function words in ``text`` outside code spans and quoted values."""
    plain = _FIELD_OR_NAME.sub(" ", _QUOTED.sub(" ", text))
    return {w for w in re.findall(r"[^\W\d_]+", plain) if w.lower() in ENGLISH_WORDS}


# ---------------------------------------------------------------------------
# The catalogue against the templates in the source
# ---------------------------------------------------------------------------

def _constants(node: ast.AST) -> list[str]:
    """String constants an expression can evaluate to (a constant, ``a if c else b``, a dict's values)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _constants(node.body) + _constants(node.orelse)
    if isinstance(node, ast.Dict):
        return [s for v in node.values for s in _constants(v)]
    return []


def source_templates() -> dict[str, str]:
    """Every ``msg(...)`` template in :data:`SOURCES` -> where it is (a template held in a variable or a dict of
    templates is followed to its assignment in the same module)."""
    out: dict[str, str] = {}
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assigned: dict[str, list[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).extend(_constants(node.value))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "msg" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Subscript):
                    arg = arg.value
                found = _constants(arg) or (assigned.get(arg.id, []) if isinstance(arg, ast.Name) else [])
                if not found and isinstance(arg, ast.Name) and arg.id in ("noun", "unit"):
                    continue  # a word its caller names ("plan file"): checked where it is made
                assert found, f"{path.relative_to(ROOT)}:{node.lineno}: msg() needs a constant template"
                for text in found:
                    out.setdefault(text, f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _spanish(template: str) -> str | None:
    """The catalogue's translation of a template (None when it has none)."""
    found = entry(template)
    return found.string if found is not None and isinstance(found.id, str) and found.string else None


def test_every_template_has_its_spanish():
    templates = source_templates()
    assert len(templates) > 250  # input rules, notes, warnings: the planner's sentences
    missing = {t: where for t, where in templates.items() if _spanish(t) is None}
    assert not missing, missing
    bad = {t: _spanish(t) for t in templates if _fields(t) != _fields(_spanish(t))}
    assert not bad, bad


def test_spanish_templates_hold_no_english():
    english = {_spanish(t): sorted(english_words(_spanish(t))) for t in source_templates()
               if english_words(_spanish(t))}
    assert not english, english


def test_every_input_rule_is_a_message():
    """A PlanInputError's rule is written with msg() (or passed on from one), never as inline English."""
    inline = []
    for path in sorted(PLANNER.rglob("*.py")):
        if "cli" in path.parts:
            continue  # the CLI prints English only
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("PlanInputError", "bad") \
                    and len(node.args) > 2 and isinstance(node.args[2], (ast.Constant, ast.JoinedStr, ast.BinOp)):
                inline.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not inline, inline


def test_a_message_is_its_english_text_and_survives_pickling():
    import pickle

    m = msg("at most {tokens:,} tokens ({why})", tokens=131072, why=msg("the model's maximum"))
    assert m == "at most 131,072 tokens (the model's maximum)" and isinstance(m, str)
    back = pickle.loads(pickle.dumps(PlanInputError("context_tokens", 200_000, m)))
    assert back.allowed.template == m.template and back.allowed.values["tokens"] == 131072


# ---------------------------------------------------------------------------
# What the planner says, translated
# ---------------------------------------------------------------------------

def _neutral(text: object) -> object:
    """``text`` with every plain-``str`` value (a name, an id, a user's value, an OS error) replaced by "X", so
    only the catalogue's own words remain (a pydantic rule is said from its type: kept as it is)."""
    if isinstance(text, PydanticRule):
        return text
    if isinstance(text, PlanInputError):
        return PlanInputError("field", "X", _neutral(text.allowed))
    if isinstance(text, Message):
        return Message(text.template, **{k: v if isinstance(v, (int, float, Message)) else "X"
                                         for k, v in ((k, _neutral(v)) for k, v in text.values.items())})
    return text


def assert_spanish(message: object) -> None:
    """``message`` translates (or holds no English), and its Spanish has no English words of its own."""
    spanish = translate_message(message, "es")
    english = str(message)
    assert spanish != english or not english_words(english), english
    words = english_words(translate_message(_neutral(message), "es"))
    assert not words, (words, english, spanish)


REFUSALS: list[PlanInputError] = []


@pytest.fixture
def record_refusals(monkeypatch):
    """Every refusal (and link warning) the fuzz checks meet, as the pages would get them."""
    import fuzz_cli
    import kvplan_app.links as links

    check, parse = fs.assert_clear, links.inputs_from_query

    def recording(exc):
        check(exc)
        REFUSALS.append(exc)

    def parse_recording(*args, **kwargs):
        inputs, warnings = parse(*args, **kwargs)
        REFUSALS.extend(warnings)
        return inputs, warnings

    monkeypatch.setattr(fs, "assert_clear", recording)
    monkeypatch.setattr(fuzz_cli, "assert_clear", recording)
    monkeypatch.setattr(links, "inputs_from_query", parse_recording)
    REFUSALS.clear()
    yield REFUSALS


@pytest.mark.parametrize("surface", [s for s in fs.SURFACES if s != "cli"])  # the CLI prints English
def test_every_refusal_the_fuzz_reaches_translates(surface, record_refusals):
    strategy, check = fs.STRATEGIES[surface]

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.filter_too_much])
    @given(strategy)
    def run(value):
        check(value)

    run()
    assert record_refusals, surface
    for exc in record_refusals:
        assert_spanish(exc)


def _raises(call) -> PlanInputError:
    with pytest.raises(PlanInputError) as info:
        call()
    return info.value


DIRECTED = {
    "hit rate": lambda: make_inputs(hit_rate=2.0),
    "unknown field": lambda: make_inputs(no_such_field=1),
    "typed tokens": lambda: fs.check_token_text("12x") or _parse("12x"),
    "custom gpu": lambda: plan(make_inputs(gpu_id="custom")),
    "tp divisor": lambda: make_inputs(gpus_per_replica=8, pipeline_parallel_size=3),
    "bad config": lambda: fs.check_config("{not json") or _import("{not json"),
    "config heads": lambda: _import('{"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 64, '
                                    '"num_key_value_heads": 2}'),
    "plan file": lambda: _planfile('{"kvplan_plan": 1}'),
    "probe result": lambda: _probe("{}"),
    "probe result array": lambda: _probe(json.dumps({**result_dict(), "groups": 5})),  # JSON mode: "a valid array"
    "probe result object": lambda: _probe(json.dumps({**result_dict(), "groups": [3]})),  # JSON mode: "an object"
    "trace": lambda: _trace(b'{"timestamp": 1}\n'),
    "engine max_model_len": lambda: vllm_capacity(models()["qwen2.5-72b"], 40 * GiB, 10**12),
    "format": lambda: models()["deepseek-v4-flash"].estimate(1_000, "no-such-format"),
}
"""Bad inputs per surface, each refused with a PlanInputError."""


def _parse(text):
    from planner.units import parse_tokens
    return parse_tokens(text)


def _import(text):
    from planner.hf.config import model_from_config, parse_config_text
    return model_from_config(parse_config_text(text))


def _planfile(text):
    from planner.files.planfile import loads
    return loads(text)


def _probe(text):
    from planner.probe.result import load_probe_result
    return load_probe_result(text)


def _trace(data):
    from planner.traces import read_trace
    return read_trace(data, name="trace.jsonl")


@pytest.mark.parametrize("name", DIRECTED)
def test_directed_refusals_translate(name):
    assert_spanish(_raises(DIRECTED[name]))


PAGE_FORMATS = [NATIVE, *FORMATS]
"""The KV formats the Model and Plan pages offer."""


def _notes(model_id: str, kv_format: str) -> list[object]:
    """Every note, warning and refusal the Plan and Model pages show for this model and format."""
    model = models()[model_id]
    out: list[object] = list(model.notes)
    try:
        result = plan(make_inputs(model_id=model_id, kv_format=kv_format))
    except PlanInputError as exc:
        return out + [exc]
    out += [result.message, result.parallelism_note, result.overflow_message]
    dp = plan(make_inputs(model_id=model_id, kv_format=kv_format, attention_parallelism="dp", gpus_per_replica=8,
                          context_tokens=8_000, target_sessions_per_gpu=10_000, host_ram_gib=1, ssd_gib=1))
    out += [dp.message, dp.parallelism_note, dp.overflow_message]
    out.append(past_maximum_note(model, 10**8))
    if (cap := window_cap(model, kv_format)) is not None:
        out.append(cap.sentence)
    for settings_ in (VLLMSettings(), VLLMSettings(hybrid_kv_cache_manager=False, block_size=64)):
        for call in (lambda: theory_vs_engine(model, 100_000, kv_format, 2, 1, settings_),
                     lambda: vllm_capacity(model, 40 * GiB, None, kv_format, 2, 1, settings_)):
            try:
                got = call()
            except PlanInputError as exc:
                out.append(exc)
                continue
            out += list(getattr(got, "reasons", ())) + [getattr(got, "note", "")]
    return [m for m in out if m]


@pytest.mark.parametrize("model_id", list(models()))
def test_every_note_for_every_model_and_format_translates(model_id):
    seen = 0
    for kv_format in PAGE_FORMATS:
        for message in _notes(model_id, kv_format):
            assert_spanish(message)
            seen += 1
    assert seen >= len(PAGE_FORMATS)


def test_measured_figures_dropped_on_rebase_translate():
    start = make_inputs(model_id="deepseek-v4.1-flash", measured_kv_bytes_per_token=445, measured_usable_kv_gib=50.0,
                        weights_gib=10.0, state_bytes_per_sequence=1_000)
    _, notices = rebase(start, model_id="llama-3.1-8b", gpu_id="b200")
    assert len(notices) == 4
    for notice in notices:
        assert_spanish(notice)


def test_numbers_inside_a_message_follow_the_locale():
    exc = _raises(lambda: make_inputs(context_tokens=-5))
    assert translate_message(exc, "es") == ("context_tokens: -5 no está permitido; se espera un número entero en "
                                            "[1, 100.000.000]")
    note = past_maximum_note(models()["llama-3.1-8b"], 1_000_000)
    assert "1.000.000 tokens" in translate_message(note, "es") and "131.072 tokens" in translate_message(note, "es")
    assert translate_message(note, "en") == note


CONFIGS = sorted((PLANNER / "data" / "models").glob("*.config.json"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name.removesuffix(".config.json"))
def test_every_import_report_note_translates(path):
    """What the Model page's import report says about each shipped config.json (derived, defaulted, ignored)."""
    from planner.hf.config import model_from_config, parse_config_text

    model = model_from_config(parse_config_text(path.read_bytes()), name=path.name)
    notes = [f.note for f in model.config_report if f.note]
    assert notes, "every shipped config has something derived or defaulted"
    for note in notes:
        assert_spanish(note)


@pytest.mark.parametrize("text", ['{"a": 1,}', '{"a" 1}', '{"a": 1 "b": 2}', "", '{"a": "x', "[1] 2",
                                  '{"a": "\\q"}', '{"a": "\x01"}', '{"a": "\\u12"}'])
def test_json_decoder_reasons_in_spanish(text):
    """Python's json decoder messages (config.json import, plan file, ProbeResult) in Spanish, position included."""
    from planner.hf.config import parse_config_text
    from planner.errors import PlanInputError
    from planner.files.planfile import loads
    from planner.probe.result import load_probe_result

    for read in (lambda: parse_config_text(text, "x.json"), lambda: loads(text), lambda: load_probe_result(text)):
        with pytest.raises(PlanInputError) as info:
            read()
        shown = translate_message(info.value, "es")
        assert "línea 1, columna" in shown and "se esperaba" in shown or "no válid" in shown or "de más" in shown \
            or "sin cerrar" in shown, shown
        assert not re.search(r"Expecting|Invalid|Extra data|Unterminated|JSONDecodeError|\bline\b", shown), shown


def test_a_missing_schema_version_is_said_missing():
    """A plan file or ProbeResult without schema_version: '(missing)' / '(falta)', never 'None'."""
    from planner.errors import PlanInputError
    from planner.files.planfile import loads
    from planner.probe.result import load_probe_result

    for read in (lambda: loads('{"inputs": {}}'), lambda: load_probe_result("{}")):
        with pytest.raises(PlanInputError) as info:
            read()
        assert re.search(r"schema_version: \(missing\) is not allowed; expected [12] \(the field is missing\)",
                         str(info.value))
        shown = translate_message(info.value, "es")
        assert "schema_version: (falta)" in shown and "None" not in shown, shown


PYDANTIC_CTX = {"gt": 0, "ge": 0.5, "lt": 1, "le": 1e16, "multiple_of": 2, "min_length": 2, "max_length": 1,
                "actual_length": 3, "field_type": "Tuple", "expected": "'tp', 'dp' or 'ep'", "class_name": "PlanInputs",
                "pattern": "^[a-z]+$", "error": "input is too short", "expected_plural": "s"}
"""A context with every field the rules of :mod:`kvplan_app.pydantic_rules` read."""


def _pydantic_text(kind: str, ctx: dict) -> str:
    """pydantic's own English for an error of type ``kind`` (its Python-mode wording)."""
    from pydantic_core import PydanticKnownError

    try:
        return PydanticKnownError(kind, ctx).message().removeprefix("Input should be ")
    except Exception:  # noqa: BLE001 - a type whose context is not this one
        return f"pydantic's own sentence for {kind}"


@pytest.mark.parametrize("ctx", [PYDANTIC_CTX, {**PYDANTIC_CTX, "min_length": 1, "max_length": 2}, {}])
def test_every_pydantic_error_type_says_its_rule_in_spanish(ctx):
    """Every error type pydantic-core can emit is said by its type and context, never by pydantic's English: its
    own sentence when kvplan_app.pydantic_rules lists it (and its context is there), else the generic one that
    names the type, inside the usual "field: value ..." sentence."""
    from typing import get_args

    from pydantic_core import core_schema

    from kvplan_app.pydantic_rules import RULES

    kinds = get_args(core_schema.ErrorType)
    assert len(kinds) > 90
    generic = []
    for kind in kinds:
        english = _pydantic_text(kind, ctx)
        error = PlanInputError("inputs.field", "X", PydanticRule(english, kind, ctx))
        spanish = translate_message(error, "es")
        assert spanish.startswith("inputs.field: 'X' no está permitido; se espera "), (kind, spanish)
        assert not english_words(spanish) and (english not in spanish or not english_words(english)), (kind, spanish)
        if "error de validación" in spanish:
            assert kind in spanish, spanish
            generic.append(kind)
    known = {k.split(":")[0] for k in RULES}
    assert not [k for k in generic if k in known and ctx], generic  # a listed type with its context: its own rule
    assert {"greater_than", "int_parsing", "literal_error", "list_type", "too_long"} <= known


def test_pydantic_rules_by_type_not_by_wording():
    """JSON mode and Python mode word one error differently; the page says the same rule for both."""
    array = PydanticRule("a valid array", "list_type", {})
    listed = PydanticRule("a valid list", "list_type", {})
    assert translate_message(array, "es") == translate_message(listed, "es") == "una lista válida"
    assert translate_message(PydanticRule("greater than 0.000000001", "greater_than", {"gt": 1e-9}), "es") == \
        "mayor que 0,000000001"
    one = PydanticRule("x", "too_long", {"field_type": "Tuple", "max_length": 1, "actual_length": 3})
    many = PydanticRule("x", "too_long", {"field_type": "Tuple", "max_length": 64, "actual_length": 65})
    assert translate_message(one, "es") == "una tupla de 1 elemento como máximo tras la validación (tiene 3)"
    assert translate_message(many, "es") == "una tupla de 64 elementos como máximo tras la validación (tiene 65)"
    assert translate_message(one, "en") == "x"  # the English is pydantic's own
