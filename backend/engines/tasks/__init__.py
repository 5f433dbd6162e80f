"""What the Pipelines tasks share beyond one model's maths.

`text` holds the small helpers every task runner uses (input checks, lengths, devices, ranked
labels); `instruct` prompts a small chat model for a task it was not built for and parses its
answer into the dedicated models' result shapes; `support` checks a generated text against its
source (numbers, names and content words the source does not contain).
"""
