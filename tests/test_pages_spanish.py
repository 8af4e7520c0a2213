"""Every page under ``?lang=es`` (AppTest): no English sentence in any element's text.

Each page opens from a link (``?page=...&lang=es``, as a share link does) for catalog models of every kind
(full attention, sliding window, hybrids with Mamba state, MLA, DeepSeek V4's compressed layers), with bad link
values, a bad config.json, a pasted engine log and a garbled one. Every title, caption, message, metric, label,
help text, placeholder and option is read; a text fails when it holds an English function word outside code
spans, quoted values, identifiers and the names kvplan shows as they are (models, accelerators, host links,
trace samples, KV group names) and public sources (cited in their own language). Tables are not read here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from planner.catalog.entries import GPUS, models
from planner.catalog.tiers import LINKS
from planner.traces.samples import SAMPLES
from markdown_text import shown
from test_i18n_messages import english_words
from test_probe_layout import result_dict  # the hand-written DeepSeek V4.1 ProbeResult at 1,000 tokens

PAGES = ["home", "model", "traces", "frontier", "context", "recommend", "reconcile", "probe"]
MODELS = ["deepseek-v4.1-flash", "gemma-3-27b", "nemotron-h-8b", "deepseek-v3", "mistral-7b-v0.1", "jamba-1.5-mini"]
"""DeepSeek V4 (compressed + window ring), sliding window, Mamba2 hybrid, MLA, sliding window with a small
maximum context, Mamba1 hybrid."""

ELEMENTS = ["title", "header", "subheader", "markdown", "caption", "error", "warning", "info", "success", "text",
            "metric", "selectbox", "multiselect", "radio", "text_input", "number_input", "text_area", "slider",
            "button", "checkbox", "toggle", "expander", "tabs"]
ATTRIBUTES = ("value", "label", "help", "placeholder", "options")

SOURCE_FRAMES = ("Fuente: ", "Modelo: ", "Formato ", "Vista del motor y capacidad: ")
"""Spanish frames that introduce a public source, quoted as published."""


def _names() -> list[str]:
    """Names shown as they are, longest first."""
    names = [m.name for m in models().values()] + [g.name for g in GPUS.values()]
    names += [link.name for link in LINKS.values()]
    names += [s.label for s in SAMPLES.values()]
    names += [g.name for m in models().values() for g in m.layout()]
    return sorted(set(names), key=len, reverse=True)


NAMES = _names()


def _texts(at: AppTest) -> list[tuple[str, str]]:
    out = []
    for kind in ELEMENTS:
        for element in at.get(kind):
            for attr in ATTRIBUTES:
                if kind in ("selectbox", "multiselect", "radio", "text_area", "text_input") and attr == "value":
                    continue  # the raw option (what the page shows is in ``options``), or what the user typed
                try:
                    value = getattr(element, attr)
                except Exception:  # noqa: BLE001 - an element without that attribute
                    continue
                values = value if attr == "options" and isinstance(value, (list, tuple)) else [value]
                out += [(f"{kind}.{attr}", str(v)) for v in values if isinstance(v, (str, int, float)) and v != ""]
    return out


def english_left(text: str) -> set[str]:
    """English function words left in ``text`` once names and cited sources are taken out."""
    text = re.sub(r"\\(.)", r"\1", text)  # Markdown escapes, as the reader sees the text
    if text.startswith(SOURCE_FRAMES):
        text = text.split(": ", 1)[0]
    for name in NAMES:
        text = text.replace(name, " ")
    return english_words(re.sub(r"`[^`]*`", " ", text))


def _open(params: dict[str, str], page: str, setup=None) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=120)
    for key, value in {**params, "lang": "es", "page": page}.items():
        at.query_params[key] = value
    at.run()
    if setup is not None:
        setup(at)
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "unexpected error" in e.value or "error inesperado" in e.value]
    return at


def _assert_spanish(at: AppTest) -> None:
    english = [(where, sorted(words), text[:200]) for where, text in _texts(at) if (words := english_left(text))]
    assert not english, english


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("model", MODELS)
def test_every_page_in_spanish(page, model):
    at = _open({"model": model}, page)
    assert at.session_state["ui_lang"] == "es"
    _assert_spanish(at)


PLAN_STATES = {
    "dp, tiers, measured KV": {"model": "deepseek-v4.1-flash", "attn": "dp", "host": "10", "ssd": "10",
                               "target": "1000", "state_hbm": "1", "mkv": "500", "mkv_model": "deepseek-v4.1-flash",
                               "mkv_fmt": "native"},
    "nothing fits": {"model": "llama-3.1-405b", "gpu": "l4", "gpus": "1"},
    "no output, past the maximum": {"model": "qwen2.5-72b", "out": "0", "ctx": "200000"},
    "sessions rejected": {"model": "llama-3.1-70b", "gpus": "4", "target": "100000", "host": "1", "ssd": "1",
                          "ctx": "32000", "pause": "30"},
    "measured usable KV of another GPU": {"model": "gemma-3-27b", "musable": "40", "mu_gpu": "b200"},
    "HBM far past the part's": {"model": "mistral-7b-v0.1", "hbm": "5000"},
}
"""Plans whose pages show the planner's warnings and notes: refusals, offload tiers, measured figures."""


