"""The string catalogue: every wrapped string has its Spanish, placeholders survive, numbers per locale."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

from kvplan_app.i18n import CATALOGUES, LANGUAGES, localize_numbers
from kvplan_app.locales import es

ROOT = Path(__file__).resolve().parents[1]
TRANSLATED = [ROOT / "kvplan_app" / "router.py", ROOT / "kvplan_app" / "share.py",
              *(ROOT / "kvplan_app" / "views" / f"{p}.py" for p in ("model", "traces", "probe", "recommend", "reconcile")),
              ROOT / "kvplan_app" / "views" / "plan.py", ROOT / "kvplan_app" / "views" / "frontier.py",
              ROOT / "kvplan_app" / "views" / "context.py"]
"""Scripts whose every ``t("...")`` must have a Spanish line (add a page here once its strings are wrapped)."""
FIGURES = [ROOT / "planner" / "figures.py", ROOT / "planner" / "traces" / "figures.py"]
"""Figure builders: every ``tr("...")`` (the page's translator, English by default) has a Spanish line too."""


def _wrapped(path: Path, name: str = "t") -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.append(node.args[0].value)
    return out


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_wrapped_string_has_its_spanish():
    missing = [(p.name, s) for p in TRANSLATED for s in _wrapped(p) if s not in es.STRINGS]
    assert not missing, missing


def test_every_chart_word_has_its_spanish():
    words = [(p.name, s) for p in FIGURES for s in _wrapped(p, "tr")]
    assert len(words) > 40  # the builders' titles, axes, legends, hovers and labels
    missing = [(name, s) for name, s in words if s not in es.STRINGS]
    assert not missing, missing


def test_chart_defaults_are_english():
    import pandas as pd

    from kvplan_app.charts.traces import ttl_curve_figure

    ttl = pd.DataFrame({"ttl_s": [60.0, float("inf")], "token_hit_rate": [0.2, 0.5], "block_hit_rate": [0.1, 0.4]})
    english = ttl_curve_figure(ttl, plan_ttl_s=float("inf"))
    spanish = ttl_curve_figure(ttl, plan_ttl_s=float("inf"), tr=lambda s: es.STRINGS.get(s, s))
    assert english.layout.yaxis.title.text == "Hit rate"
    assert spanish.layout.yaxis.title.text == es.STRINGS["Hit rate"] != "Hit rate"
    assert spanish.layout.annotations[0].text == es.STRINGS["this plan: {ttl}"].format(ttl=es.STRINGS["no TTL"])
    assert {t.name for t in spanish.data} == {es.STRINGS["token-weighted"], es.STRINGS["block-weighted"]}


def test_placeholders_survive_translation():
    bad = {k: v for k, v in es.STRINGS.items() if _fields(k) != _fields(v)}
    assert not bad, bad


def test_languages_have_catalogues():
    assert set(LANGUAGES) == set(CATALOGUES) == {"en", "es"}


def test_numbers_per_locale():
    # Spanish (RAE): decimal comma, thousands point. English text is left as it is.
    assert localize_numbers("0.89 GB (0.829 GiB), 1,144 sessions", "es") == "0,89 GB (0,829 GiB), 1.144 sessions"
    assert localize_numbers("1,000,000 tokens at 20,000.5 tokens/s", "es") == "1.000.000 tokens at 20.000,5 tokens/s"
    assert localize_numbers("0.89 GB", "en") == "0.89 GB"
    assert not re.search(r"\d,\d{3}", localize_numbers("12,031 requests", "es"))


def test_names_inside_a_number_string_stay():
    assert localize_numbers("DeepSeek V4.1-Flash on H200: 0.89 GB", "es") == "DeepSeek V4.1-Flash on H200: 0,89 GB"


def test_planner_messages_by_their_english_text():
    from kvplan_app.i18n import translate_message
    from planner.errors import PlanInputError

    one_fewer = "23 GPUs: 2 whole replicas = 878 sessions < 1,000: fails"
    assert translate_message(one_fewer, "es") == "23 GPU: 2 réplicas enteras = 878 sesiones < 1.000: no llega"  # numbers per locale
    assert translate_message(one_fewer, "en") == one_fewer
    # a rule the catalogue lacks: the whole message stays English, never half translated
    free = str(PlanInputError("hit_rate", 2.0, "a number in [0, 1]"))
    assert translate_message(free, "es") == free
    assert translate_message("something planner never says", "es") == "something planner never says"


def test_message_templates_keep_their_fields():
    bad = {k: v for k, v in es.MESSAGES.items() if _fields(k) != _fields(v)}
    assert not bad, bad


def test_bundled_trace_names_have_their_spanish():
    # the Traces page's trace choices are the samples' labels: each shown in Spanish under ?lang=es
    from planner.traces.samples import SAMPLES

    missing = [s.label for s in SAMPLES.values() if s.label not in es.STRINGS]
    assert not missing, missing
