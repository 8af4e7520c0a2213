"""No injection, one CSV writer, no user path opened, the last valid state kept.

* Text a user supplies (a model name, a config's ``model_type``, a trace row, a file name, a typed value) is
  shown as text: Markdown elements get it backslash-escaped, and no page renders HTML at all.
* Every CSV export (plan, frontier grid, GB vs context, model breakdown, trace curve; pages and CLI) goes
  through ``planner.files.export.to_csv_bytes``, which writes a leading quote before a formula
  (OWASP "CSV Injection": = + - @ tab CR).
* The UI opens no path taken from a link or from a file's content: uploads are read as bytes.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from planner.plan import PLAN_CSV_COLUMNS, make_inputs, plan, plan_frame
from planner.catalog.entries import get_model
from planner.cli import main
from planner.files.export import CSV_MIME, FORMULA_PREFIXES, to_csv_bytes
from planner.frontier import FRAME_COLUMNS, KV_CONTEXT_COLUMNS, Accelerator, frontier_grid, kv_context_frame
from planner.kv.models import BREAKDOWN_COLUMNS, breakdown_frame
from planner.traces import CURVE_COLUMNS, FLEET_COLUMNS, capacity_curve, read_trace, reuse_profile
from markdown_text import outside_code_spans, visible_autolinks

ROOT = Path(__file__).resolve().parents[1]
UI_FILES = [ROOT / "app.py", *sorted((ROOT / "kvplan_app" / "views").glob("*.py")), *sorted((ROOT / "kvplan_app").glob("*.py"))]
HYPERLINK = '=HYPERLINK("http://x","y")'
MARKUP = "<img src=x onerror=alert(1)>"
UNESCAPED = re.compile(r"(?<!\\)<img|(?<!\\)!(?<!\\)\[")
MARKDOWN_ELEMENTS = ("markdown", "caption", "warning", "error", "info", "success", "title", "subheader", "header")


def _markdown_texts(at) -> list[str]:
    return [str(el.value) for kind in MARKDOWN_ELEMENTS for el in at.get(kind)]


def _assert_no_markup(at) -> None:
    for text in _markdown_texts(at):
        assert not UNESCAPED.search(outside_code_spans(text)), text[:200]
        assert visible_autolinks(text) == [], text[:200]


def _cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def _assert_neutralised(data: bytes, expected_cell: str | None = None) -> None:
    cells = [c for row in _cells(data) for c in row]
    assert not [c for c in cells if c.startswith(FORMULA_PREFIXES)], "a formula cell reached the CSV"
    if expected_cell is not None:
        assert "'" + expected_cell in cells


# ---------------------------------------------------------------------------
# Static guarantees: no HTML, one CSV writer, no paths in the UI
# ---------------------------------------------------------------------------


STATIC_STYLE = {"router.py": 'st.html(f"<style>{style}</style>")'}
"""The one HTML call allowed: the router's product-authored style sheet (its top spacing and kvplan_app/uploads.py's
uploader words), no user text."""


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: p.name)
def test_no_page_renders_html(path):
    source = path.read_text(encoding="utf-8")
    if path.name in STATIC_STYLE:
        assert source.count(STATIC_STYLE[path.name]) == 1
        source = source.replace(STATIC_STYLE[path.name], "")
    for needle in ("unsafe_allow_html", "st.html(", "components.v1", "components.html"):
        assert needle not in source, f"{path.name} uses {needle}"


def test_the_static_style_sheet_cannot_close_its_tag_or_string():
    """Even a catalogue string with quotes, backslashes or a closing tag stays inside its CSS string."""
    from kvplan_app.uploads import UPLOADS, uploader_style

    css = uploader_style(lambda text, **values: '</style><script>x()</script> "\\' + text.format(**values))
    assert "<" not in css and "</style" not in css.lower()
    strings = re.findall(r'content: "((?:[^"\\]|\\.)*)"', css)
    assert len(strings) == 2 + len(UPLOADS)  # button, drag hint, one instruction line per uploader
    assert all(s.startswith("\\3c /style>") for s in strings)


def test_the_trace_uploader_says_the_limit_the_server_enforces():
    """The shipped config's maxUploadSize is the trace limit the Spanish uploader text names (64 MB)."""
    import tomllib

    from kvplan_app.uploads import UPLOADS

    config = tomllib.loads((ROOT / "kvplan_app" / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert UPLOADS["traces_upload"].server_limit and config["server"]["maxUploadSize"] == UPLOADS["traces_upload"].max_mb == 64


def test_every_csv_goes_through_the_one_writer():
    offenders = []
    for path in [*UI_FILES, *sorted((ROOT / "planner").rglob("*.py"))]:
        if path.name == "export.py":
            continue
        if re.search(r"\.to_csv\(", path.read_text(encoding="utf-8")):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], "use planner.files.export.to_csv_bytes"


@pytest.mark.parametrize("path", UI_FILES, ids=lambda p: p.name)
def test_the_ui_opens_no_path(path):
    """Links and uploads never become paths: the UI calls no open(), Path() or os.path, and imports no pathlib."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in ("open", "Path"), f"{path.name}:{node.lineno} calls {node.func.id}()"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert (node.value.id, node.attr) != ("os", "path"), f"{path.name}:{node.lineno} uses os.path"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            assert "pathlib" not in names, f"{path.name}:{node.lineno} imports pathlib"


# ---------------------------------------------------------------------------
# CSV exports with a formula as a model / accelerator / group / trace name
# ---------------------------------------------------------------------------


def test_plan_csv_neutralises_a_formula_model_id():
    result = plan(make_inputs(model_id=HYPERLINK), model=get_model("llama-3.1-8b"))
    data = to_csv_bytes(plan_frame(result))
    assert _cells(data)[0] == list(PLAN_CSV_COLUMNS)
    _assert_neutralised(data, HYPERLINK)


def test_frontier_grid_csv_neutralises_a_formula_accelerator_label():
    # the grid's accelerator column is categorical: its categories are neutralised too (they were not)
    grid = frontier_grid(make_inputs(), [Accelerator("h200", label=HYPERLINK), "b200"], np.array([100_000, 1_000_000]),
                         np.array([0.0, 0.5]))
    data = to_csv_bytes(grid.frame())
    assert _cells(data)[0] == list(FRAME_COLUMNS)
    _assert_neutralised(data, HYPERLINK)
    assert sum(row[0] == "'" + HYPERLINK for row in _cells(data)) == 4  # 2 contexts x 2 hit rates


def test_context_csv_neutralises_a_formula_model_name():
    model = replace(get_model("llama-3.1-8b"), id="@model", name=HYPERLINK)
    data = to_csv_bytes(kv_context_frame([model], [1_000, 2_000]))
    assert _cells(data)[0] == list(KV_CONTEXT_COLUMNS)
    _assert_neutralised(data, HYPERLINK)
    assert [row[0] for row in _cells(data)[1:]] == ["'@model", "'@model"]


def test_model_breakdown_csv_neutralises_a_formula_group_name():
    base = get_model("llama-3.1-8b")
    model = replace(base, groups=tuple(replace(g, name=HYPERLINK) for g in base.groups))
    data = to_csv_bytes(breakdown_frame(model, 1_000))
    assert _cells(data)[0] == list(BREAKDOWN_COLUMNS)
    _assert_neutralised(data, HYPERLINK)


def test_trace_curve_csv_of_a_formula_named_trace_has_no_formula():
    rows = [{"timestamp_s": t, "input_length": 64, "output_length": 1, "hash_ids": [0, 1, 2, 3]} for t in range(5)]
    trace = read_trace("\n".join(json.dumps(r) for r in rows).encode(), block_tokens=16, name=HYPERLINK + ".jsonl")
    data = to_csv_bytes(capacity_curve(reuse_profile(trace), [0, 4], kv_bytes_per_token=890.0))
    assert _cells(data)[0] == list(CURVE_COLUMNS)
    _assert_neutralised(data)
    # 5 requests of the same 4 blocks: 4 cold misses, then 16 hits at 4 blocks; none at 0
    assert [r[5] for r in _cells(data)[1:]] == ["0", "16"]


@pytest.mark.parametrize("section,columns", [("GB vs context CSV", KV_CONTEXT_COLUMNS),
                                             ("Trace curve CSV", CURVE_COLUMNS)])
def test_the_new_csv_downloads_are_documented_in_order(section, columns):
    text = (ROOT / "docs" / "csv.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match and re.findall(r"^\| `([^`]+)` \|", match.group(1), re.M) == list(columns)


def test_cli_frontier_csv_is_the_export_bytes(capfdbinary):
    assert main(["frontier", "--gpus", "h200,custom:96", "--contexts", "128k,1m", "--hit-rates", "0,0.5",
                 "--csv", "-"]) == 0
    grid = frontier_grid(make_inputs(gpu_id="h200"), [Accelerator("h200"), Accelerator("custom", 96.0)],
                         np.array([128_000, 1_000_000]), np.array([0.0, 0.5]))
    assert capfdbinary.readouterr().out == to_csv_bytes(grid.frame())


@pytest.fixture
def downloads(monkeypatch):
    """Every st.download_button call a page makes: (label, data, file_name, mime); ``data`` as given (bytes, or the
    callable Streamlit calls on a click: call it after the run, when the page has drawn everything it reads)."""
    seen = []
    original = streamlit.download_button

    def record(label, data, file_name=None, mime=None, **kwargs):
        seen.append((label, data, file_name, mime))
        return original(label, data, file_name=file_name, mime=mime, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", record)
    return seen


@pytest.mark.parametrize("page,columns", [
    ("kvplan_app/views/plan.py", PLAN_CSV_COLUMNS), ("kvplan_app/views/frontier.py", FRAME_COLUMNS),
    ("kvplan_app/views/context.py", KV_CONTEXT_COLUMNS), ("kvplan_app/views/model.py", BREAKDOWN_COLUMNS),
    ("kvplan_app/views/traces.py", {"kvplan-hit-rate-vs-capacity.csv": CURVE_COLUMNS,
                                    "kvplan-hit-rate-vs-replicas.csv": FLEET_COLUMNS}),
])
def test_each_pages_csv_download_is_the_documented_contract(downloads, page, columns):
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.run()
    downloads.clear()  # the first run shows the Plan page
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    csvs = [(label, data() if callable(data) else data, name, mime) for label, data, name, mime in downloads
            if str(name).endswith(".csv")]
    assert csvs, f"{page} offers no CSV"
    if isinstance(columns, dict):   # a page with several CSVs: each file name has its contract
        assert {name for _, _, name, _ in csvs} == set(columns), page
    for label, data, name, mime in csvs:
        assert mime == CSV_MIME, label
        assert isinstance(data, bytes) and not data.startswith(b"\xef\xbb\xbf") and b"\r" not in data
        want = columns[name] if isinstance(columns, dict) else columns
        assert tuple(_cells(data)[0]) == tuple(want), label
        _assert_neutralised(data)


# ---------------------------------------------------------------------------
# Markup from users is shown as text (AppTest)
# ---------------------------------------------------------------------------


def _page(path: str) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.run()
    at.switch_page(path)
    at.run()
    assert not at.exception
    return at


def _sessions(at) -> str:
    return next(m.value for m in at.metric if m.label.startswith("Sessions per GPU"))


def test_typed_markup_is_an_escaped_error_and_the_last_plan_stays():
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.run()
    at.slider(key="plan_hit_rate").set_value(0.6).run()
    good, link = _sessions(at), dict(at.query_params)
    at.text_input(key="plan_context_tokens").set_value(MARKUP).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("context_tokens" in e and "\\<img src\\=x onerror\\=alert\\(1\\)\\>" in e for e in errors), errors
    _assert_no_markup(at)
    assert _sessions(at) == good and dict(at.query_params) == link  # the last valid plan, and its link


LLAMA_8B_CONFIG = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                   "hidden_size": 4096, "max_position_embeddings": 131072}


def test_config_model_type_and_file_name_markup_are_text():
    at = _page("kvplan_app/views/model.py")
    at.radio(key="model_source").set_value("Import config.json").run()
    config = {**LLAMA_8B_CONFIG, "model_type": MARKUP, "torch_dtype": MARKUP}
    at.file_uploader(key="model_config_file").set_value(
        (MARKUP + ".json", json.dumps(config).encode(), "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("\\<img" in s.value for s in at.subheader)  # the file name is the model's name: escaped
    _assert_no_markup(at)
    # a broken upload keeps the imported model, and says so as text
    at.file_uploader(key="model_config_file").set_value((MARKUP + ".json", b'{"num_hidden_layers":', "x")).run()
    assert not at.exception
    assert any("cannot be imported" in e.value and "\\<img" in e.value for e in at.error)
    _assert_no_markup(at)


def test_trace_row_and_file_name_markup_are_text():
    at = _page("kvplan_app/views/traces.py")
    at.selectbox(key="traces_sample").set_value("Upload a trace").run()
    rows = [{"timestamp_s": 0, "input_length": 10, "output_length": 1},
            {"timestamp_s": MARKUP, "input_length": 10, "output_length": 1},
            {"timestamp_s": "![x](http://example.invalid/x.png)", "input_length": 1, "output_length": 1}]
    at.file_uploader(key="traces_upload").set_value(
        (MARKUP + ".jsonl", "\n".join(json.dumps(r) for r in rows).encode(), "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("2 of 3 rows malformed" in w.value and "\\<img" in w.value for w in at.warning)
    _assert_no_markup(at)
    # nothing well formed: the error names the file, as text
    at.file_uploader(key="traces_upload").set_value((MARKUP + ".jsonl", json.dumps(rows[1]).encode(), "x")).run()
    assert not at.exception
    assert any("\\<img" in e.value for e in at.error)
    _assert_no_markup(at)


@pytest.mark.parametrize("content", [b"sample:conversation", b"/etc/passwd", b"../planner/data/traces/README.md"])
def test_an_upload_naming_a_path_or_sample_is_read_as_content(content):
    at = _page("kvplan_app/views/traces.py")
    at.selectbox(key="traces_sample").set_value("Upload a trace").run()
    at.file_uploader(key="traces_upload").set_value(("sample:conversation.jsonl", content, "text/plain")).run()
    assert not at.exception
    assert any(e.value.startswith("trace\\: \\'sample\\:conversation") for e in at.error), [e.value for e in at.error]
    assert not [m for m in at.metric if m.label == "Requests"]  # not the bundled 12,031 requests, nor a file
