"""The gettext catalogue: every entry translated, every wrapped string an entry, none stale, the .mo compiled from
the .po, placeholders kept, numbers per locale."""

from __future__ import annotations

import ast
import gettext
import io
import re

import pytest
from babel.messages.mofile import read_mo, write_mo

from catalogue import (
    LOCALES, MO, PO, ROOT, entries, entry, fields, source_strings, spanish, spanish_catalogue, wrapped_strings,
)
from kvplan_app.i18n import (
    DATA, DOMAIN, LANGUAGES, NAME_WORDS, NAME_WORDS_CONTEXT, localize_numbers, translate_message, translate_words,
    translations, translator,
)

APP = sorted((ROOT / "kvplan_app").rglob("*.py"))
"""The dashboard's modules: every ``t("...")`` and ``tn("...", "...")`` in them has its Spanish."""
FIGURES = [ROOT / "kvplan_app" / "charts" / name for name in ("figures.py", "frontier.py", "style.py", "traces.py")]
"""Figure builders: every ``tr("...")`` (the page's translator, English by default) has its Spanish too."""


def _forms(message) -> list[tuple[str, str]]:
    """(English, Spanish) per form of a catalogue entry (singular and plural for a plural entry)."""
    if isinstance(message.id, tuple):
        return list(zip(message.id, message.string))
    return [(message.id, message.string)]


def test_every_entry_is_translated_and_not_fuzzy():
    catalog = spanish_catalogue()
    assert not catalog.fuzzy and catalog.num_plurals == 2 and catalog.plural_expr == "(n != 1)"
    assert len(entries()) > 1_000
    untranslated = [m.id for m in entries() if not all(spanish for _, spanish in _forms(m))]
    fuzzy = [m.id for m in entries() if m.fuzzy]
    assert not untranslated and not fuzzy, (untranslated, fuzzy)


def test_placeholders_survive_translation():
    bad = {english: spanish for m in entries() for english, spanish in _forms(m) if fields(english) != fields(spanish)}
    assert not bad, bad


def test_the_compiled_catalogue_is_the_po():
    """kvplan.mo is kvplan.po compiled (``pybabel compile -d kvplan_app/locales -D kvplan``)."""
    def messages(catalog):
        def plain(v):
            return tuple(v) if isinstance(v, (list, tuple)) else v

        return {(plain(m.id), m.context): plain(m.string) for m in catalog if m.id}

    compiled = io.BytesIO()
    write_mo(compiled, spanish_catalogue())
    with MO.open("rb") as f:
        shipped = read_mo(f)
    assert messages(shipped) == messages(read_mo(io.BytesIO(compiled.getvalue()))) == messages(spanish_catalogue())


def test_every_wrapped_string_has_its_spanish():
    wrapped = wrapped_strings(("t", "tn"), APP)
    assert len(wrapped) > 400  # every page's labels, help texts, captions and sentences
    missing = {k: where for k, where in wrapped.items() if k[0] != "?" and not _translated(k)}
    assert not missing, missing


def test_every_chart_word_has_its_spanish():
    words = wrapped_strings(("tr",), FIGURES)
    assert len(words) > 40  # the builders' titles, axes, legends, hovers and labels (default titles included)
    missing = {k: where for k, where in words.items() if k[0] != "?" and not _translated(k)}
    assert not missing, missing


def _translated(key: str | tuple[str, str]) -> bool:
    found = entry(key[0] if isinstance(key, tuple) else key)
    return found is not None and (found.id == key if isinstance(key, tuple) else isinstance(found.id, str)) \
        and all(s for _, s in _forms(found))


def test_no_entry_is_stale():
    """Every English text of the catalogue is still written somewhere in the source (a wrapped string, a template,
    a rule, a data value, a word of a group name)."""
    source = source_strings()
    stale = [english for m in entries() for english, _ in _forms(m) if english not in source]
    assert not stale, stale


def test_data_words_have_their_spanish():
    """The words of group names, and the whole values the pages show in words, under their message contexts."""
    missing = [shape for shape in NAME_WORDS if entry(shape, NAME_WORDS_CONTEXT) is None]
    assert not missing, missing
    values = [m.id for m in entries() if m.context == DATA]
    assert {"capped", "growing", "merged", "random", "session", "native", "none"} <= set(values)
    assert {m.context for m in entries()} == {None, DATA, NAME_WORDS_CONTEXT}


def test_words_kept_in_data_read_in_spanish():
    assert translate_words("sliding window 1,024, 8 KV heads", "es") == "ventana deslizante 1.024, 8 cabezas KV"
    assert translate_words("compressed 1/4 main, 1 KV heads, Mamba2 SSM state", "es") == \
        "principal comprimida 1/4, 1 cabeza KV, estado SSM de Mamba2"
    # the same English worded per use: a rate limit in a table cell, and inside a sentence
    assert translate_words("none", "es") == "ninguno" and spanish("none") == "nada"
    assert translate_words("an id the catalogue lacks", "es") == "an id the catalogue lacks"
    assert translate_words("sliding window 1,024", "en") == "sliding window 1,024"


