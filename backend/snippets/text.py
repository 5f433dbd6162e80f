"""The pieces every snippet is written from: a script assembled from import and code lines, and the
`gradio_client` call of the same endpoint. Plain strings: nothing here runs a model."""

from __future__ import annotations

from backend.runtime.config import DEFAULT_HOST, DEFAULT_PORT

DEFAULT_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}/"  # where `make run` serves the app (the README's examples use it)


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


def client_call(api_name: str, arguments: dict, url: str = DEFAULT_URL, first: tuple[str, dict] | None = None,
                result_at: int | None = None, shown: list[str] | None = None) -> str:
    """The same endpoint through gradio_client, every argument by keyword (as the README documents); a long
    text (a pasted article) is a variable of its own above the call, whole: the call must ask for the same run.
    `first`: (api_name, arguments) of a call the page made before this one (Search builds its index first);
    `shown`: lines that print `found` (the run's JSON: `result[result_at]`, or `result` itself when the
    endpoint returns it alone) in the words the library cell prints."""
    kwargs = dict(arguments)  # None too: an argument the endpoint requires (an upload left empty) must be passed
    named = {k: v for k, v in kwargs.items()
             if isinstance(v, str) and not isinstance(v, Code) and len(literal(v)) > LONG_ARGUMENT and k.isidentifier()
             and k not in ("client", "result", "found", "Client", "handle_file")}
    body = call("client.predict", [], {**kwargs, **{k: Code(k) for k in named}, "api_name": f"/{api_name}"})
    before = []
    if first is not None:
        first_kwargs = {k: v for k, v in first[1].items() if v is not None}
        before = [f"# first, as the page did: /{first[0]} (a script's session starts with nothing of the page's)",
                  call("client.predict", [], {**first_kwargs, "api_name": f"/{first[0]}"})]
    files = any(isinstance(v, Code) and v.startswith("handle_file(") for v in kwargs.values())
    head = "from gradio_client import Client, handle_file" if files else "from gradio_client import Client"
    tail = []
    if shown:
        pick = "result" if result_at is None else f"result[{int(result_at)}]"
        tail = [f"found = {pick}  # the run's JSON (the page's raw JSON box)", *shown]
    return "\n".join([head, "", *[f"{k} = {literal(v)}" for k, v in named.items()], f"client = Client({url!r})",
                      *before, f"result = {body}", *tail]) + "\n"


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
