"""A shared link or an upload is safe to open, in Chromium: nothing in it becomes markup, a link or a request.

A trap HTTP server on another port of 127.0.0.1 stands for the attacker's (or an internal) address. Each test opens
pages of a real ``streamlit run app.py`` with link parameters or uploaded files that carry payloads aimed at it, and
then reads the page as the browser built it:

* no request left the app's origin (the trap, the font host, anything else), and the trap saw none;
* no ``<img>`` and no ``<a>`` (HTML or the SVG links Plotly draws) whose target came from the payload;
* no response of 400 or more from the app (Streamlit's base-URL probe of a sub-path page included, below);
* the payload shows as text where the page shows it at all (its visible text, or an input's value).

Payloads: a Markdown image, link and autolink, an HTML image (closed and unterminated), a Plotly link
(``<a href>``), Plotly markup (``<br>``, ``<b>``, ``%{y}``), a ``javascript:`` URL, a Streamlit directive
(``:red[...]``, ``:material/...:``) and a CSV formula. The name of a user accelerator (``acc=``) holds at most
60 characters (``planner.catalog.accelerators``), so each payload fits in 60 with the trap's port.

``test_acc_name_on_every_page`` is the acceptance check (every page, four payloads, both sizes between them);
``test_fuzz_links`` draws pages, sizes, parameters and payloads with Hypothesis (derandomized in CI, see
tests/conftest.py); ``test_hostile_uploads`` puts payloads in every uploader's file name and fields.

Streamlit's own probe: on a page at a sub-path (``/model``), the front end would first ask ``/model/_stcore/health``
and ``/model/_stcore/host-config`` (its candidate base URLs are the page's path, then its parent) and get 404 before it
finds ``/_stcore/...``. The page paths are served with the server's base set (``kvplan_app.page_routes``), so it
asks the root only: no 404 is allowed.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import socketserver
import threading
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import CHROMIUM, SIZES, settle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

PAGES = ("", "model", "traces", "frontier", "context", "recommend", "reconcile", "probe")
"""Every page's path ("" is the Plan page, at /)."""
SHOWS_ACCELERATOR = {"", "traces", "frontier", "context", "recommend"}
"""Pages that show the link's accelerator (the Plan page in its name box)."""

PAYLOADS = {
    "markdown image": "X ![i](http://127.0.0.1:{port}/md.png)",
    "html image": "X <img src=http://127.0.0.1:{port}/h.png>",
    "plotly link": "X <a href='http://127.0.0.1:{port}/a'>c</a>",
    "autolink": "X http://127.0.0.1:{port}/auto",
    "markdown link": "X [c](http://127.0.0.1:{port}/l)",
    "unterminated image": "X <img src='http://127.0.0.1:{port}/u.png'",
    "javascript url": "X [c](javascript:alert(1)) <a href=javascript:x>j</a>",
    "plotly markup": "X<br><b>b</b> %{y} <span style='color:red'>s</span>",
    "directive": "X :red[r] :material/home: $x^2$ **b**",
    "csv formula": "=HYPERLINK(\"http://127.0.0.1:{port}/f\",\"c\")",
}
ACCEPTANCE = {
    "1280x800": "![i](http://127.0.0.1:{port}/m.png) http://127.0.0.1:{port}/u",  # Markdown image, autolink
    "1920x1080": "<img src=//127.0.0.1:{port}/h><a href=//127.0.0.1:{port}>c</a>",  # HTML image, Plotly link
}
"""The acceptance payloads, two to a name (60 characters at most), one name per size."""

READ_PAGE_JS = """() => {
  const main = document.querySelector('[data-testid=stMain]') || document.body;
  const inputs = [...document.querySelectorAll('input, textarea')].map(e => e.value);
  const title = [...document.querySelectorAll('[data-testid=stSelectbox], [data-testid=stMultiSelect]')]
      .map(e => e.innerText);
  return {
    imgs: [...document.querySelectorAll('img, image')].map(e => e.getAttribute('src') || e.getAttribute('href') || ''),
    links: [...document.querySelectorAll('a, [href], [xlink\\\\:href]')]
        .map(e => e.getAttribute('href') || e.getAttribute('xlink:href') || ''),
    text: document.body.innerText + '\\n' + inputs.join('\\n') + '\\n' + title.join('\\n'),
  };
}"""


