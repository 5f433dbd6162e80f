"""One cheap, valid call of every public api_name, for the tests that must touch them all.

The ZeroGPU test and the Space start test drive every endpoint with these; both fail when an
endpoint exists that has no case here, so a new tab cannot skip them.
"""

from __future__ import annotations

LETTER = "Dear Amazon, I ordered a Megatron figure from Germany but got Optimus Prime. Please send Megatron."
SEARCH = ("glossary", None, "", None, "", False, 120, 30, "flat", 32, 40, 16, 100, 8, 16, 8, "minilm")

# api_name -> positional args of one cheap, valid call.
CASES: dict[str, tuple] = {
    "/classify": (LETTER, False, "", ""),
    "/zero_shot": (LETTER, "complaint, praise", False, "This text is about {}.", False, ""),
    "/ner": ("Bumblebee lives in Detroit.", "simple", False, ""),
    "/qa": (LETTER, "What did the customer get?", 1, ""),
    "/summarize": (LETTER, 8, 0, 0, "", ""),
    "/translate": ("Hello.", "en", "de", 8, 0, "", ""),
    "/generate_text": ("Dear Bumblebee,", "greedy", 4, 0.7, 50, 0.9, 1, 0, ""),
    "/tokenize": ("Tokenizing text", True),
    "/attention": ("time flies like an arrow", "", "encoder", -1),
    "/attention_math": ("time flies like an arrow", "", "decoder", 0, 0, None),
    "/anatomy": ("time flies like an arrow", "", "decoder", 0, 0, -1, ""),
    "/decode": ("Once upon a time", {"strategy": "greedy", "max_new_tokens": 4}),
    "/compare_decoding": ("Once upon a time", [{"strategy": "greedy", "max_new_tokens": 3},
                                               {"strategy": "beam", "num_beams": 2, "max_new_tokens": 3}]),
    "/build_index": SEARCH,
    "/search": ("What does top-p sampling keep?", 3),
    "/compare_indexes": (5,),
    "/ask_corpus": ("What does top-p sampling keep?", 2),
    "/status": (),
    "/efficiency": (1, 1, 8, False),  # 1 prompt, 1 text, 8 tokens, no encoder (the int8 copy is built once)
    # Train (tiny budget: 16 examples, 1 epoch, <= 5 s of fine-tuning), then use it in the same session.
    "/train": ("sentiment", None, "", "", ["zero_shot", "probe", "finetune"], 1, 16, 5, 1e-4, 8, False, False, 0),
    "/predict_trained": ("The delivery was late and the package arrived damaged.", ""),
    "/use_trained": (True, ""),  # this session's Pipelines' Classify now uses it (others unaffected)
    "/download_trained": ("probe",),  # the zip of a save_pretrained folder + model card
    # Train, token classification: 2 steps on 32 shipped sentences; then tag and download in the same session.
    "/train_ner": ("shipped", None, 1, 32, None, 16, True, 0),
    "/predict_ner": ("Angela Merkel visited Paris.",),
    "/download_ner": (),
}
CASES["/intervene"] = ("decoder", "The capital of France is", "L3H*=0", 4, 5)
CASES["/sweep_heads"] = ("encoder", "time flies like an arrow", 1)
CASES["/train_tokenizer"] = ("BPE", 300, "tokenizers", "", None, "Tokenizers learn merges.")  # no model weights
CASES["/decode_by_hand"] = ("Once upon a time", [" there"], 5, "greedy", 2, None, False)
CASES["/generation_attention"] = ("Once upon a time", 3, -1, None, None, False)
CASES["/train_gpt"] = (5, 1, 32, 2, 2e-3, 0, "bytes", "tokenizers", "", None, 1000)  # 5 steps of a 1-layer GPT
CASES["/download_gpt"] = ()  # its zip, in the same session
CASES["/fill_mask"] = ("Paris is the [MASK] of France.", 3, "")  # offline: the decoder fills the mask
CASES["/multilingual_ner_transfer"] = ()  # the default run built at set-up, read from the cache
CASES["/multilingual_ner"] = ("Angela Merkel traf Emmanuel Macron in Paris.", "all")
CASES["/multilingual_ner_train"] = (["de"], 2)  # a learner's own run, live: 2 steps on German, four test sets scored
CASES["/challenges"] = (2,)  # chapter 2's goals (0 or None: all): no model
CASES["/check_challenge"] = ("first-merge", '{"corpus": "xylophone xy xyz"}')  # a BPE trained on the answer: no model
# api_name -> (args, part of the message): endpoints that must fail readably (none today).
EXPECTED_ERRORS: dict[str, tuple[tuple, str]] = {}
MODEL_FREE = {"/tokenize", "/status", "/train_tokenizer", "/train_gpt", "/download_gpt", "/challenges",
              "/check_challenge"}
# Endpoints that answer with no model installed at all (a missing model fails only its own row).
NEEDS_NO_MODEL = {"/train_tokenizer"}
# Endpoints that use no installed model at all (a GPT trained from scratch): they answer in a bare Space.
USES_NO_MODEL = {"/train_gpt", "/download_gpt", "/challenges", "/check_challenge"}


def all_api_names() -> set[str]:
    return set(CASES) | set(EXPECTED_ERRORS)
# From scratch, the tiny encoder-decoder: 5 steps of a 1-layer model on the shipped toy dates, then look at
# one translation's attentions and download it, in the same session. No installed model is used.
CASES["/train_seq2seq"] = (5, 1, 32, 2, 3e-3, 0)
CASES["/translate_toy"] = ("the first of may nineteen ninety", 0, 0)
CASES["/download_seq2seq"] = ()
MODEL_FREE |= {"/train_seq2seq", "/translate_toy", "/download_seq2seq"}
USES_NO_MODEL |= {"/train_seq2seq", "/translate_toy", "/download_seq2seq"}
CASES["/attribute"] = ("Great food, rude staff.", "sentiment", "", "", "", "", "", ["occlusion", "integrated_gradients"], 8, 2)
# Chapter 8 benchmark (Efficiency tab): the default run built at set-up, shown whole (no model runs); every
# variant on one sentence; one variant's zip.
CASES["/compress"] = ("default", 2.0, 0.5, 2, 0.5, "all", 3)
CASES["/compress_predict"] = ("I was so scared of the dark.", "default")
CASES["/compress_download"] = ("student_onnx_int8", "default")
# /attribute gained a last input, question (QA: the question whose answer span is explained; empty otherwise).
CASES["/attribute"] = (*CASES["/attribute"], "")
# ... and then model_box (empty: the profile's model; NER: "multilingual" for chapter 4's model).
CASES["/attribute"] = (*CASES["/attribute"], "")
# Chapter 7's evaluation of the retriever-reader on the glossary's questions (computed once per process).
CASES["/evaluate_reader"] = ()
# Chapter 11 in From scratch: the scaling-law family built at set-up (or its shipped copy) and its fit; one more
# size trained with the family's recipe (the smallest: a few seconds); the cost of attention up to 512 tokens;
# sparse and linear attention on the encoder's own queries and keys.
CASES["/scaling_law"] = ()
CASES["/scaling_add"] = (1, 16)
CASES["/attention_cost"] = ("encoder", 512, 64)
CASES["/sparse_attention"] = ("time flies like an arrow", "encoder", 0, 0, 4, 4, 1, 1, 0)
MODEL_FREE |= {"/scaling_law", "/scaling_add"}
USES_NO_MODEL |= {"/scaling_law", "/scaling_add"}
