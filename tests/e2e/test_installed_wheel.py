"""The built wheel, installed in a fresh virtual environment, serves the dashboard with ``kvplan serve``.

No checkout is involved once the wheel is built: the venv has no access to the
system's site-packages, ``PYTHONPATH`` is cleared, the server runs from an empty
directory with an empty ``HOME`` (no project or user Streamlit config), so the
page scripts and the Streamlit settings can only come from the installed
package. Dependencies come from the package index pip is configured with.

Expected numbers: DeepSeek V4.1-Flash stores 890 B per token (docs/sources.md).
With 100 GiB all for KV (utilization 1, no reserve, no weights), 1M tokens, no
output tokens and hit rate 0.5, the prefix of 500,000 tokens is stored once:
(107,374,182,400 - 445,000,000) // 445,000,000 = 240 sessions per GPU.

The shipped ``server.maxUploadSize = 64`` (MB) shows in the Live probe page's
uploader as "64MB per file"; Streamlit's own default would say 200MB.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import CHROMIUM, ROOT, free_port, stop_group, wait_healthy

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".venv", ".hypothesis",
                                    ".pytest_cache", ".whl", ".gl", "tests", "bench")
"""What a wheel is never built from (a stale ``build/`` could add files that the tree no longer has)."""

PLAN_LINK = ("?model=deepseek-v4.1-flash&gpu=h200&gpus=1&hbm=100&util=1&reserve=0&weights=0"
             "&ctx=1000000&out=0&hit=0.5&shared=0.5")


def _run(cmd: list[str], env: dict[str, str], cwd: Path, timeout_s: float) -> str:
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(kvplan executable in a fresh venv holding only the wheel and its dependencies, clean env, empty dir)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE, symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "STREAMLIT_", "VIRTUAL_ENV"))}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"),
          str(src)], env, tmp, 300)
    wheels = list((tmp / "dist").glob("kvplan-*.whl"))
    assert len(wheels) == 1, wheels
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], env, tmp, 120)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    _run([str(venv / "bin" / "pip"), "install", "-q", str(wheels[0])], env, tmp, 600)  # pip's own cache: real HOME
    env["HOME"] = str(tmp / "home")  # from here on: no user-level ~/.streamlit/config.toml
    (tmp / "home").mkdir()
    where = tmp / "elsewhere"
    where.mkdir()
    return venv / "bin" / "kvplan", env, where


def test_wheel_installs_cli_and_package_data(installed):
    kvplan, env, where = installed
    python = kvplan.parent / "python"
    files = _run([str(python), "-c", "import planner, kvplan_app, pathlib; p = pathlib.Path(kvplan_app.__file__).parent; "
                  "print(planner.__file__); print(sorted(f.name for f in (p / 'views').glob('*.py'))); "
                  "print((p / '.streamlit' / 'config.toml').is_file())"], env, where, 60).splitlines()
    assert str(kvplan.parents[1]) in files[0]  # the venv's copy, not the checkout
    assert files[1] == str(["context.py", "frontier.py", "model.py", "plan.py", "probe.py", "recommend.py",
                            "reconcile.py", "traces.py"])
    assert files[2] == "True"
    # 890 B/token x 1,000,000 tokens = 890,000,000 B (docs/sources.md)
    out = _run([str(kvplan), "kv", "--model", "deepseek-v4.1-flash", "--context", "1m", "--json"], env, where, 60)
    assert '"kv_bytes": 890000000' in out
    # the Reconcile page's example logs ship in the wheel: 2 x 94 x 1 x 128 x 2 = 48,128 B per token per GPU at TP 4
    out = _run([str(python), "-c", "from importlib import resources; from planner.engines.logs import parse_engine_log; "
                "from planner.engines.reconcile import reconcile; t = resources.files('planner.data.logs')"
                ".joinpath('sglang-21348-qwen3-235b-a22b-tp4.txt').read_text(); "
                "print(reconcile(parse_engine_log(t)).kv_bytes_per_token_per_gpu)"], env, where, 60)
    assert out.strip() == "48128"


def test_kvplan_serve_answers_health_and_renders_the_plan_page(installed, page):
    from playwright.sync_api import expect

    kvplan, env, where = installed
    port = free_port()
    log_path = where / "serve.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([str(kvplan), "serve", "--port", str(port), "--address", "127.0.0.1"],
                                cwd=where, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            assert wait_healthy(f"{base}/_stcore/health", proc, timeout_s=90) == "ok"
        except Exception as exc:
            pytest.fail(f"kvplan serve did not start ({exc}); log:\n{log_path.read_text()[-3000:]}")
        page.goto(base + "/" + PLAN_LINK)
        metric = page.get_by_test_id("stMetric").filter(has_text="Sessions per GPU")
        expect(metric.get_by_test_id("stMetricValue")).to_have_text("240", timeout=60_000)
        assert not page.get_by_test_id("stException").count()
        page.goto(base + "/traces")  # the trace uploader takes the server's limit: the shipped config's 64 MB
        page.get_by_test_id("stSelectbox").filter(has_text="Trace").first.click()
        page.get_by_role("option", name="Upload a trace").click()
        expect(page.get_by_text(re.compile(r"\b64\s*MB per file"))).to_be_visible(timeout=60_000)
    finally:
        stop_group(proc)