class _Trap(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        self.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def trap():
    """An HTTP server on another port of 127.0.0.1 that records every request it gets (the attacker's address)."""
    server = socketserver.TCPServer(("127.0.0.1", 0), _Trap)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _accelerator(name: str, acc_id: str = "evil") -> str:
    assert len(name) <= 60, f"{name!r}: a longer name is refused by the link parser, and the test would test nothing"
    return f"id:{acc_id}~name:{name}~mem:80000000000~bw:3000~tf:900~hl:64~price:1"


def _open(browser, base: str, size: str, url: str, upload=None, shot: str | None = None) -> dict:
    """Open ``url`` in a fresh context at ``size``; ``upload(page)`` may then act. Returns what the page built and
    every request and error response it made."""
    width, height = SIZES[size]
    ctx = browser.new_context(viewport={"width": width, "height": height})
    ctx.set_default_timeout(90_000)
    page = ctx.new_page()
    requests: list[str] = []
    errors: list[tuple[int, str]] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("response", lambda r: errors.append((r.status, r.url)) if r.status >= 400 else None)
    try:
        page.goto(url)
        settle(page)
        if upload is not None:
            upload(page)
            _idle(page)
        page.wait_for_timeout(600)  # charts draw after the script's last message
        seen = page.evaluate(READ_PAGE_JS)
        if shot and os.environ.get("KVPLAN_SCREENSHOTS"):
            page.screenshot(path=os.path.join(os.environ["KVPLAN_SCREENSHOTS"], f"hostile-{shot}-{size}.png"),
                            full_page=True)
    finally:
        ctx.close()
    return {**seen, "requests": requests, "errors": errors}


def _idle(page) -> None:
    """Wait until the app's run is over (a page that stops early, e.g. on a refused file, draws no share link)."""
    page.wait_for_timeout(1500)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000)
    page.wait_for_timeout(1000)


def _problems(seen: dict, base: str, trap_port: int, payload: str | None) -> list[str]:
    out = []
    outside = [u for u in seen["requests"] if not u.startswith((base + "/", "data:", "blob:"))]
    if outside:
        out.append(f"requests to another origin: {outside[:5]}")
    bad = [(s, u) for s, u in seen["errors"] if u.startswith(base)]
    if bad:
        out.append(f"error responses from the app: {bad[:5]}")
    port = f":{trap_port}"
    imgs = [s for s in seen["imgs"] if port in s or "javascript:" in s.lower()]
    if imgs:
        out.append(f"images from the payload: {imgs}")
    links = [h for h in seen["links"] if port in h or "javascript:" in h.lower() or "127-0-0-1" in h]
    if links:
        out.append(f"links from the payload: {links}")
    if payload is not None and _squash(payload) not in _squash(seen["text"]):
        out.append(f"payload {payload!r} not shown as text")
    return out


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("size", list(ACCEPTANCE))
def test_acc_name_on_every_page(browser, app_server, trap, size):
    """The share link ``?acc=<name with a payload aimed at the trap>`` on every page: no request to the trap, no image,
    no link, the name as text. A Markdown image and an autolink at one size, an HTML image and a Plotly link at the
    other."""
    name = ACCEPTANCE[size].replace("{port}", str(trap.server_address[1]))
    _Trap.hits.clear()
    problems = {}
    for path in PAGES:
        seen = _open(browser, app_server, size, f"{app_server}/{path}?gpu=custom&acc={quote(_accelerator(name))}")
        found = _problems(seen, app_server, trap.server_address[1], name if path in SHOWS_ACCELERATOR else None)
        if found:
            problems[path or "plan"] = found
    assert problems == {} and _Trap.hits == []


LINK_PARAMS = ("acc_name", "acc_id", "model", "gpu", "ctx", "hit", "mkv_model", "mu_gpu", "lang", "fgpus", "t_sample",
               "page")
