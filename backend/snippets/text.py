"""The pieces every snippet is written from: a script assembled from import and code lines, and the
`gradio_client` call of the same endpoint. Plain strings: nothing here runs a model."""

from __future__ import annotations

DEFAULT_URL = "http://127.0.0.1:7860/"  # where `make run` serves the app (the README's examples use it)


def script(imports: list[str], *blocks: list[str]) -> str:
    """Imports first (each once, in the order given), then the code blocks, one blank line apart."""
    seen: list[str] = []
    for line in imports:
        if line not in seen:
            seen.append(line)
    parts = ["\n".join(seen)] + ["\n".join(b) for b in blocks if b]
    return "\n\n".join(p for p in parts if p) + "\n"


class Code(str):
    """An argument written as code, not as a string literal (e.g. `handle_file('reviews.csv')`)."""

    def __repr__(self) -> str:
        return str(self)


def file_name(path) -> str:
    """An uploaded file by its own name: the server's copy of it (a temp path) is never shown."""
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def literal(value) -> str:
    """A Python literal for a learner's input (repr: quotes, newlines and non-ASCII escaped safely)."""
    return repr(value)


def call(name: str, args: list[str], kwargs: dict, width: int = 100) -> str:
    """`name(arg, ..., key=value, ...)`, wrapped one argument a line when it would be long."""
    items = list(args) + [f"{k}={literal(v)}" for k, v in kwargs.items()]
    one = f"{name}({', '.join(items)})"
    if len(one) <= width and "\n" not in one:
        return one
    inner = ",\n".join("    " + i for i in items)
    return f"{name}(\n{inner},\n)"


LONG_ARGUMENT = 120  # a text argument whose literal is longer is named above the call, which stays readable


def client_call(api_name: str, arguments: dict, url: str = DEFAULT_URL) -> str:
    """The same endpoint through gradio_client, every argument by keyword (as the README documents); a long
    text (a pasted article) is a variable of its own above the call, whole: the call must ask for the same run."""
    kwargs = {k: v for k, v in arguments.items() if v is not None}
    named = {k: v for k, v in kwargs.items()
             if isinstance(v, str) and not isinstance(v, Code) and len(literal(v)) > LONG_ARGUMENT and k.isidentifier()
             and k not in ("client", "result", "Client", "handle_file")}
    body = call("client.predict", [], {**kwargs, **{k: Code(k) for k in named}, "api_name": f"/{api_name}"})
    files = any(isinstance(v, Code) and v.startswith("handle_file(") for v in kwargs.values())
    head = "from gradio_client import Client, handle_file" if files else "from gradio_client import Client"
    return "\n".join([head, "", *[f"{k} = {literal(v)}" for k, v in named.items()], f"client = Client({url!r})",
                      f"result = {body}"]) + "\n"


def differing(values: dict, defaults: dict) -> dict:
    """Only the settings whose value differs from the library's default (floats compared with a tolerance)."""
    out = {}
    for key, value in values.items():
        if key not in defaults:
            out[key] = value
            continue
        default = defaults[key]
        if isinstance(value, float) or isinstance(default, float):
            try:
                if abs(float(value) - float(default)) < 1e-9:
                    continue
            except (TypeError, ValueError):
                pass
        elif value == default:
            continue
        out[key] = value
    return out
