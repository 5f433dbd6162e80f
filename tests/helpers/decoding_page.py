"""The Decoding tab in the browser: open it, pick a strategy, set a number, run and wait, read its table."""

from __future__ import annotations

import re

from playwright.sync_api import expect



def open_tab(page, tab_url):
    page.goto(tab_url)
    page.get_by_role("tab", name=re.compile("decoding", re.I)).first.click()
    expect(page.locator("#decoding-run")).to_be_visible(timeout=30_000)


def pick_strategy(page, name):
    page.locator("#decoding-strategy").get_by_text(name, exact=True).click()


def set_number(page, elem_id, value):
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def run_and_wait(page, label_text):
    page.locator("#decoding-run").click()
    # the final result starts "<label> · sequence log-prob" (beam search first shows "Running beam 4…")
    done = re.compile(re.escape(label_text) + r"\s*·\s*sequence log-prob")
    expect(page.locator("#decoding-stats")).to_contain_text(done, timeout=240_000)
    expect(page.locator("#decoding-cum-plot .js-plotly-plot")).to_be_visible(timeout=60_000)


def table(page, elem_id) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) of a Gradio dataframe, as the page shows them."""
    return page.evaluate(
        """(id) => {
            const root = document.getElementById(id);
            // a header's label, without its column-menu button (a "⋮" shown while the pointer is over it)
            const heads = [...root.querySelectorAll('thead th')].map(th => [...th.querySelectorAll('button')]
                .reduce((text, b) => (b.innerText ? text.replace(b.innerText, '') : text), th.innerText).trim());
            // data rows are grid rows (the <tbody> is a hidden sizing row)
            const rows = [...root.querySelectorAll('[role=row][data-index]')]
                .sort((a, b) => a.dataset.index - b.dataset.index)
                .map(r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.innerText.trim()));
            return [heads, rows];
        }""",
        elem_id,
    )


# Cells whose longest word does not fit their width: (column header, cell text, word px, cell px).
CRUSHED = """(id) => {
    const root = document.getElementById(id);
    const out = [];
    const canvas = document.createElement('canvas').getContext('2d');
    for (const cell of root.querySelectorAll('thead th, [role=gridcell]')) {
        if (cell.offsetParent === null) continue;
        const text = cell.innerText.trim();
        if (!text) continue;
        const style = getComputedStyle(cell.querySelector('span, div') || cell);
        canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const word = Math.max(...text.split(/\\s+/).map(w => canvas.measureText(w).width));
        const pad = parseFloat(getComputedStyle(cell).paddingLeft) + parseFloat(getComputedStyle(cell).paddingRight);
        const room = cell.getBoundingClientRect().width - pad;
        if (word > room + 1) out.push([text.slice(0, 30), Math.round(word), Math.round(room)]);
    }
    return out;
}"""