"""Where a payload goes: the accelerator's name or id, or a link parameter's whole value."""


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(PAGES), size=st.sampled_from(list(SIZES)),
       which=st.sampled_from(list(PAYLOADS)), where=st.sampled_from(LINK_PARAMS),
       second=st.sampled_from(list(PAYLOADS)))
def test_fuzz_links(browser, app_server, trap, path, size, which, where, second):
    """Any page, any size, a payload in a link parameter (and another in the accelerator's name): no markup, no
    link, no request from it."""
    port = trap.server_address[1]
    payload = PAYLOADS[which].replace("{port}", str(port))
    name = PAYLOADS[second].replace("{port}", str(port))
    query = {"gpu": "custom", "acc": _accelerator(name)}
    if where == "acc_name":
        query["acc"] = _accelerator(payload)
    elif where == "acc_id":
        query["acc"] = _accelerator(name, acc_id=payload.replace("~", "-"))
    else:
        query[where] = payload
    _Trap.hits.clear()
    url = f"{app_server}/{path}?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items())
    seen = _open(browser, app_server, size, url)
    assert _problems(seen, app_server, port, None) == [] and _Trap.hits == []


def _payload_files(port: int) -> dict[str, tuple[str, str, bytes]]:
    """Uploader label -> (page, file name, content) with payloads in the name and in the fields the page shows."""
    md = PAYLOADS["markdown image"].replace("{port}", str(port))
    link = PAYLOADS["plotly link"].replace("{port}", str(port))
    fname = f"![i](http:127.0.0.1:{port}) <img src=x> =1+1.json"  # no '/' in a file name
    # a config that imports: the model takes the file's name (payloads), and its own fields carry more
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 10, "comment": link,
              "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "_name_or_path": md}
    trace = "\n".join(json.dumps({"timestamp": i, "input_length": md if i == 2 else 100, "output_length": 10,
                                  "hash_ids": [1, 2, link] if i == 3 else [1, 2, i]}) for i in range(8))
    log = (f"INFO model={md}\nINFO # GPU blocks: {link}\nGPU KV cache size: 12,345 tokens {md}\n"
           f"Maximum concurrency for {link} tokens per request: 3.5x\n")
    plan = {"schema_version": 1, "inputs": {"model_id": md, "gpu_id": link}}
    probe = {"schema_version": 1, "model_id": md, "kv_format": link, "device_name": md}
    return {
        "model": ("model", fname.replace(".json", ".config.json"), json.dumps(config).encode()),
        "traces": ("traces", fname.replace(".json", ".jsonl"), trace.encode()),
        "reconcile": ("reconcile", fname.replace(".json", ".log"), log.encode()),
        "plan": ("", fname, json.dumps(plan).encode()),
        "probe": ("probe", fname, json.dumps(probe).encode()),
    }


def _upload(page, where: str, name: str, content: bytes) -> None:
    if where == "model":
        page.get_by_text("Import config.json").click()
        settle(page)
    elif where == "traces":
        page.get_by_test_id("stSelectbox").filter(has_text="Trace").first.click()
        page.get_by_role("option", name="Upload a trace").click()
    elif where == "probe":
        page.get_by_role("tab", name="Upload a result").click()
    elif where == "plan":
        page.get_by_text("Export").first.scroll_into_view_if_needed()
    inputs = page.locator("input[type=file]")
    inputs.first.wait_for(state="attached")
    inputs.first.set_input_files(files=[{"name": name, "mimeType": "application/octet-stream", "buffer": content}])


@pytest.mark.parametrize("which", ["model", "traces", "reconcile", "plan", "probe"])
def test_hostile_uploads(browser, app_server, trap, which):
    """A file whose name and fields carry payloads, in each page's uploader: refused or read, never markup."""
    port = trap.server_address[1]
    path, name, content = _payload_files(port)[which]
    size = list(SIZES)[["model", "traces", "reconcile", "plan", "probe"].index(which) % 2]
    _Trap.hits.clear()
    seen = _open(browser, app_server, size, f"{app_server}/{path}",
                 upload=lambda page: _upload(page, which, name, content), shot=f"upload-{which}")
    assert _problems(seen, app_server, port, None) == [] and _Trap.hits == []