@pytest.mark.parametrize("page", ["home", "model", "context", "traces"])
@pytest.mark.parametrize("state", PLAN_STATES)
def test_plan_warnings_and_notes_in_spanish(page, state):
    at = _open(PLAN_STATES[state], page)
    if page == "home" and state in ("nothing fits", "no output, past the maximum", "sessions rejected"):
        assert at.warning, "the plan's warning is shown"
    _assert_spanish(at)


BAD_LINKS = {
    "hit rate 2": {"hit": "2"},
    "context words": {"ctx": "lots", "model": "nope"},
    "unknown keys": {"zzz": "1", "yyy": "2"},
    "gpu and tp": {"gpu": "not-a-gpu", "gpus": "0", "fmt": "fp7"},
    "page": {"hbm": "-1"},
}


@pytest.mark.parametrize("page", ["home", "model", "frontier"])
@pytest.mark.parametrize("case", BAD_LINKS)
def test_bad_links_warn_in_spanish(page, case):
    at = _open(BAD_LINKS[case], page)
    assert at.warning, "a bad link value is named in a warning"
    _assert_spanish(at)


BAD_CONFIGS = {
    "not json": "{not json",
    "heads": '{"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 64, "num_key_value_heads": 2}',
    "window": '{"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "num_key_value_heads": 2, '
              '"max_position_embeddings": 1024, "sliding_window": 4096, "layer_types": ["sliding_attention", '
              '"full_attention"]}',
    "state": '{"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64, "num_key_value_heads": 2, '
             '"ssm_state_size": 16}',
}


@pytest.mark.parametrize("case", BAD_CONFIGS)
def test_a_bad_config_is_refused_in_spanish(case):
    def paste(at):
        at.session_state["model_source"] = "Import config.json"  # AppTest indexes options by the shown label
        at.run()
        at.text_area(key="model_config_text").set_value(BAD_CONFIGS[case]).run()

    at = _open({}, "model", paste)
    assert at.error, "the refusal is shown"
    _assert_spanish(at)


def test_pasted_logs_reconcile_in_spanish():
    def example(at):
        at.button(key="reconcile_example").click().run()

    at = _open({}, "reconcile", example)
    _assert_spanish(at)
    # st.table (the causes wrap): quantity, engine printed, kvplan, status, cause, headers in Spanish
    rows = [frame.value for frame in at.table if "kvplan" in frame.value.columns and len(frame.value.columns) == 5]
    assert len(rows) == 2  # one comparison table per log (vLLM and SGLang)
    english = [(column, cell) for frame in rows for k, column in enumerate(frame.columns) if k != 1
               for cell in [column, *frame[column]] if english_left(str(cell))]
    assert not english, english  # the engine's own printed column stays as printed

    def garbled(at):
        at.text_area(key="reconcile_log_a").set_value("INFO hello\nGPU KV cache size: lots of tokens\n").run()

    _assert_spanish(_open({}, "reconcile", garbled))


def test_uploads_are_read_or_refused_in_spanish():
    """A plan file, a ProbeResult and a trace: each refusal (and the result shown) in Spanish."""
    import json

    def upload(key, name, payload):
        def setup(at):
            at.file_uploader(key=key).set_value((name, payload, "application/json")).run()
        return setup

    at = _open({}, "home", upload("plan_upload_json", "bad-plan.json", b'{"schema_version": 1, "inputs": 3}'))
    assert any("bad-plan.json" in e.value.replace("\\", "") for e in at.error)
    _assert_spanish(at)
    for name, payload in (("probe.json", json.dumps(result_dict()).encode()), ("garbage.json", b"\x00 not json")):
        at = _open({}, "probe", upload("probe_upload", name, payload))
        _assert_spanish(at)

    def bad_trace(at):
        at.session_state["traces_sample"] = "Upload a trace"  # AppTest indexes options by the shown label
        at.run()
        at.file_uploader(key="traces_upload").set_value(("t.jsonl", b'{"timestamp": 1}\nnot json\n', "text/plain")).run()

    at = _open({}, "traces", bad_trace)
    assert at.error
    _assert_spanish(at)


