"""What the code view's download tests share (tests/e2e/test_code_view_download_*.py): a run through the lane's app,
the notebook the page's own writer offers for it (components/shell/code_view.written), executed as a learner runs
it (nbclient, a maintained executor, from an empty folder, offline, the repository off the kernel's path), and the
lines the page's result prints in the library cell's words (backend/snippets/printed.py run on the page's JSON).

A notebook "gives the page's result back" when its library cell's last lines and its gradio_client cell's lines
are those lines, word for word."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import time

import nbformat
from gradio_client import Client
from nbclient import NotebookClient

TIMES: dict[str, float] = {}  # notebook -> seconds it took to execute (printed by each module's last test)
HARNESS = "%reset -f\nimport os\nos.chdir({folder!r})\ndel os"  # not the notebook's: dropped before reading it


def execute(notebook_path: str, folder, kernel: dict) -> list[tuple[str, str]]:
    """Run the downloaded notebook in `folder` (empty but for it) as Jupyter runs it, in the session's kernel
    (its namespace emptied first: a name one notebook defined cannot help the next) -> each code cell's
    (stdout, stderr); a cell that raised fails the test, and so does a warning the notebook does not explain."""
    folder.mkdir(exist_ok=True)
    assert not list(folder.iterdir())
    target = folder / os.path.basename(notebook_path)
    shutil.copy(notebook_path, target)
    nb = nbformat.read(str(target), as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(HARNESS.format(folder=str(folder))))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the repository stays off the kernel's path
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    started = time.monotonic()
    client = NotebookClient(nb, timeout=300, kernel_name="python3", km=kernel.get("km"))
    client.execute(env=env, cwd=str(folder), cleanup_kc=False)
    kernel["km"] = client.km
    client.kc.stop_channels()
    TIMES[target.name] = round(time.monotonic() - started, 1)
    nb.cells.pop(0)
    outs = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, errors
        outs.append(tuple("".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == stream)
                          for stream in ("stdout", "stderr")))
    source = "\n".join(c.source for c in nb.cells)
    for _, err in outs:  # what a learner sees in red: progress bars, and warnings the notebook explains in a comment
        assert "LOAD REPORT" not in err, err[-2000:]
        for warning in set(re.findall(r"\b(\w+Warning)\b", err)):
            assert re.search(rf"#.*\b{warning}\b", source), err[-2000:]
    return outs


def page_lines(endpoint: str, result: dict) -> list[str]:
    """What the client cell's printing lines print for the page's own JSON: the page's result in the library
    cell's words."""
    from backend.snippets import printed

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile("\n".join(printed.lines(endpoint, result)), f"<printed {endpoint}>", "exec"), {"found": result})
    return [line for line in out.getvalue().splitlines() if line.strip()]


def run(app_url: str, writer, endpoint: str, arguments: dict, inputs: dict | None = None, client=None):
    """The run as the page makes it: /`endpoint` with `arguments` through gradio_client -> (its JSON, the path
    of the notebook the page's writer offers for it). `inputs`: what the page's code view reads, where it is not
    the arguments (Decoding reads its prompt alone; the settings come with the result); `client`: the session of
    an earlier call (Search's index)."""
    got = (client or Client(app_url, verbose=False)).predict(**arguments, api_name=f"/{endpoint}")
    at = writer.RESULT_AT.get(endpoint)
    result = got if at is None else got[at]
    _, _, path = writer.written(endpoint, arguments if inputs is None else inputs, result)
    assert path, f"no notebook offered for /{endpoint}"
    return result, path


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def same_words(line: str, page: str) -> bool:
    """`line` says what `page` says: the same words, and the same numbers to the digits printed, give or take
    one unit of the last digit (a number the page's JSON stored at 4 decimals and printed at 3 may round the
    other way than the library's own float; a real difference is many units)."""
    if NUMBER.sub("#", line) != NUMBER.sub("#", page):
        return False
    for a, b in zip(NUMBER.findall(line), NUMBER.findall(page)):
        if a == b:
            continue
        if "." not in a + b or "e" in a + b:
            return False
        digits = max(len(x.split(".")[1]) for x in (a, b) if "." in x)
        if abs(float(a) - float(b)) > 1.01 * 10 ** -digits:
            return False
    return True


def gives_back(endpoint: str, result: dict, outs, exact: bool = True) -> tuple[list[str], list[str], list[str]]:
    """The page's lines, the library cell's last lines and the client cell's lines (after gradio_client's
    "Loaded as API"); with `exact`, both cells must print the page's lines word for word (same_words)."""
    expected = page_lines(endpoint, result)
    assert expected, f"/{endpoint}'s result prints nothing"
    library = [line for line in outs[-2][0].splitlines() if line.strip()][-len(expected):]
    remote = [line for line in outs[-1][0].splitlines() if line.strip() and not line.startswith("Loaded as API")]
    if exact:
        for cell, lines in (("library", library), ("client", remote)):
            assert len(lines) == len(expected) and all(map(same_words, lines, expected)), \
                f"{cell} cell:\n{lines}\npage:\n{expected}"
    return expected, library, remote


def check(app_url: str, writer, kernel: dict, folder, endpoint: str, arguments: dict, inputs: dict | None = None):
    """A run, its notebook executed from `folder`, both cells giving the page's lines back -> the page's JSON."""
    result, path = run(app_url, writer, endpoint, arguments, inputs)
    gives_back(endpoint, result, execute(path, folder, kernel))
    return result
