"""The dashboard's words in the page's language: a gettext catalogue per language, numbers per locale.

Strings are written in English in the page scripts and wrapped in :func:`t` (:func:`tn` for a sentence about a
count). Their translations are a standard gettext catalogue whose message ids are the English strings:
``kvplan_app/locales/es/LC_MESSAGES/kvplan.po``, compiled to the ``kvplan.mo`` beside it, which is committed
and read with Python's :mod:`gettext` (after editing the ``.po``: ``pybabel compile -d kvplan_app/locales -D
kvplan``). A string missing from the catalogue shows in English; ``tests/test_i18n.py`` lists every wrapped
string without a translation and every entry nothing says any more, ``tests/test_i18n_messages.py`` every
planner template without one.

Placeholders use ``str.format`` names: ``t("KV at {tokens} tokens", tokens="1,000")``. Numbers shown in the UI
go through :func:`num` (thousands and decimal separators of the language); CSV and plan files keep one machine
format whatever the language.

The planner's sentences (:class:`planner.messages.Message`: an English template and its values) are looked up by
their template and filled with their values, numbers in the language's format (:func:`planner_message`);
pydantic's rules by their error type (:mod:`kvplan_app.pydantic_rules`). Values kept in English in data (a KV
group's name, a routing policy) are looked up whole, under the context :data:`DATA`, and else word by word
(:data:`NAME_WORDS`, :func:`words`).

The language comes from the link (``?lang=es``, kept in share links; English, the default, is left out of links)
or the sidebar switch (``kvplan_app.router``), and is remembered for the session.
"""

from __future__ import annotations

import gettext
import re
import string
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from kvplan_app.pydantic_rules import rule_for
from planner.errors import MISSING, PlanInputError, PydanticRule, short_repr
from planner.messages import Figure, Message

LANGUAGES: dict[str, str] = {"en": "English", "es": "Español"}
"""Language code -> its name, in that language (the sidebar switch shows these)."""
DEFAULT_LANGUAGE = "en"
LANG_PARAM = "lang"
"""Query key of the language in links."""
SESSION_KEY = "ui_lang"
"""Session-state key of this session's language."""

DOMAIN = "kvplan"
LOCALE_DIR = str(resources.files("kvplan_app") / "locales")
"""Where the catalogues are: ``<lang>/LC_MESSAGES/kvplan.po`` and its compiled ``kvplan.mo``."""

DATA = "data value"
"""Message context of whole values kept in English in data (``capped``, ``random``, ``native``): the same English
may be worded otherwise in a sentence ("none": "nada" in a sentence, "ninguno" as a rate limit)."""
NAME_WORDS_CONTEXT = "data name words"
"""Message context of :data:`NAME_WORDS`."""
NAME_WORDS: tuple[str, ...] = (
    "compressed {ratio} main", "compressed {ratio} indexer keys", "DSA indexer keys", "MLA latent",
    "{mamba} SSM state", "{mamba} conv state", "linear attention conv state", "linear attention recurrent state",
    "KDA conv state", "KDA recurrent state", "lightning attention state", "short convolution state",
    "fixed session state", "reported state per sequence", "full attention", "sliding window", "window ring",
    "chunked local", "1 KV heads", "1 KV head", "{heads} KV heads",
)
"""The vocabulary of KV group names (``planner.hf.config``, ``config_state``, ``config_deepseek``,
``models``): names are data (tables, CSV, probe results and links keep them in English) and are composed
(``sliding window 1,024, 8 KV heads``), so a page translates the words inside them. Each is a message id (context
:data:`NAME_WORDS_CONTEXT`) matched as whole words, in this order; a field matches :data:`NAME_FIELDS`. This is the
catalogue's one lookup by the shape of a text."""
NAME_FIELDS: dict[str, str] = {"ratio": r"1/\d+", "mamba": r"Mamba\d?", "heads": r"\d+"}
"""What a field of :data:`NAME_WORDS` matches (regular expressions)."""

_NUMBER = re.compile(r"(?<![A-Za-z\d.,])\d(?:[\d,]*\d)?(?:\.\d+)?")
"""A number in English format, not part of a name (``V4.1`` and ``H200`` stay as they are); a comma after it
separates a list (``128, 8``)."""
_SEPARATORS: dict[str, dict[int, str]] = {"es": str.maketrans({",": ".", ".": ","})}
"""Language -> how an English number's separators are written (Spanish, RAE: decimal comma, thousands point)."""


class _Untranslated(gettext.NullTranslations):
    """The end of a strict catalogue's fallback chain: a message the catalogue lacks raises :class:`LookupError`
    (so that a planner message with any part missing stays whole in English)."""

    def gettext(self, message):
        raise LookupError(message)

    def ngettext(self, msgid1, msgid2, n):
        raise LookupError(msgid1)

    def pgettext(self, context, message):
        raise LookupError(message)

    def npgettext(self, context, msgid1, msgid2, n):
        raise LookupError(msgid1)


@lru_cache(maxsize=None)
def translations(lang: str) -> gettext.NullTranslations:
    """The catalogue of ``lang`` (English, or a language without one: every message as it is)."""
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)


