"""Submit the bundled bug through the page, watch it live, open its report.

One run of the bundled bug serves both watches (the stage chips and the live
Gantt timeline): each run of it through the page is most of a test's time.
"""

from __future__ import annotations

from typing import Any

# Records every stage chip's data-state change, in order, as the page makes it.
WATCH = """() => {
  window.__seen = [];
  const note = () => document.querySelectorAll('#bug-stages .stage').forEach((li) => {
    const k = li.dataset.stage + ':' + li.dataset.state;
    if (!window.__seen.includes(k)) window.__seen.push(k);
  });
  new MutationObserver(note).observe(document.querySelector('#bug-stages'),
    {subtree: true, childList: true, attributes: true});
  note();
}"""

# Records, at every change of the live timeline, how many stage rows it has
# and whether the report (the end of the run) was shown yet.
WATCH_GANTT = """() => {
  window.__gantt = [];
  const g = document.querySelector('#live-gantt');
  new MutationObserver(() => {
    const rows = g.querySelectorAll('svg rect[data-stage]').length;
    const ended = !document.querySelector('#report').hidden;
    window.__gantt.push([rows, ended]);
  }).observe(g, {subtree: true, childList: true});
}"""


def test_submit_watch_stages_and_timeline_live_and_open_the_report(
    server: str, browser: Any
) -> None:
    page = browser.new_page()
    page.set_default_timeout(120_000)
    try:
        page.goto(server + "/")
        page.wait_for_selector("#queue:not(:has-text('–'))")
        assert "/ 4" in page.inner_text("#queue")
        page.evaluate(WATCH)
        page.click("#submit-example")
        page.wait_for_url("**/#/bugs/*")
        page.evaluate(WATCH_GANTT)
        # stages advance while the run is live: analysis finishes before validation starts
        page.wait_for_selector(".stage[data-stage=analysis][data-state=done]")
        page.wait_for_selector("#report:not([hidden])")
        gantt: list[list[Any]] = page.evaluate("window.__gantt")
        seen: list[str] = page.evaluate("window.__seen")
        order = ["analysis", "file_relevance", "reproduction", "root_cause", "fix", "validation"]
        done_order = [s.split(":")[0] for s in seen if s.endswith(":done")]
        assert done_order == sorted(done_order, key=order.index) and len(done_order) == 6
        running = {s.split(":")[0] for s in seen if s.endswith(":running")}
        assert {"reproduction", "validation"} <= running  # seen running, not only done
        # the timeline: drawn while running, one row more as each stage starts, up to all six
        during = [rows for rows, ended in gantt if not ended]
        assert during, "the timeline was not drawn before the run ended"
        assert during == sorted(during)
        assert len(set(during)) >= 3 and max(during) == 6
        assert page.locator("#live-gantt svg rect[data-stage]").count() == 6
        assert page.inner_text("#bug-state") == "done"
        assert page.get_attribute("#verdict", "data-validated") == "true"
        assert ">=" in page.inner_text("#patch")
        assert page.locator("#stage-table tbody tr").count() == 6
        assert page.locator("#gantt svg rect.call").count() >= 1
        assert page.locator("#ranked li").count() >= 1
        assert "shop/pricing.py" in page.inner_text("#root-cause")
        events = page.locator("#events li").all_inner_texts()
        assert any("validated" in e for e in events)
        page.goto(server + "/#/")
        page.wait_for_selector("#bugs tbody tr a")
        assert "done" in page.inner_text("#bugs tbody tr")
    finally:
        page.close()
