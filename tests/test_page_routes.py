"""Page paths answer Streamlit's page with the server's base set (kvplan_app.page_routes); the browser check is
tests/e2e/test_hostile_links.py (no response of 400 or more on any page)."""

from starlette.applications import Starlette
from starlette.testclient import TestClient

from kvplan_app import page_routes


def test_the_page_sets_the_base_before_streamlits_own_scripts():
    html = page_routes.page_html()
    assert html.count(page_routes.BASE_SCRIPT) == 1
    assert html.index(page_routes.BASE_SCRIPT) < html.index("<script", html.index(page_routes.BASE_SCRIPT) + 1)
    assert html.index("<head>") < html.index(page_routes.BASE_SCRIPT) < html.index("</head>")


def test_routes_go_first_on_the_running_app_once(monkeypatch):
    app = Starlette()
    monkeypatch.setattr(page_routes, "_installed", False)
    monkeypatch.setattr(page_routes, "_no_server", False)
    monkeypatch.setattr(page_routes, "_running_app", lambda: app)
    assert page_routes.install(["model", "traces"])
    assert page_routes.install(["model", "traces"])  # the second call registers nothing more
    assert [r.path for r in app.router.routes] == ["/model", "/traces"]
    response = TestClient(app).get("/model")
    assert response.status_code == 200 and page_routes.BASE_SCRIPT in response.text
    assert response.headers["cache-control"] == "no-cache"


def test_no_server_no_routes(monkeypatch):
    monkeypatch.setattr(page_routes, "_installed", False)
    monkeypatch.setattr(page_routes, "_no_server", False)
    looks = []
    monkeypatch.setattr(page_routes, "_running_app", lambda: looks.append(1))  # None: no server
    assert not page_routes.install(["model"])
    assert not page_routes.install(["model"])
    assert looks == [1]  # looked for once, not on every script run


def test_a_dead_weak_proxy_among_the_objects_is_no_error():
    # weakref.proxy forwards __class__ to its referent; once that is gone isinstance() raises ReferenceError
    import gc
    import weakref

    class Thing:
        pass

    thing = Thing()
    proxy = weakref.proxy(thing)
    del thing
    gc.collect()
    holder = [proxy]  # the dead proxy stays reachable, as objects in a long test process do
    assert page_routes._running_app() is None
    assert holder
