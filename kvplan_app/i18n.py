"""The dashboard's words in English and Spanish: one catalogue, a language per session, numbers per locale.

Strings are written in English in the page scripts and wrapped in :func:`t`;
the Spanish catalogue (``kvplan_app/locales/es.py``) maps each English string
to its translation. A string missing from the catalogue shows in English, and
``tests/test_i18n.py`` lists every wrapped string that has no translation, so
adding a page means wrapping its strings and adding lines to the catalogue.

Placeholders use ``str.format`` names: ``t("KV at {tokens} tokens", tokens="1,000")``.
Numbers shown in the UI go through :func:`num` (thousands and decimal
separators of the language); CSV and plan files keep one machine format
whatever the language.

The language comes from the link (``?lang=es``, kept in share links; English,
the default, is left out of links) or the sidebar switch, and is remembered
for the session.
"""

from __future__ import annotations

import re
import string
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from kvplan_app.locales import es, es_words
from planner.errors import MISSING, PlanInputError, short_repr
from planner.messages import Figure, Message

LANGUAGES: dict[str, str] = {"en": "English", "es": "Español"}
"""Language code -> its name, in that language (the sidebar switch shows these)."""
DEFAULT_LANGUAGE = "en"
LANG_PARAM = "lang"
"""Query key of the language in links."""

CATALOGUES: dict[str, dict[str, str]] = {"en": {}, "es": es.STRINGS}
"""Language -> English text -> translation (English maps to itself)."""
MESSAGES: dict[str, dict[str, str]] = {"en": {}, "es": es.MESSAGES}
"""Language -> planner's English message (a fixed sentence, or a template with ``{name}`` fields) -> translation."""
PATTERNS: dict[str, dict[str, str]] = {"en": {}, "es": es.PATTERNS}
"""Language -> English text shapes (``{name}`` fields) matched against plain text that carries no template."""

WORDS: dict[str, tuple[dict[str, str], tuple[tuple[str, str], ...]]] = {
    "es": (es_words.VALUES, es_words.GROUP_WORDS + es_words.VALUE_SHAPES)}
"""Language -> (whole values -> translation, (regular expression, replacement) over words kept in data)."""

_SESSION_KEY = "ui_lang"
_NUMBER = re.compile(r"(?<![A-Za-z\d.,])\d(?:[\d,]*\d)?(?:\.\d+)?")
"""A number in English format, not part of a name (``V4.1`` and ``H200`` stay as they are); a comma after it
separates a list (``128, 8``)."""


def language() -> str:
    """This session's language: the sidebar choice, else the link's ``lang``, else English.

    Outside a script run (a widget's ``format_func`` called by Streamlit's AppTest between runs) there is no
    session: the language of the last run in this process is used.
    """
    global _LAST_LANGUAGE
    if get_script_run_ctx(suppress_warning=True) is None:
        return _LAST_LANGUAGE
    lang = st.session_state.get(_SESSION_KEY)
    if lang not in LANGUAGES:
        lang = str(st.query_params.get(LANG_PARAM, DEFAULT_LANGUAGE))
        lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
        st.session_state[_SESSION_KEY] = lang
    _LAST_LANGUAGE = lang
    return lang


_LAST_LANGUAGE = DEFAULT_LANGUAGE


def t(text: str, /, **values: Any) -> str:
    """``text`` in this session's language, with ``values`` put into its ``{name}`` placeholders."""
    out = CATALOGUES.get(language(), {}).get(text, text)
    return out.format(**values) if values else out


def planner_message(text: str | BaseException) -> str:
    """A message written by ``planner`` (a note, a warning, a :class:`PlanInputError`) in this session's language.

    A :class:`planner.messages.Message` is looked up by its template and filled with its values (nested messages
    translated, numbers per locale); a :class:`PlanInputError` by its parts (field and value as they are, the rule
    translated). Plain text is looked up by its English: an exact sentence, or a template whose ``{name}`` fields
    take the values in the message (a field named ``..._t`` holds words and matches only when the catalogue has
    them). A message with any part missing from the catalogue stays whole in English, never half translated.
    """
    return translate_message(text, language())


def translate_message(text: str | BaseException, lang: str) -> str:
    """See :func:`planner_message`; pure (no session)."""
    if lang not in MESSAGES or lang == DEFAULT_LANGUAGE:
        return str(text)
    out = _translated(text, lang)
    return str(text) if out is None else out