def test_chart_defaults_are_english():
    import pandas as pd

    from kvplan_app.charts.traces import ttl_curve_figure

    ttl = pd.DataFrame({"ttl_s": [60.0, float("inf")], "token_hit_rate": [0.2, 0.5], "block_hit_rate": [0.1, 0.4]})
    english = ttl_curve_figure(ttl, plan_ttl_s=float("inf"))
    spanish_fig = ttl_curve_figure(ttl, plan_ttl_s=float("inf"), tr=translator("es"))
    assert english.layout.yaxis.title.text == "Hit rate"
    assert spanish_fig.layout.yaxis.title.text == spanish("Hit rate") != "Hit rate"
    # the plan's line is named in the legend (a shape's name), not written on the plot
    assert [s.name for s in spanish_fig.layout.shapes if s.showlegend] == [
        spanish("this plan: {ttl}").format(ttl=spanish("no TTL"))]
    assert {t.name for t in spanish_fig.data} == {spanish("token-weighted"), spanish("block-weighted")}


def test_languages_have_catalogues():
    """English is the source text; every other language has its .po and compiled .mo, read by gettext."""
    assert set(LANGUAGES) == {"en", "es"}
    for lang in set(LANGUAGES) - {"en"}:
        assert (LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.po").is_file()
        assert isinstance(translations(lang), gettext.GNUTranslations)
    assert type(translations("en")) is gettext.NullTranslations
    assert translations("es").ngettext("{n} session", "{n} sessions", 1) == "{n} sesión"
    assert translations("es").ngettext("{n} session", "{n} sessions", 2) == "{n} sesiones"
    assert PO.is_file() and MO.is_file()


def test_numbers_per_locale():
    # Spanish (RAE): decimal comma, thousands point. English text is left as it is.
    assert localize_numbers("0.89 GB (0.829 GiB), 1,144 sessions", "es") == "0,89 GB (0,829 GiB), 1.144 sessions"
    assert localize_numbers("1,000,000 tokens at 20,000.5 tokens/s", "es") == "1.000.000 tokens at 20.000,5 tokens/s"
    assert localize_numbers("0.89 GB", "en") == "0.89 GB"
    assert not re.search(r"\d,\d{3}", localize_numbers("12,031 requests", "es"))


def test_names_inside_a_number_string_stay():
    assert localize_numbers("DeepSeek V4.1-Flash on H200: 0.89 GB", "es") == "DeepSeek V4.1-Flash on H200: 0,89 GB"


def test_planner_messages_by_their_template():
    from planner.errors import PlanInputError
    from planner.messages import Figure, msg
    from planner.recommend import _ONE_FEWER

    one_fewer = msg(_ONE_FEWER[False, False], gpus=23, replicas=2, capacity=Figure("878"), unit=msg("sessions"),
                    target=Figure("1,000"))
    assert one_fewer == "23 GPUs: 2 whole replicas = 878 sessions < 1,000: fails"
    assert translate_message(one_fewer, "es") == "23 GPU: 2 réplicas enteras = 878 sesiones < 1.000: no llega"  # numbers per locale
    assert translate_message(one_fewer, "en") == one_fewer
    # a rule the catalogue lacks: the whole message stays English, never half translated
    for rule in ("a number in [0, 1]", msg("a number in [{lo}, {hi}]", lo=0, hi=1)):
        free = PlanInputError("hit_rate", 2.0, rule)
        assert translate_message(free, "es") == str(free)
    assert translate_message("something planner never says", "es") == "something planner never says"
    # plain text the planner keeps as a constant (a catalog note) is its own message id
    note = "Weights priced as MXFP4 throughout; attention weights actually stay BF16."
    assert translate_message(note, "es") == spanish(note) != note


def test_recommend_rows_keep_their_messages():
    """The Recommend page's 'one GPU fewer' column holds the planner's messages, not their English text."""
    from planner.frontier import Accelerator
    from planner.messages import Message
    from planner.plan import make_inputs
    from planner.recommend import recommend

    rec = recommend(make_inputs(model_id="llama-3.1-8b"), [Accelerator("h200")], target_kind="sessions",
                    target=1_000, verify=2)
    assert all(isinstance(why, Message) for why in rec.frame["one_fewer"])
    assert "no llega" in translate_message(rec.frame["one_fewer"].iloc[0], "es")


def test_bundled_trace_names_have_their_spanish():
    # the Traces page's trace choices are the samples' labels: each shown in Spanish under ?lang=es
    from planner.traces.samples import SAMPLES

    missing = [s.label for s in SAMPLES.values() if entry(s.label) is None]
    assert not missing, missing


def _imports(path) -> set[str]:
    """Modules ``path`` imports, at the top or inside functions."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def test_the_catalogue_module_imports_no_page_state():
    """kvplan_app.i18n never imports kvplan_app.state (the language switch lives in the router), so the two can never
    form an import circle."""
    i18n = _imports(ROOT / "kvplan_app" / "i18n.py")
    assert not {m for m in i18n if m.startswith("kvplan_app.") and m not in ("kvplan_app.pydantic_rules",)}, i18n


@pytest.mark.parametrize("path", ["kvplan_app/i18n.py", "kvplan_app/pydantic_rules.py", "kvplan_app/router.py"])
def test_translation_modules_stay_small(path):
    assert len((ROOT / path).read_text(encoding="utf-8").splitlines()) <= 500


def test_every_state_group_name_is_translated():
    # the state groups' names (planner/hf/state.py) are data: the Spanish pages translate their words
    import re
    from pathlib import Path
    source = (Path(__file__).resolve().parents[1] / "planner" / "hf" / "state.py").read_text()
    names = set(re.findall(r'StateGroup\(name="([^"]+)"', source))
    assert "lightning attention state" in names and "short convolution state" in names
    for name in names:
        assert translate_words(name, "es") != name, name