@lru_cache(maxsize=None)
def _strict(lang: str) -> gettext.NullTranslations:
    """The catalogue of ``lang`` that raises :class:`LookupError` for a message it lacks."""
    catalogue = gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)
    catalogue.add_fallback(_Untranslated())
    return catalogue


def language() -> str:
    """This session's language: the sidebar choice, else the link's ``lang``, else English.

    Outside a script run (a widget's ``format_func`` called by Streamlit's AppTest between runs) there is no
    session: the language of the last run in this process is used.
    """
    global _LAST_LANGUAGE
    if get_script_run_ctx(suppress_warning=True) is None:
        return _LAST_LANGUAGE
    lang = st.session_state.get(SESSION_KEY)
    if lang not in LANGUAGES:
        lang = str(st.query_params.get(LANG_PARAM, DEFAULT_LANGUAGE))
        lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE
        st.session_state[SESSION_KEY] = lang
    _LAST_LANGUAGE = lang
    return lang


_LAST_LANGUAGE = DEFAULT_LANGUAGE


def t(text: str, /, **values: Any) -> str:
    """``text`` in this session's language, with ``values`` put into its ``{name}`` placeholders."""
    return translate(text, language(), **values)


def tn(singular: str, plural: str, n: int | float, /, **values: Any) -> str:
    """The form of ``singular`` / ``plural`` for the count ``n`` in this session's language (gettext's plural
    rule), with ``values`` put into its placeholders: ``tn("{n} line", "{n} lines", n, n=num(f"{n:,}"))``.

    A count that is not whole (a per-GPU share of 0.25 sessions) takes the plural, as in English and Spanish.
    """
    out = translations(language()).ngettext(singular, plural, plural_count(n))
    return out.format(**values) if values else out


def plural_count(n: int | float) -> int:
    """The whole count gettext's plural rule is asked about for ``n``: ``n`` itself when whole, else 2 (plural).

    >>> plural_count(1), plural_count(1.0), plural_count(0.25), plural_count(17.875)
    (1, 1, 2, 2)
    """
    return int(n) if float(n).is_integer() else 2


def translate(text: str, lang: str, /, **values: Any) -> str:
    """See :func:`t`; pure (no session)."""
    out = translations(lang).gettext(text) if text else text  # "" is the catalogue's header
    return out.format(**values) if values else out


def translator(lang: str) -> Callable[[str], str]:
    """:func:`translate` for ``lang``, as the figure builders take it (``tr``)."""
    catalogue = translations(lang)
    return lambda text: catalogue.gettext(text) if text else text


def planner_message(text: str | BaseException) -> str:
    """A message written by ``planner`` (a note, a warning, a :class:`PlanInputError`) in this session's language.

    A :class:`planner.messages.Message` is looked up by its template and filled with its values (nested messages
    translated, numbers per locale); a :class:`PlanInputError` by its parts (field and value as they are, the rule
    translated); a :class:`~planner.errors.PydanticRule` by its error type and context; plain text by itself. A
    message with any part missing from the catalogue stays whole in English, never half translated.
    """
    return translate_message(text, language())


def translate_message(text: str | BaseException, lang: str) -> str:
    """See :func:`planner_message`; pure (no session)."""
    if lang == DEFAULT_LANGUAGE:
        return str(text)
    try:
        return _translated(text, _strict(lang), lang)
    except LookupError:
        return str(text)


