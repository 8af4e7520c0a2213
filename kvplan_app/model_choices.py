"""The model choice of the pages that price a plan (Plan, Frontier, Recommend): the catalog, then the configs this
session imported on the Model page (``uploaded: NAME``). Figures for both come from the same planner functions;
:func:`kvplan_app.router.main` makes the imported ones known to :func:`planner.catalog.entries.get_model`."""

from __future__ import annotations

import streamlit as st

from planner.catalog.entries import UPLOADED_PREFIX, get_model, models, uploaded_models
from planner.errors import PlanInputError
from kvplan_app.i18n import t


def model_ids(*keep: str) -> list[str]:
    """Catalog ids, then this session's imported ones; ``keep``: ids the widget holds now (kept as choices)."""
    ids = [*models(), *uploaded_models()]
    return ids + [k for k in keep if k not in ids]


def model_labels(ids) -> dict[str, str]:
    """``{id: label}`` for a select's ``format_func=labels.get`` (computed now, while this run knows its uploads)."""
    return {m: model_label(m) for m in ids}


def is_uploaded(model_id: str | None) -> bool:
    """Whether ``model_id`` names a model imported from a config.json (never in a link's catalog)."""
    return bool(model_id) and model_id.startswith(UPLOADED_PREFIX)


def model_label(model_id: str) -> str:
    """The name a choice shows: the catalog name, ``uploaded: NAME`` for an imported config, else the id."""
    try:
        model = get_model(model_id)
    except PlanInputError:
        return t("{id} (not available in this session)", id=model_id)
    return t("uploaded: {name}", name=model.name) if is_uploaded(model_id) else model.name


def uploaded_link_note(model_id: str | None) -> None:
    """Under a share link: a plan on an imported config cannot be reproduced from the link alone."""
    if is_uploaded(model_id):
        st.warning(t("This link names a config.json uploaded in this session ({name}); a link cannot carry the "
                     "config itself: opened elsewhere, the link's model is refused (with a warning) and the default "
                     "model is shown. To reproduce the plan, upload the same config.json on the Model page there and "
                     "use it on the plan pages again.",
                     name=model_label(model_id)))