GROUP_WORDS_EN = ("compressed 1/", "indexer keys", "window ring", "full attention", "sliding window", "conv state",
                  "SSM state", "capped", "growing", "merged", " entries", "kv sharing")
"""Group-name vocabulary and table values the Model page shows in words (the data and CSV keep them in English)."""


def _cells(at: AppTest) -> list[str]:
    """Every header and cell of the page's tables (st.dataframe and st.table), as text a reader sees (st.table draws
    its cells as Markdown, so the page escapes them: read back with markdown_text.shown)."""
    out = []
    for frame, read in [*((f, str) for f in at.dataframe), *((f, lambda c: shown(str(c))) for f in at.table)]:
        value = frame.value
        out += [read(c) for c in value.columns]
        out += [read(cell) for column in value.columns for cell in value[column]]
    return out


@pytest.mark.parametrize("model", ["deepseek-v4.1-flash", "nemotron-h-8b", "gemma-3-27b"])
def test_model_page_group_names_and_values_in_spanish(model):
    at = _open({"model": model, "m_ctx": "100000"}, "model")
    texts = [text for _, text in _texts(at)] + _cells(at)
    english = sorted({word for text in texts for word in GROUP_WORDS_EN if word in text})
    assert not english, english
    cells = _cells(at)
    assert {"atención completa": "gemma", "principal comprimida 1/1": "deepseek",
            "estado SSM de Mamba2": "nemotron"}.keys() & set(cells), cells
    if model == "deepseek-v4.1-flash":  # the Sources table: headers and values
        assert {"campo", "valor", "cómo", "nota"} <= {c.lower() for c in cells}, cells
        assert "fusionado" in cells and "40 entradas" in cells


def test_recommend_result_in_spanish_words_and_numbers():
    """'KV nativo' and '< 1.000' in the result sentence; the table shows 'nativo', its plan links keep fmt=native."""
    def native_only(at):
        at.multiselect(key="recommend_kv").set_value(["native"]).run()

    at = _open({"model": "llama-3.1-8b"}, "recommend", native_only)
    sentence = at.success[0].value
    assert "KV nativo" in sentence and "1,000" not in sentence and "1.000" in sentence, sentence
    frame = at.dataframe[-1].value
    assert set(frame["kv_format"]) == {"nativo"}, frame["kv_format"]
    assert all("fmt=native" in link for link in frame["plan link"])
    _assert_spanish(at)


def test_traces_routing_in_spanish():
    """The routing ids (random, session, prefix, round-robin) and the fleet method in Spanish: options, legend, hover."""
    import json

    def fleet(at):
        at.multiselect(key="traces_fleet_replicas").set_value([1, 4]).run()
        at.multiselect(key="traces_fleet_routing").set_value(["random", "session"]).run()

    at = _open({}, "traces", fleet)
    routing = at.multiselect(key="traces_fleet_routing")
    assert set(routing.options) == {"aleatorio", "por sesión", "por prefijo", "round-robin"}, routing.options
    assert set(at.selectbox(key="traces_fleet_pick_policy").options) == {"aleatorio", "por sesión"}
    chart = next(c for c in at.get("plotly_chart") if "traces_fleet_chart" in c.proto.id)
    lines = json.loads(chart.proto.spec)["data"]
    assert {line["name"] for line in lines} == {"aleatorio", "por sesión"}
    hover = json.dumps([[line["hovertemplate"], line["customdata"]] for line in lines], ensure_ascii=False)
    assert "distancias de pila" in hover and "stack distances" not in hover and "random" not in hover, hover
    assert "aleatorio" in at.button(key="traces_fleet_use").label
    _assert_spanish(at)


def test_spanish_context_box_round_trips_and_refuses_a_dotted_thousand():
    # pre-filled as '1 000 000' (read back the same); '128.000' was read as 128 tokens, now refused
    at = _open({}, "home")
    box = at.text_input(key="plan_context_tokens")
    assert box.value == "1 000 000"
    box.set_value("128.000").run()
    assert any("128.000" in e.value.replace("\\", "") for e in at.error)
    assert at.query_params.get("ctx") in (None, "1000000", ["1000000"])