def _translated(text: object, catalogue: gettext.NullTranslations, lang: str) -> str:
    """``text`` in ``lang``; :class:`LookupError` when the catalogue lacks any part of it."""
    if isinstance(text, PlanInputError):
        rule = _translated(text.allowed, catalogue, lang)
        if not rule.isprintable():
            raise LookupError(rule)
        value = text.value
        shown = short_repr(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            shown = localize_numbers(shown, lang)
        elif value is MISSING:
            shown = catalogue.gettext(shown)
        return catalogue.gettext(_ERROR).format(field=text.field_text, value=shown, allowed=rule)
    if isinstance(text, PydanticRule):
        rule, values = rule_for(text.error_type, text.ctx)
        template = (catalogue.ngettext(rule.singular, rule.plural, int(text.ctx[rule.count])) if rule.plural
                    else catalogue.gettext(rule.singular))
        return _filled(template, values, catalogue, lang)
    if isinstance(text, Message):
        return _filled(catalogue.gettext(text.template), text.values, catalogue, lang)
    if not text:
        return str(text)
    return catalogue.gettext(str(text))


def _filled(template: str, values: dict[str, Any], catalogue: gettext.NullTranslations, lang: str) -> str:
    """``template`` (a translation) with ``values``: messages translated, numbers in ``lang``'s format."""
    out = []
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        out.append(literal)
        if field is None:
            continue
        value = values[field]
        if isinstance(value, (Message, PlanInputError)):
            out.append(format(_translated(value, catalogue, lang), spec or ""))
            continue
        shown = _FORMATTER.format_field(_FORMATTER.convert_field(value, conversion), spec or "")
        numeric = isinstance(value, (int, float, Figure)) and not isinstance(value, bool) and not conversion
        out.append(localize_numbers(shown, lang) if numeric else shown)
    return "".join(out)


_FORMATTER = string.Formatter()
_ERROR = "{field}: {value} is not allowed; expected {allowed}"
"""The English shape of every :class:`PlanInputError` (see ``planner.errors``), a message id."""


def words(value: object) -> str:
    """A value kept in English in data (a KV group name, ``capped``, a routing policy) in this session's language,
    numbers per locale; CSV, links and the data keep the English value.

    >>> import kvplan_app.i18n as i; i.translate_words("sliding window 1,024, 8 KV heads", "es")
    'ventana deslizante 1.024, 8 cabezas KV'
    """
    return translate_words(value, language())


def translate_words(value: object, lang: str) -> str:
    """See :func:`words`; pure (no session). A planner message (``40 entries``) is translated as one
    (:func:`translate_message`); a value the catalogue does not know is shown with the words of
    :data:`NAME_WORDS` in it translated."""
    if lang == DEFAULT_LANGUAGE:
        return str(value)
    if isinstance(value, Message):
        return translate_message(value, lang)
    text = str(value)
    catalogue = _strict(lang)
    try:
        return catalogue.pgettext(DATA, text)
    except LookupError:
        pass
    for pattern, translation in _name_words(lang):
        text = pattern.sub(lambda m, tr=translation: tr.format(**m.groupdict()), text)
    return localize_numbers(text, lang)


@lru_cache(maxsize=None)
def _name_words(lang: str) -> tuple[tuple[re.Pattern, str], ...]:
    """:data:`NAME_WORDS` as (regular expression over whole words, translation), those ``lang`` has."""
    out = []
    catalogue = _strict(lang)
    for shape in NAME_WORDS:
        try:
            translation = catalogue.pgettext(NAME_WORDS_CONTEXT, shape)
        except LookupError:
            continue
        parts = re.split(r"\{(\w+)\}", shape)  # text, field, text, field, ...
        regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>{NAME_FIELDS[p]})" for i, p in enumerate(parts))
        out.append((re.compile(rf"\b{regex}\b"), translation))
    return tuple(out)


def group_names_in_words(message: object) -> object:
    """``message`` (a :class:`Message`, nested ones too) with its KV group names (``name``, ``names`` and ``what``
    values: plain text the planner writes group names into) in this session's
    language (:func:`words`), for :func:`planner_message`; anything else as it is."""
    if not isinstance(message, Message) or isinstance(message, PydanticRule):
        return message
    values = {k: words(v) if k in _GROUP_FIELDS and isinstance(v, str) and not isinstance(v, Message)
              else group_names_in_words(v)
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


_GROUPED = re.compile(r"\d{1,3}(?:\.\d{3})+")
"""A whole number with thousands points (``1.000``, ``2.000.000``): Spanish grouping, never a decimal point."""

_GROUPED_EN = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
"""A number with thousands commas (``1,024``, ``1,234.5``): English grouping, the only place a comma may stand."""


def read_number(text: str, lang: str) -> float:
    """A number typed in ``lang`` (what :func:`localize_numbers` writes, read back).

    Spanish: a decimal comma and thousands points (``1.234,5``); a point alone is a decimal point unless it groups
    digits in threes (``0.5`` is a half, ``1.000`` is a thousand).
    English: a decimal point (``1.024`` is 1.024); a comma only groups digits in threes before any point
    (``1,024`` is 1024, ``1,234.5`` is 1234.5), so ``0,5`` or ``1,5`` is refused rather than read as 5 or 15.
    Exponents (``1e9``) as Python reads them.

    >>> read_number("0,5", "es"), read_number("1.234,5", "es"), read_number("1.000", "es"), read_number("0.5", "es")
    (0.5, 1234.5, 1000.0, 0.5)
    >>> read_number("1,234.5", "en"), read_number("1.024", "en"), read_number("1,024", "en"), read_number(" 2e9 ", "es")
    (1234.5, 1.024, 1024.0, 2000000000.0)
    >>> read_number("0,5", "en")
    Traceback (most recent call last):
    ValueError: a comma groups digits in threes in English: '0,5'

    Raises:
        ValueError: not a number (``float`` cannot read it, or an English comma that does not group thousands).
    """
    text = text.strip().replace(" ", "").replace("\u00a0", "")
    if lang in _SEPARATORS:
        if "," in text:
            text = text.replace(".", "").replace(",", ".")
        elif _GROUPED.fullmatch(text):
            text = text.replace(".", "")
    elif "," in text:
        if not _GROUPED_EN.fullmatch(text):
            raise ValueError(f"a comma groups digits in threes in English: {text!r}")
        text = text.replace(",", "")
    return float(text)


def localize_numbers(text: str, lang: str) -> str:
    """See :func:`num`; pure (no session)."""
    swap = _SEPARATORS.get(lang)
    if swap is None:
        return text
    return _NUMBER.sub(lambda m: m.group(0).translate(swap), text)
