"""Question answering on a model handed in (chapter 7): the span readers and how they are scored.

`extractive_qa` reads an answer from a QA head's start/end logits (long contexts in overlapping
windows); `span_qa` answers with an instruct decoder that may only copy a span of the context, and
`question_terms` finds the question's topic words the text never mentions (half of "no answer");
`reader` is the retriever-reader's reader fine-tuned here on `data` (the shipped SQuAD 2.0 style
set) and scored by `squad_metrics` (exact match and token F1, as the official script computes them).
"""