def _translated(text: object, lang: str) -> str | None:
    """``text`` in ``lang``, or None when the catalogue lacks any part of it."""
    if isinstance(text, PlanInputError):
        rule = _translated(text.allowed, lang)
        if rule is None or not rule.isprintable():
            return None
        value = text.value
        shown = short_repr(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            shown = localize_numbers(shown, lang)
        elif value is MISSING:
            shown = MESSAGES[lang].get(shown, shown)
        return MESSAGES[lang][_ERROR].format(field=text.field_text, value=shown, allowed=rule)
    if isinstance(text, Message):
        template = MESSAGES[lang].get(text.template)
        if template is None:
            return _legacy(str(text), lang)
        out = []
        for literal, field, spec, conversion in _FORMATTER.parse(template):
            out.append(literal)
            if field is None:
                continue
            value = text.values[field]
            if isinstance(value, (Message, PlanInputError)):
                shown = _translated(value, lang)
                if shown is None:
                    return None
                out.append(format(shown, spec or ""))
                continue
            shown = _FORMATTER.format_field(_FORMATTER.convert_field(value, conversion), spec or "")
            numeric = isinstance(value, (int, float, Figure)) and not isinstance(value, bool) and not conversion
            out.append(localize_numbers(shown, lang) if numeric else shown)
        return "".join(out)
    return _legacy(str(text), lang)


_FORMATTER = string.Formatter()
_ERROR = "{field}: {value} is not allowed; expected {allowed}"
"""The English shape of every :class:`PlanInputError` (see ``planner.errors``); its translation is in MESSAGES."""


def _legacy(text: str, lang: str) -> str | None:
    """Plain English text looked up as an exact sentence or a ``{name}`` template; None when none matches."""
    messages = MESSAGES.get(lang) or {}
    if text in messages:
        return messages[text]
    words = CATALOGUES.get(lang, {})
    for pattern, translation in _templates(lang):
        match = pattern.fullmatch(text)
        if match is None:
            continue
        values = match.groupdict()
        if all(name[-2:] != "_t" or value in words for name, value in values.items()):
            return translation.format(**{k: words[v] if k[-2:] == "_t" else _number_or_text(v, lang)
                                         for k, v in values.items()})
    return None


def _number_or_text(value: str, lang: str) -> str:
    """A matched value: a bare English number (``1,000``) in ``lang``'s format, anything else as it is."""
    return localize_numbers(value, lang) if _NUMBER.fullmatch(value) else value


_FIELD = re.compile(r"\{(\w+)\}")
_COMPILED: dict[str, list[tuple[re.Pattern, str]]] = {}


def _templates(lang: str) -> list[tuple[re.Pattern, str]]:
    """The language's text shapes as regular expressions, longest first ("greater than or equal to {n}" before
    "greater than {n}")."""
    if lang not in _COMPILED:
        out = []
        for english, translation in sorted((PATTERNS.get(lang) or {}).items(), key=lambda kv: -len(kv[0])):
            if _FIELD.search(english):
                parts = _FIELD.split(english)  # text, field, text, field, ...
                if english == _ERROR or len(set(parts[1::2])) < len(parts[1::2]):
                    continue  # filled from a PlanInputError's parts, or a field used twice: a Message's values fill it
                regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
                out.append((re.compile(regex, re.DOTALL), translation))
        _COMPILED[lang] = out
    return _COMPILED[lang]


def words(value: object) -> str:
    """A value kept in English in data (a KV group name, ``capped``, a routing policy) in this session's language,
    numbers per locale; CSV, links and the data keep the English value.

    >>> import kvplan_app.i18n as i; i.translate_words("sliding window 1,024, 8 KV heads", "es")
    'ventana deslizante 1.024, 8 cabezas KV'
    """
    return translate_words(value, language())


def translate_words(value: object, lang: str) -> str:
    """See :func:`words`; pure (no session). A value the word map does not know is shown as it is."""
    text = str(value)
    if lang not in WORDS:
        return text
    whole, shapes = WORDS[lang]
    if text in whole:
        return whole[text]
    for pattern, replacement in shapes:
        text = re.sub(pattern, replacement, text)
    return localize_numbers(text, lang)


def group_names_in_words(message: object) -> object:
    """``message`` (a :class:`Message`, nested ones too) with its KV group names (``name``, ``names`` and ``what``
    values: plain text the planner writes group names into) in this session's
    language (:func:`words`), for :func:`planner_message`; anything else as it is."""
    if not isinstance(message, Message):
        return message
    values = {k: words(v) if k in _GROUP_FIELDS and isinstance(v, str) else group_names_in_words(v)
              for k, v in message.values.items()}
    return Message(message.template, **values)


_GROUP_FIELDS = ("name", "names", "what")


def token_text(tokens: int) -> str:
    """A token count to pre-fill a text box with, in a form :func:`planner.units.parse_tokens` reads back the same:
    ``1,000,000`` in English, ``1 000 000`` in Spanish (spaces group thousands there: ``1.000.000`` would be
    refused as ambiguous and ``1,000,000`` reads as a decimal comma)."""
    text = f"{int(tokens):,}"
    return text if language() == DEFAULT_LANGUAGE else text.replace(",", " ")


def num(text: str) -> str:
    """Numbers inside an English-formatted string (``1,234.5``) written with this language's separators.

    Pass figures, not names: a name such as "Llama 3.1 8B" would be localized too.

    >>> import kvplan_app.i18n as i; i.localize_numbers("0.89 GB (0.829 GiB), 1,144 sessions", "es")
    '0,89 GB (0,829 GiB), 1.144 sessions'
    """
    return localize_numbers(text, language())


def localize_numbers(text: str, lang: str) -> str:
    """See :func:`num`; pure (no session)."""
    if lang == "en":
        return text
    return _NUMBER.sub(lambda m: m.group(0).translate(_SWAP), text)


_SWAP = str.maketrans({",": ".", ".": ","})


def language_switch() -> None:
    """The sidebar's language select; a language other than English goes into the link (``lang``)."""
    from kvplan_app.state import set_link_param  # state holds the link; it never imports this module

    current = language()

    def _chosen() -> None:
        st.session_state[_SESSION_KEY] = st.session_state["ui_lang_choice"]

    st.session_state.setdefault("ui_lang_choice", current)
    st.selectbox("Language · Idioma", list(LANGUAGES), key="ui_lang_choice", format_func=LANGUAGES.get,
                 on_change=_chosen)
    set_link_param(LANG_PARAM, None if current == DEFAULT_LANGUAGE else current)
