"""One tab's `build()` served alone, in this process, on a free loopback port: for tests of a
tab that app.py serves too, without starting the whole app."""

from __future__ import annotations

import contextlib
import socket
from typing import Callable, Iterator


@contextlib.contextmanager
def served_tab(build: Callable[[], None], themed: bool = False) -> Iterator[str]:
    """The URL of a small Blocks app holding what `build()` draws; closed on the way out."""
    import gradio as gr

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with gr.Blocks() as demo:
        build()
        # As app.py's page does once it has applied its address: the browser tests' goto waits for it.
        from components.shell import lifecycle, links

        lifecycle.wire()  # as app.py does once every tab is built
        demo.load(None, None, None, js=links.READY_JS, queue=False)
    extra = {}
    if themed:  # the app's system-font theme (the default theme fetches web fonts, which fails offline)
        from app import theme

        extra["theme"] = theme()
    demo.queue().launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **extra)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
