"""A Pipelines endpoint called through gradio_client, its reply checked for the fields every result carries."""

from __future__ import annotations

import time




def call(client, api_name, *args):
    start = time.perf_counter()
    out = client.predict(*args, api_name=api_name)
    wall = time.perf_counter() - start
    result = out[-1] if isinstance(out, (list, tuple)) else out
    assert isinstance(result, dict), f"{api_name} returned {type(result)}"
    assert result["model"]["checkpoint"] and result["model"]["source"]
    # the reported time is real work, and never more than the caller waited for the answer
    assert 0 < result["seconds"] <= wall, (result["seconds"], wall)
    return out, result
