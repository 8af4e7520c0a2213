"""Rendering what the session has to say: link warnings, rebase notices, input errors.

Text only, in the session's language (:func:`kvplan_app.i18n.planner_message`), Markdown escaped
(:func:`kvplan_app.markdown.escape_markdown`): never HTML, never a link.
"""

from __future__ import annotations

import streamlit as st

from kvplan_app.markdown import escape_markdown
from kvplan_app.state import pop_link_warnings, pop_notices
from planner.errors import PlanInputError


def show_notices() -> None:
    """Render pending rebase notices once, as ``st.info`` (measured figures dropped by :func:`planner.plan.rebase`)."""
    from kvplan_app.i18n import planner_message  # the catalogue reads the link's language

    for note in pop_notices():
        st.info(escape_markdown(planner_message(note), keep="_"))


def show_link_warnings() -> None:
    """Render pending link warnings once (``st.warning``), then pending notices."""
    from kvplan_app.i18n import planner_message

    for w in pop_link_warnings():
        st.warning(escape_markdown(planner_message(w)), icon="⚠️")
    show_notices()


def show_error(exc: PlanInputError) -> None:
    """Render an input error (``st.error``)."""
    from kvplan_app.i18n import planner_message

    st.error(escape_markdown(planner_message(exc)))
