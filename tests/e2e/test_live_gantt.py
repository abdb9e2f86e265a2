"""The bug page draws the Gantt timeline while the run is going, not only at the end."""

from __future__ import annotations

from typing import Any

# Records, at every change of the live timeline, how many stage rows it has
# and whether the report (the end of the run) was shown yet.
WATCH = """() => {
  window.__gantt = [];
  const g = document.querySelector('#live-gantt');
  new MutationObserver(() => {
    const rows = g.querySelectorAll('svg rect[data-stage]').length;
    const ended = !document.querySelector('#report').hidden;
    window.__gantt.push([rows, ended]);
  }).observe(g, {subtree: true, childList: true});
}"""


def test_the_timeline_grows_during_the_run(server: str, browser: Any) -> None:
    page = browser.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(server + "/")
        page.wait_for_selector("#queue:not(:has-text('–'))")
        page.click("#submit-example")
        page.wait_for_url("**/#/bugs/*")
        page.evaluate(WATCH)
        page.wait_for_selector("#report:not([hidden])")
        seen: list[list[Any]] = page.evaluate("window.__gantt")
        during = [rows for rows, ended in seen if not ended]
        # drawn while running, one row more as each stage starts, up to all six
        assert during, "the timeline was not drawn before the run ended"
        assert during == sorted(during)
        assert len(set(during)) >= 3 and max(during) == 6
        assert page.locator("#live-gantt svg rect[data-stage]").count() == 6
    finally:
        page.close()