def test_frontier_rate_limit_in_spanish():
    """The request-rate hover says which limit binds in Spanish ('limitada por sesiones'), not the ids."""
    import json

    at = _open({"model": "llama-3.1-8b"}, "frontier")
    chart = next(c for c in at.get("plotly_chart") if "frontier_fig_rate" in c.proto.id)
    lines = [line for line in json.loads(chart.proto.spec)["data"] if "limitada por" in line.get("hovertemplate", "")]
    limits = {row[0] for line in lines for row in line["customdata"]}
    assert limits and limits <= {"sesiones", "rendimiento de decodificación", "ninguno"}, limits


def test_reconcile_example_cells_in_spanish_form():
    """kvplan's own cells (the implied range, the candidate formats) in Spanish words and numbers; no 'None'."""
    def example(at):
        at.button(key="reconcile_example").click().run()

    at = _open({}, "reconcile", example)
    cells = _cells(at)
    assert not [c for c in cells if "(budget / tokens)" in c or "native" in c or c.startswith("None")], cells
    assert any(c.startswith("de 48.647 a 48.711 B (presupuesto / tokens)") for c in cells), cells
    assert any("(nativo: 48.128 B; bf16: 48.128 B; fp8: 24.064 B)" in c for c in cells), cells
    assert any(c.startswith("— (") for c in cells), cells  # max_model_len: not in the log


def test_link_warning_default_in_spanish_numbers():
    """'se usa el valor por defecto 0,5' and '1.000.000': the default in the locale's number format."""
    at = _open({"hit": "2", "ctx": "lots"}, "home")
    shown = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert "0,5" in shown and "1.000.000" in shown, shown
    assert "0.5" not in shown and "1000000" not in shown, shown


@pytest.mark.parametrize("page", ["model", "traces"])
def test_help_texts_name_no_code_and_say_scale_in_spanish(page):
    """Tooltips say what they mean in words: no 'planner.traces.CURVE_COLUMNS', no 'Model breakdown CSV', and the
    KV formats' 'scale' is 'escala'."""
    at = _open({"model": "deepseek-v4.1-flash"}, page)
    helps = [text for where, text in _texts(at) if where.endswith(".help")]
    helps += [button.proto.help for button in at.get("download_button")]  # not an AppTest widget: read its proto
    assert any("docs/csv.md" in h for h in helps), helps
    found = [h for h in helps if re.search(r"\bscale\b|_COLUMNS|planner\.|Model breakdown CSV", h)]
    assert not found, found
    if page == "model":
        assert any("E2M1 + escala E8M0 / 32" in h for h in helps), helps


def test_capacity_formula_writes_each_number_in_one_style():
    """The Model page's vLLM capacity formula: '115.878.217.646 // 8.192 // 80', never '115,878,217,646' beside
    Spanish figures (the budget part was written in English form and never localized)."""
    at = _open({"model": "llama-3.1-70b"}, "model")
    formula = next(t.value for t in at.text if t.value.startswith("Capacidad: "))
    assert not re.search(r"\d,\d{3}", formula), formula
    assert re.search(r"num_blocks = \d{1,3}(\.\d{3})+ // ", formula), formula


def test_sliders_write_their_values_in_spanish():
    """A hit rate of 0.5 reads '0,50' on the Plan and Frontier sliders (Streamlit's own slider prints '0.50')."""
    at = _open({"hit": "0.5", "util": "0.9"}, "home")
    hit = at.select_slider(key="plan_hit_rate")
    assert hit.value == 0.5 and "0,50" in hit.options and "0.50" not in hit.options
    assert at.select_slider(key="plan_gpu_memory_utilization").value == 0.9
    # H200: nvidia-smi's 143,771 MiB = 140.4 GiB, shown '140,4' (the slider's own value read '140.4')
    assert "140,4" in at.select_slider(key="plan_hbm_gib").options
    at.select_slider(key="plan_hit_rate").set_value(0.6).run()
    assert not at.exception and at.session_state["plan_hit_rate"] == 0.6
    assert "0,50" in _open({"hit": "0.5"}, "frontier").select_slider(key="frontier_hit_rate").options


