"""Every file uploader of the dashboard: its widget limit and file types, and its words in the page's language.

Streamlit 1.67 draws an uploader's own words in its front end, in English, whatever the app's language: the
button ("Upload"), the instructions ("1MB per file • JSON") and the drop hint shown while a file is dragged
over it ("Drag and drop a file here"). In any other language :func:`uploader_style` gives one static style
sheet, written by the product from catalogue strings and :data:`UPLOADS` (never from user text), that hides
those English text nodes (``font-size: 0``) and draws the translation in their place with ``::before`` /
``::after`` content. The router injects it once per run (a style-only ``st.html`` takes no room on the page).

Screen readers still hear Streamlit's English ``aria-label`` s ("Add files", "Remove <name>"): CSS cannot
change an attribute.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.hf.config import MAX_CONFIG_BYTES
from planner.engines.logs import MAX_LOG_BYTES
from planner.probe.result import MAX_RESULT_FILE_BYTES
from planner.traces import MAX_TRACE_BYTES
from planner.traces.curvefile import MAX_CURVE_FILE_BYTES
from planner.traces.kv_events import MAX_METRICS_BYTES
from planner.traces.prompts import MAX_TOKENIZER_BYTES, MAX_TOKENIZER_CONFIG_BYTES
from planner.units import MB, cdiv


@dataclass(frozen=True)
class Upload:
    """One uploader: the widget's limit in MB (Streamlit's ``max_upload_size``) and the file types it takes.

    The limit is the file limit the page checks again when it reads the bytes, rounded up to whole MB.
    """

    max_mb: int
    types: tuple[str, ...]
    server_limit: bool = False
    """The widget takes the server's ``maxUploadSize`` (the shipped ``.streamlit/config.toml`` sets it to
    ``max_mb``), so that it shows what the server itself enforces."""


def _mb(limit_bytes: int) -> int:
    return max(1, cdiv(limit_bytes, MB))


UPLOADS: dict[str, Upload] = {
    "plan_upload_json": Upload(1, ("json",)),  # plan files: planner.files.planfile.MAX_PLAN_FILE_BYTES = 64 KiB
    "model_config_file": Upload(_mb(MAX_CONFIG_BYTES), ("json",)),
    "plan_config_file": Upload(_mb(MAX_CONFIG_BYTES), ("json",)),
    "traces_upload": Upload(_mb(MAX_TRACE_BYTES), ("jsonl", "json", "csv", "parquet", "gz", "zst"), server_limit=True),
    "traces_curve_upload": Upload(_mb(MAX_CURVE_FILE_BYTES), ("json",)),
    "traces_tokenizer_upload": Upload(_mb(MAX_TOKENIZER_BYTES), ("json",)),
    "traces_tokenizer_config_upload": Upload(_mb(MAX_TOKENIZER_CONFIG_BYTES), ("json",)),
    "traces_metrics_upload": Upload(_mb(MAX_METRICS_BYTES), ("txt", "prom")),
    "reconcile_file_a": Upload(_mb(MAX_LOG_BYTES), ("txt", "log")),
    "reconcile_file_b": Upload(_mb(MAX_LOG_BYTES), ("txt", "log")),
    "reconcile_config_file": Upload(_mb(MAX_CONFIG_BYTES), ("json",)),
    "probe_upload": Upload(_mb(MAX_RESULT_FILE_BYTES), ("json",)),
}
"""Widget key -> its limit and types. A page's uploader is made by :func:`file_uploader` with one of these keys."""


def file_uploader(where, label: str, *, key: str, **kwargs):
    """``where.file_uploader`` with the limit and types of ``UPLOADS[key]`` (``where``: ``st`` or a column)."""
    spec = UPLOADS[key]
    if not spec.server_limit:
        kwargs["max_upload_size"] = spec.max_mb
    return where.file_uploader(label, type=list(spec.types), key=key, **kwargs)


DROPZONE = "[data-testid=stFileUploaderDropzone]"
BUTTON_TEXT = f"{DROPZONE} [data-testid=stBaseButton-secondary] [data-testid=stMarkdownContainer] p"
"""The "Upload" words of the uploader's button."""
INSTRUCTIONS = f"{DROPZONE} [data-testid=stFileUploaderDropzoneInstructions] span"
"""The "<limit> per file • <TYPES>" line."""
DRAG_HINT = f"{DROPZONE} > div:not([data-testid]) > span:only-child"
"""The "Drag and drop a file here" overlay, shown while a file is dragged over the drop zone."""
TEXT_PX = 14
"""Streamlit's font size of those words (its theme's small font, 0.875 rem)."""


def _css_string(text: str) -> str:
    """``text`` as a CSS string literal: quotes, backslashes, line breaks and ``<`` escaped."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ").replace("<", "\\3c ")
    return f'"{out}"'


def uploader_style(tr) -> str:
    """The style sheet (no ``<style>`` tags) that draws every uploader's words through ``tr``.

    ``tr`` maps an English catalogue string to the page's language (``kvplan_app.i18n.t``). Every rule is
    product text: catalogue strings, the numbers and types of :data:`UPLOADS`, fixed selectors.
    """
    hide = "font-size: 0 !important; line-height: 0"
    show = f"font-size: {TEXT_PX}px; line-height: 1.6"
    rules = [
        f"{BUTTON_TEXT}, {INSTRUCTIONS}, {DRAG_HINT} {{ {hide} }}",
        f"{BUTTON_TEXT}::after {{ content: {_css_string(tr('Upload'))}; {show} }}",
        f"{DRAG_HINT}::after {{ content: {_css_string(tr('Drop the file here'))}; {show} }}",
    ]
    for key, spec in UPLOADS.items():
        line = tr("{mb} MB per file", mb=spec.max_mb) + " • " + ", ".join(t.upper() for t in spec.types)
        rules.append(f".st-key-{key} {INSTRUCTIONS}::before {{ content: {_css_string(line)}; {show} }}")
    return "\n".join(rules)


UPLOADED_MODELS = "uploaded_models"
"""Session key: the models this session imported on the Model page, by id (``uploaded-<hash>``), that Plan,
Frontier and Recommend may use (the router hands them to :func:`planner.catalog.entries.session_models`)."""
MAX_UPLOADED_MODELS = 8
"""Imported models a session keeps (the oldest is forgotten first)."""


def uploaded_model_id(config_text: str | bytes) -> str:
    """The id of a model imported from this config text: ``uploaded-`` and 12 hex digits of its SHA-256, so two
    different configs never share an id (nor a cached figure), and the same config always gets the same one."""
    import hashlib

    data = config_text.encode() if isinstance(config_text, str) else bytes(config_text)
    return "uploaded-" + hashlib.sha256(data).hexdigest()[:12]
