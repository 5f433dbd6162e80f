"""A result table on a phone keeps every number whole (components/shell/assets/figures.js fits the table to its
widest word and lets it scroll): a table drawn before the script ran, with nothing changing after, was never
fitted, and its narrow columns cut "0.545" into "0.54 / 5" and "91.6%" into "91 / .6 / %". No model: a
Dataframe alone with the page's figure tools."""

from __future__ import annotations

import gradio as gr

from tests.helpers.browser import new_page
from tests.helpers.tab_app import served_tab

ROWS = [["German only", "0.605 (0.545-0.723)", "0.648 (0.563-0.730)", "0.737 (0.674-0.794)", "0.597 (0.500-0.674)"],
        ["Student on ONNX Runtime int8", "90.5%", "17.44 ± 43.11 (too noisy to rank)", "10x (4-23)", "22.1"]]

CUT_WORDS = """() => {
  const cut = [];
  for (const span of document.querySelectorAll('[role=gridcell] span')) {
    const node = span.firstChild;
    if (!node || node.nodeType !== 3) continue;
    const text = node.textContent;
    for (const m of text.matchAll(/[^\\s-]+-?/g)) {  // a line may end after a hyphen ("0.545-" / "0.723)")
      const r = document.createRange();
      r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
      if (tops.size > 1) cut.push(m[0]);
    }
  }
  return cut;
}"""


def build():
    from components.shell import figure_tools

    gr.Dataframe(ROWS, headers=["trained on", "German", "French", "Italian", "English"], interactive=False, wrap=True,
                 column_widths=["28%", "18%", "18%", "18%", "18%"], elem_id="words-table")
    figure_tools()


def test_a_phones_table_never_cuts_a_number(browser):
    with served_tab(build, themed=True) as url:
        page = new_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        try:
            page.goto(url)
            page.locator("#words-table [role=gridcell]").first.wait_for(timeout=60_000)
            page.wait_for_function(f"() => ({CUT_WORDS})().length === 0", timeout=10_000)
            assert page.evaluate(CUT_WORDS) == []
        finally:
            page.context.close()