def test_catalog_sources_and_origin_notice_in_spanish():
    """The catalog's source note ('véase SOURCES.md; parámetros: 8,03B (ficha del modelo ...)'), the engine source's
    'y', and the notice that the Model page's inputs come from the Plan page, in Spanish."""
    at = _open({"model": "llama-3.1-8b"}, "model")
    texts = [t.value for t in at.text]
    source = next(t for t in texts if t.startswith("Modelo: "))
    assert "véase SOURCES.md" in source and "parámetros: 8,03B (ficha del modelo Meta Llama 3.1)" in source, source
    assert not english_left(source.split(": ", 1)[1]), source
    engine = next(t for t in texts if t.startswith("Vista del motor y capacidad: "))
    assert ") y vllm/model_executor" in engine and " and " not in engine, engine
    notice = " ".join(i.value for i in at.info).replace("\\", "")
    assert "parten de la página Plan" in notice, notice
    assert at.button(key="model_own_defaults").label == "Usar los valores propios de esta página"
    _assert_spanish(at)


def test_gb_vs_context_scale_choice_in_spanish():
    at = _open({}, "context")
    assert at.radio(key="context_y_scale").options == ["logarítmico", "lineal"]
    assert any("Eje de GB: logarítmico" in c.value for c in at.caption)
    _assert_spanish(at)


def test_an_imported_config_goes_to_the_plan_in_spanish():
    """A pasted config.json used on the plan pages: 'subido: config.json pegado' in the Plan page's model choice, the
    sidebar's warning that a link cannot carry it, all in Spanish."""
    config = ('{"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, '
              '"hidden_size": 4096, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}')

    def send(at):
        at.session_state["model_source"] = "Import config.json"
        at.run()
        at.text_area(key="model_config_text").set_value(config).run()
        at.text_input(key="model_weights_gib_text").set_value("15").run()
        at.button(key="model_use_on_plan").click().run()

    at = _open({}, "model", send)
    assert any("subido: config.json pegado" in s.value.replace("\\", "") for s in at.success)
    _assert_spanish(at)
    at.switch_page("kvplan_app/views/plan.py").run()
    assert not at.exception, at.exception
    assert "subido: config.json pegado" in at.selectbox(key="plan_model_id").options
    assert any("no puede llevar el config" in w.value for w in at.sidebar.warning)
    _assert_spanish(at)


def _hybrid_config(name: str) -> str:
    """The registry's Zamba2, PLaMo 2 and Kimi-Linear golden configs (tests/data/configs, see tests/test_registry.py)."""
    configs = Path(__file__).resolve().parent / "data" / "configs"
    if name == "zamba2":
        cfg = json.loads((configs / "zamba2-2.7b-instruct-v2.partial.config.json").read_text())
        cfg.update({"num_attention_heads": 32, "num_hidden_layers": 54, "num_key_value_heads": 32,
                    "num_mem_blocks": 2})
    elif name == "plamo2":
        cfg = {**json.loads((configs / "plamo-2-1b.config.json").read_text()), "architectures": ["Plamo2ForCausalLM"]}
    else:
        cfg = json.loads((configs / "tiny-random-kimi-linear.partial.config.json").read_text())
    return json.dumps(cfg)


@pytest.mark.parametrize("name", ["zamba2", "plamo2", "kimi_linear"])
def test_imported_hybrid_configs_in_spanish(name):
    def paste(at):
        at.session_state["model_source"] = "Import config.json"
        at.run()
        at.text_area(key="model_config_text").set_value(_hybrid_config(name)).run()

    at = _open({}, "model", paste)
    assert not at.error, [e.value for e in at.error]
    _assert_spanish(at)
    texts = [text for _, text in _texts(at)] + _cells(at)
    english = sorted({word for text in texts for word in GROUP_WORDS_EN if word in text})
    assert not english, english


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_plan_with_an_engine_in_spanish(engine):
    # the engine's admission figure, its launch flags and their notes, in Spanish (Llama 3.1 8B, one H100)
    def choose(at):
        at.selectbox(key="plan_engine").set_value(engine).run()

    at = _open({"model": "llama-3.1-8b", "gpus": "1"}, "home", setup=choose)
    _assert_spanish(at)
    word = {"vllm": "vLLM", "sglang": "SGLang"}[engine]
    assert any(f"la cifra de admisión de {word}" in c.value for c in at.caption)


def test_plan_parallelism_note_names_kv_groups_in_spanish():
    # DeepSeek V4.1-Flash at TP 8: the note lists the one-head entries replicated on every rank. Their names come
    # from the planner inside a nested sentence ("what"); they used to stay in English ("compressed 1/1 main").
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.query_params["lang"] = "es"
    at.run()
    assert not at.exception
    note = next(c.value for c in at.caption if c.value.startswith("Supone"))
    assert "principal comprimida 1/1" in note and "compressed" not in note, note
