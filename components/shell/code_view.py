""""The same in Python" under a result: the library calls that reproduce the run, the
`gradio_client` call of the same endpoint, Copy (the code box's own button) and the run as a notebook.

The text comes from `backend.snippets`; this module only places and wires it. It follows the result's
life cycle: written by a life-cycle part after the run succeeds (folded with the tab's other parts, no
extra round trip), blanked after a failure, blanked in the browser when the run starts (`trigger`), and
blanked with the tab's results when a link or a hand-off puts new inputs in the tab (pass `outputs` to
`links.register(results=...)`)."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

import gradio as gr

from backend import snippets
from backend.runtime.errors import LabError
from components.shell import gradio_patches, lifecycle
from components.shell.course import CHAPTERS
from components.shell.session_memory import download_root, served

_log = logging.getLogger("tlab.code_view")
BLANK_JS = "() => ['', '', null, '']"
GONE = (f"This notebook is no longer on the server: it keeps each visitor's newest notebooks, "
        f"{snippets.NOTEBOOK_KEEP_BYTES / 2**20:.0f} MB together, and this one was older. Press the tab's run button "
        "again for a new one (the code above is the same run's, to copy).")
# The button downloads its file as it is pressed; this asks for the same file and, where the server no longer has
# it (or never gives it to this address), says so beside the button instead of a cancelled download alone.
GONE_JS = ("async (f) => { if (!f || !f.url) return ''; try { const r = await fetch(f.url, {cache: 'no-store'}); "
           "if (r.ok) return ''; } catch (e) {} return " + json.dumps(GONE) + "; }")


@dataclass
class CodeView:
    python: gr.Code
    client: gr.Code
    download: gr.DownloadButton
    gone: gr.Markdown  # the line that says a notebook is no longer on the server (not one of the run's outputs)

    @property
    def outputs(self) -> list:
        return [self.python, self.client, self.download]


def view(elem_id: str, of: str = "") -> CodeView:
    """The closed accordion, placed where it is called (under the result); `elem_id` prefixes its parts; `of`
    names the result when a tab shows two views (Search: "the index", "the search")."""
    title = f"The same in Python ({of})" if of else "The same in Python"
    with gr.Accordion(title, open=False, elem_id=f"{elem_id}-code"):
        python = gr.Code(language="python", label="The library's calls (a notebook's cell)", interactive=False,
                         buttons=["copy"], wrap_lines=True, elem_id=f"{elem_id}-code-python")
        client = gr.Code(language="python", label="The same endpoint through gradio_client", interactive=False,
                         buttons=["copy"], wrap_lines=True, lines=3, elem_id=f"{elem_id}-code-client")
        download = gr.DownloadButton("Download as a notebook (.ipynb)", value=None, size="sm",
                                     elem_id=f"{elem_id}-code-notebook")
        gone = gr.Markdown(elem_id=f"{elem_id}-code-gone")
    download.click(None, [download], [gone], js=GONE_JS, **lifecycle.PAGE_ONLY)
    return CodeView(python, client, download, gone)


def _chapter(number: int) -> tuple[str, str]:
    found = next((c for c in CHAPTERS if c.number == number), None)
    return (f"Chapter {found.number}: {found.title}", found.notebook_url) if found else ("", "")


def client_url() -> str:
    """What the visitor's gradio_client connects to: the Space's id on a Space (Client takes it), else the
    address their page reached this server at, else where `make run` serves."""
    return os.environ.get("SPACE_ID") or gradio_patches.current_page_url() or snippets.DEFAULT_URL


RESULT_AT: dict[str, int | None] = {}  # api_name -> where its JSON is among the outputs a script gets back


def api_declared(name: str, outputs: list, result) -> None:
    """Note where endpoint `name`'s JSON output (`result`) is among its `outputs` (the tuple
    `client.predict` returns; an endpoint with one output, or an API-only one, returns it alone). An output
    Gradio skips in its API (`skip_api`: a gr.State, a button) is the page's own: gradio_client leaves it out of
    the tuple, so it takes no place there."""
    outputs = [o for o in outputs if not getattr(o, "skip_api", False)]
    found = [i for i, o in enumerate(outputs) if o is result]
    RESULT_AT[name] = found[0] if len(outputs) > 1 and found else None


def written(endpoint: str, inputs: dict, result) -> tuple:
    """The view's three values for one run: code, client call, the notebook's path (None when the
    download folder is full: the code still shows)."""
    if not isinstance(result, dict) or not result:
        return "", "", None
    snip = snippets.for_result(endpoint, inputs, result, client_url(), result_at=RESULT_AT.get(endpoint))
    title, url = _chapter(snip["chapter"])
    try:
        path = served(str(snippets.notebook_file(snip, inputs, download_root(), title, url)))
    except LabError as exc:  # the download folder is full: said in the code's last line
        _log.info("no notebook for /%s: %s", endpoint, exc)
        return snip["python"] + f"\n# (No notebook this time: {exc})\n", snip["client"], None
    return snip["python"], snip["client"], path


def attach(cv: CodeView, event, endpoint: str, inputs: dict, result, trigger=None) -> None:
    """Fill `cv` after `event` succeeds from `inputs` ({API argument name: component}) and the `result`
    JSON component; blank it after a failure and, in the browser, when `trigger` starts a run (a button,
    or a listener such as `textbox.submit`)."""
    names, comps = list(inputs), list(inputs.values())

    def code_for_run(*values):
        try:
            return (*written(endpoint, dict(zip(names, values[:-1])), values[-1]), "")
        except Exception:  # a bug in a snippet writer must not leave the last run's code beside this result
            _log.exception("no snippet for /%s", endpoint)
            return "", "", None, ""

    def code_blank():
        return "", "", None, ""

    code_for_run.__name__ = f"code_{endpoint}"
    lifecycle.after(event, "success", code_for_run, [*comps, result], [*cv.outputs, cv.gone])
    lifecycle.after(event, "failure", code_blank, None, [*cv.outputs, cv.gone])
    if trigger is not None:
        listen = trigger.click if hasattr(trigger, "click") else trigger
        listen(None, None, [*cv.outputs, cv.gone], js=BLANK_JS, **lifecycle.PAGE_ONLY)
