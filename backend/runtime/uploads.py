"""The files visitors upload: where the web app keeps them, and deleting one once it is read.

Any tab that reads an upload (a search corpus, a training set) deletes it from the upload folder
once read, good or bad, so a visitor's file does not outlive the request that used it; a file
elsewhere (a script's own path) is never touched.
"""

from __future__ import annotations

import os
import tempfile


def upload_dir() -> str:
    """Where the web app keeps the files visitors upload (Gradio's GRADIO_TEMP_DIR)."""
    return os.path.realpath(os.environ.get("GRADIO_TEMP_DIR")
                            or os.path.join(tempfile.gettempdir(), "gradio"))


def discard_upload(path: str) -> bool:
    """Delete a visitor's uploaded file (and its now empty folder) once it is read. Files outside
    the upload folder are never touched. -> whether it was deleted."""
    real, folder = os.path.realpath(path), upload_dir()
    if os.path.commonpath([real, folder]) != folder or real == folder:
        return False
    try:
        os.unlink(real)
        parent = os.path.dirname(real)
        if parent != folder and not os.listdir(parent):
            os.rmdir(parent)
    except OSError:
        pass
    return not os.path.exists(real)
