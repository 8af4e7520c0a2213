"""Typed number boxes under ``?lang=es`` (AppTest): a decimal comma, never "0.50", and the same values as in English.

Streamlit's ``st.number_input`` prints its value with a printf format in the browser, with a decimal point whatever
the language. So on a Spanish page a number box that can hold a fraction is a text box written with a decimal comma
(``kvplan_app.render.number_box``); only whole-number boxes stay ``st.number_input`` (no decimal mark at all).
"""

from __future__ import annotations

import re

import pytest
from streamlit.proto.NumberInput_pb2 import NumberInput as NumberInputProto
from streamlit.testing.v1 import AppTest

from kvplan_app.render import TEXT_SUFFIX
from markdown_text import shown

PAGES = ["home", "model", "traces", "frontier", "context", "recommend", "reconcile", "probe"]


def _open(page: str, lang: str = "es", setup=None) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=120)
    for key, value in {"lang": lang, "page": page}.items():
        at.query_params[key] = value
    at.run()
    if setup is not None:
        setup(at)
    assert not at.exception, at.exception
    return at


def _yours(at: AppTest) -> None:
    """The Plan page with the user-defined accelerator's form open (five more number boxes)."""
    at.selectbox(key="plan_gpu_id").set_value("yours").run()


def _decimal_points(at: AppTest) -> list[str]:
    """Every number box of the page that would show a decimal point: a fractional ``st.number_input`` (its printf
    format writes one in the browser), or a number box's text holding one."""
    bad = [f"{n.key}: number_input of floats ({n.proto.format})" for n in at.number_input
           if n.proto.data_type != NumberInputProto.INT]
    bad += [f"{box.key}={box.value!r}" for box in at.text_input
            if box.key and box.key.endswith(TEXT_SUFFIX) and re.search(r"\d\.\d", box.value or "")]
    return bad


@pytest.mark.parametrize("page", PAGES)
def test_no_decimal_point_in_a_spanish_number_box(page):
    at = _open(page)
    assert not _decimal_points(at)
    if page == "home":
        at = _open(page, setup=_yours)
        assert not _decimal_points(at)
        boxes = {box.key: box.value for box in at.text_input if box.key and box.key.endswith(TEXT_SUFFIX)}
        # the Plan page's defaults (kvplan_app.state): hit rate 0.5, shared prefix 0.5, written with a comma
        assert boxes["plan_hit_rate_typed_text"] == "0,50"
        assert boxes["plan_shared_prefix_typed_text"] == "0,50"


def test_the_check_sees_an_english_box():
    """The check above fails on a page that shows floats in ``st.number_input`` (the English page does)."""
    assert any("plan_hit_rate_typed" in bad for bad in _decimal_points(_open("home", "en")))


def test_a_typed_comma_sets_the_same_value_as_english():
    at = _open("home")
    at.text_input(key="plan_hit_rate_typed_text").set_value("0,6").run()
    at.text_input(key="plan_shared_prefix_typed_text").set_value("0,25").run()
    assert not at.exception
    inputs = at.session_state["plan_inputs"]
    assert (inputs.hit_rate, inputs.shared_prefix) == (0.6, 0.25)
    assert at.session_state["plan_hit_rate"] == 0.6  # the slider follows the box
    assert not at.error

    english = _open("home", "en")
    english.text_input(key="plan_hit_rate_typed_text").set_value("0.6").run()
    english.text_input(key="plan_shared_prefix_typed_text").set_value("0.25").run()
    mine, theirs = at.session_state["plan_inputs"], english.session_state["plan_inputs"]
    assert (mine.hit_rate, mine.shared_prefix) == (theirs.hit_rate, theirs.shared_prefix)


def test_a_bad_number_names_field_text_and_range_and_keeps_the_plan():
    at = _open("home")
    before = at.session_state["plan_inputs"]
    at.text_input(key="plan_shared_prefix_typed_text").set_value("0,5x").run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]  # as the page shows it (Markdown escapes undone)
    assert len(errors) == 1, errors
    assert "Prefijo compartido escrito" in errors[0] and "0,5x" in errors[0] and "[0, 1]" in errors[0], errors[0]
    assert at.session_state["plan_inputs"] == before  # the last valid plan
    at.text_input(key="plan_shared_prefix_typed_text").set_value("1,5").run()
    assert len(at.error) == 1 and "«1,5»" in shown(at.error[0].value)
    assert at.session_state["plan_inputs"] == before
    at.text_input(key="plan_shared_prefix_typed_text").set_value("0,75").run()
    assert not at.error
    assert at.session_state["plan_inputs"].shared_prefix == 0.75


def test_a_thousands_point_and_an_empty_optional_box():
    at = _open("home")
    at.text_input(key="plan_host_ram_gib_text").set_value("1.024").run()  # Spanish grouping: 1,024 GiB
    assert not at.exception and not at.error
    assert at.session_state["plan_host_ram_gib"] == 1024.0
    at.text_input(key="plan_host_ram_gib_text").set_value("").run()  # empty: the node's figure again
    assert not at.error
    assert at.session_state["plan_host_ram_gib"] is None


