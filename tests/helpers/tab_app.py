"""One tab's `build()` served alone, in this process, on a free loopback port: for tests of a
tab that app.py serves too, without starting the whole app."""

from __future__ import annotations

import contextlib
import os
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


@contextlib.contextmanager
def served_page(tabs: list[str]) -> Iterator[str]:
    """The URL of app.py's own page holding only `tabs` (app.build_app's keys), served in this process as
    main() serves it (app.served_app, app.launch_options) on the local profile, offline; closed on the way
    out. Its models load in this process once, shared by every page the tests serve after it. One page at
    a time: building a page resets the shell's link and life-cycle registries, which a page being served
    reads at request time (hence one tab per test module, the module's `TAB`)."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # as tests/helpers/app.py's running_app starts app.py
    os.environ["TLAB_PROFILE"] = "local"
    from app import launch_options, served_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = served_app(tabs)
    demo.launch(**launch_options("127.0.0.1", port), prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
