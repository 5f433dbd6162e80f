"""The clients of the generation server (vLLM behind an OpenAI-compatible API).

`client` finds the server and talks to it (health, model list, the HTTP calls); `generation` runs
greedy and sampling decodes there and rebuilds the step tables from the returned top log-probs;
`chat` sends the instruct prompts and the corpus reader's questions there.
"""