# A user's link (the Plan page, English unless ``lang`` is given): Llama 3.1 70B on four H100 SXM, 128k context.
LINK = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "4", "ctx": "128k"}


def _linked(lang: str = "en") -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=120)
    for key, value in {**LINK, "lang": lang}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("key, label, text, bounds", [
    # the hit rate and shared prefix are fractions in [0, 1] (kvplan_app/views/plan.py, min_value/max_value)
    ("plan_hit_rate_typed", "Hit rate, typed", "0,5", "[0, 1]"),
    ("plan_hit_rate_typed", "Hit rate, typed", "abc", "[0, 1]"),
    ("plan_hit_rate_typed", "Hit rate, typed", "-1", "[0, 1]"),
    ("plan_shared_prefix_typed", "Shared prefix, typed", "1e9", "[0, 1]"),
    # HBM: at least 0.1 GiB, at most MAX_HBM_GIB = 100,000 GiB (planner/plan/inputs.py)
    ("plan_hbm_gib_typed", "HBM (GiB), typed", "abc", "[0.1, 100,000]"),
    ("plan_hbm_gib_typed", "HBM (GiB), typed", "0,5", "[0.1, 100,000]"),
])
def test_a_bad_english_text_is_one_error_and_the_plan_stays(key, label, text, bounds):
    """English used to read "0,5" as 5, "abc" as the minimum, and keep "-1" shown over a stale plan."""
    at = _linked()
    before = at.session_state["plan_inputs"]
    at.text_input(key=key + TEXT_SUFFIX).set_value(text).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1, errors
    assert label in errors[0] and f"“{text}”" in errors[0] and bounds in errors[0], errors[0]
    assert at.session_state["plan_inputs"] == before
    assert at.text_input(key=key + TEXT_SUFFIX).value == text  # the text stays, next to its error
    assert not [i.value for i in at.info if "Link parameter" in i.value]
    assert not [w.value for w in at.warning if "Link parameter" in w.value]


def test_english_decimal_point_and_thousands_comma():
    """English: "1.024" is 1.024 (it used to show and use 1.0), "1,024" is 1024."""
    at = _linked()
    at.text_input(key="plan_hbm_gib_typed" + TEXT_SUFFIX).set_value("1.024").run()
    assert not at.error
    assert at.session_state["plan_inputs"].hbm_gib == 1.024
    assert at.text_input(key="plan_hbm_gib_typed" + TEXT_SUFFIX).value == "1.024"
    at.text_input(key="plan_hbm_gib_typed" + TEXT_SUFFIX).set_value("1,024").run()
    assert not at.error
    assert at.session_state["plan_inputs"].hbm_gib == 1024.0


@pytest.mark.parametrize("lang, typed, shown_text", [("en", "0.25", "0.25"), ("es", "0,25", "0,25")])
def test_the_hbm_box_shows_the_value_the_plan_uses(lang, typed, shown_text):
    """The HBM box's format is "%.1f"; 0.25 GiB used to show as "0,2" while the plan and link used 0.25."""
    at = _linked(lang)
    at.text_input(key="plan_hbm_gib_typed" + TEXT_SUFFIX).set_value(typed).run()
    assert not at.error
    assert at.session_state["plan_inputs"].hbm_gib == 0.25
    at.run()  # a later run writes the box from the value again
    assert at.text_input(key="plan_hbm_gib_typed" + TEXT_SUFFIX).value == shown_text


@pytest.mark.parametrize("text, number", [
    ("1.024", 1.024), ("1,024", 1024.0), ("1,234.5", 1234.5), ("-2,000", -2000.0), (" 0.25 ", 0.25), ("1e9", 1e9),
])
def test_english_reading(text, number):
    """English writes a decimal point and groups thousands with commas (the US/UK convention)."""
    from kvplan_app.i18n import read_number

    assert read_number(text, "en") == number


@pytest.mark.parametrize("text", ["0,5", "1,5", "1,02", "1,0245", ",5", "1,,024", "abc", ""])
def test_english_refuses_a_comma_that_does_not_group_thousands(text):
    from kvplan_app.i18n import read_number

    with pytest.raises(ValueError):
        read_number(text, "en")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_hbm_slider_shows_the_value_the_plan_uses(lang):
    # the HBM slider steps by 0.1 and shows one decimal; 0.25 GiB typed in its box sits off the steps, and its
    # thumb read "0.3" (English "%.1f") or "0,2" (Spanish) while the plan used 0.25
    at = _linked(lang)
    at.text_input(key="plan_hbm_gib_typed" + TEXT_SUFFIX).set_value("0.25" if lang == "en" else "0,25").run()
    at.run()
    assert at.session_state["plan_inputs"].hbm_gib == 0.25
    if lang == "en":
        assert at.slider(key="plan_hbm_gib").proto.format == "%.2f"
    else:
        shown = list(at.select_slider(key="plan_hbm_gib").proto.options)
        assert "0,25" in shown  # every option at two decimals while the value needs them ("0,20", "0,25", "0,30")
