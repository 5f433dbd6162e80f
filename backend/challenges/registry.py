"""Every challenge: its chapter, goal (one sentence), answer fields and example, the tab that helps (its
?tab= key, with the tab's inputs filled from the answer: `try_query`), its check and its hint."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from backend.challenges import entities, generation as gen, heads, meaning, reading, words
from backend.challenges.answers import Field


@dataclass(frozen=True)
class Challenge:
    id: str
    chapter: int
    title: str
    goal: str
    fields: tuple[Field, ...]
    example: dict  # the answer's shape (it does not solve the challenge)
    tab: str  # the ?tab= key of the tab that helps
    check: Callable[[dict], tuple]
    hint: str
    try_query: dict = field(default_factory=dict)  # the tab's link inputs; "{name}" stands for the answer's value


def _t(name, what, hi=200):
    return Field(name, "text", what, hi=hi)


def _n(name, what, lo, hi):
    return Field(name, "int", what, lo=lo, hi=hi)


def _texts(name, what, lo, hi):
    return Field(name, "texts", what, lo=lo, hi=hi, max_chars=200)


_HEAD = (_t("text", "an English sentence"), _n("layer", "the encoder layer, from 0", 0, 47),
         _n("head", "the head in that layer, from 0", 0, 63))
_ATTENTION_TRY = {"tab": "attention", "text": "{text}", "text_b": "", "role": "encoder", "layer": "{layer}",
                  "head": "{head}"}

CHALLENGES: tuple[Challenge, ...] = (
    Challenge("mixed-review", 1, "An unsure classifier",
              "Write a review that praises one thing and criticises another, so that the sentiment classifier's top "
              f"score stays below {words.UNSURE}.",
              (_t("text", "the review, at least 6 words"),), {"text": "The food was great."}, "pipelines-classify",
              words.mixed_review, "In Pipelines > Text classification, put 'but' between a strong praise and a strong "
              "complaint and watch the two scores; batch mode (one text per line) compares versions at once.",
              {"tab": "pipelines-classify", "text": "{text}", "batch": "0"}),
    Challenge("three-entity-types", 1, "Who, what and where",
              f"Write a sentence of at most {entities.MAX_WORDS} words in which the NER model finds a person, an "
              "organisation and a place.",
              (_t("text", "your sentence"),), {"text": "The cat sat on the mat."}, "pipelines-ner",
              entities.three_types, "In Pipelines > Named entities, name a person who works for a company and "
              "travels somewhere; capitals help the model.",
              {"tab": "pipelines-ner", "text": "{text}", "aggregation": "simple", "batch": "0"}),
    Challenge("flip-sentiment", 2, "Flip the label with one word",
              "Write two sentences that differ in exactly one word and get different labels from the sentiment "
              "classifier.",
              (_t("a", "the first sentence"), _t("b", "the same sentence with one word changed")),
              {"a": "The service was slow.", "b": "The service was late."}, "pipelines-classify",
              words.flip_sentiment, "In Pipelines > Text classification, turn on batch mode and put both sentences on "
              "two lines: swap an adjective ('great' / 'awful') or add a negation in place of a word.",
              {"tab": "pipelines-classify", "text": "{a}\n{b}", "batch": "1"}),
    Challenge("tokenizers-disagree", 2, "Two tokenizers, two counts",
              "Write a text on which WordPiece (the encoder's tokenizer) and byte-level BPE (the decoder's) count "
              "tokens at least 5 apart.",
              (_t("text", "the text"),), {"text": "Tokenizing text is a core task of NLP."}, "tokenizers",
              words.tokenizers_disagree, "In Tokenizers, compare the columns: spaces, capitals, emoji, digits and rare "
              "words are split differently by the two.", {"tab": "tokenizers", "text": "{text}"}),
    Challenge("unknown-to-wordpiece", 2, "Out of WordPiece's vocabulary",
              "Write a text in which WordPiece finds something it has no piece for ([UNK]) while byte-level BPE "
              "decodes the text back exactly.",
              (_t("text", "the text"),), {"text": "A plain sentence."}, "tokenizers", words.unknown_to_wordpiece,
              "In Tokenizers, look for [UNK] in the WordPiece column: characters outside its 30,000-piece vocabulary "
              "(symbols, emoji, other scripts) become it.", {"tab": "tokenizers", "text": "{text}"}),
    Challenge("previous-token-head", 3, "A head that looks back",
              f"Find a sentence and an encoder head that gives the previous token at least {heads.PREVIOUS:.0%} of "
              "each token's attention.",
              _HEAD, {"text": "time flies like an arrow", "layer": 0, "head": 0}, "attention", heads.previous_token,
              "In Attention, pick the encoder and scan the heads of the early layers: a previous-token head draws a "
              "diagonal just below the main one.", _ATTENTION_TRY),
    Challenge("special-sink", 3, "A head with nothing to do",
              f"Find a sentence and an encoder head that sends at least {heads.SINK:.0%} of the sentence's attention "
              "to [CLS] and [SEP] (an attention sink).",
              _HEAD, {"text": "time flies like an arrow", "layer": 0, "head": 0}, "attention", heads.special_sink,
              "In Attention, look at the later layers: many heads park their attention on [SEP] when their pattern "
              "does not apply.", _ATTENTION_TRY),
    Challenge("order-matters", 3, "Same words, other order",
              "Write two sentences with exactly the same words in a different order that the sentiment classifier "
              "labels differently.",
              (_t("a", "the first sentence"), _t("b", "the same words reordered")),
              {"a": "The plot was good, the acting bad.", "b": "The acting was good, the plot bad."},
              "pipelines-classify", words.order_matters, "Position encodings let a model tell 'not good, just bad' "
              "from 'not bad, just good': try a negation that moves.",
              {"tab": "pipelines-classify", "text": "{a}\n{b}", "batch": "1"}),
    Challenge("cross-lingual-twins", 4, "One meaning, two languages",
              f"Write an English sentence and its German translation that the multilingual encoder places together "
              f"(cosine similarity at least {meaning.TWIN}) while the English-only encoder keeps them {meaning.GAP} "
              "further apart.",
              (_t("english", "the English sentence"), _t("german", "its German translation")),
              {"english": "The weather is nice today.", "german": "The weather is nice today."}, "multilingual",
              meaning.cross_lingual_twins, "Chapter 4's multilingual encoder was pretrained on 100 languages; the "
              "English-only one reads German as rare word pieces. Translate faithfully, with few shared names.",
              {"tab": "multilingual"}),
    Challenge("compound-pieces", 4, "A German compound",
              "Find a German word that the multilingual SentencePiece vocabulary keeps in at most 2 pieces and "
              "English WordPiece cuts into at least 4.",
              (_t("word", "one German word", 60),), {"word": "Haus"}, "tokenizers", meaning.compound_pieces,
              "In Tokenizers, compare the WordPiece and multilingual columns on common German nouns and compounds "
              "(government, weather, Wednesday...).", {"tab": "tokenizers", "text": "{word}"}),
    Challenge("german-tagged-right", 4, "English training, German sentence",
              "Write a German sentence in which the NER model trained only on English tags the person and the place "
              "you name, each whole and with its type.",
              (_t("text", "your German sentence"), _t("person", "the person in it, as written", 80),
               _t("place", "the place in it, as written", 80)),
              {"text": "Die Kanzlerin fuhr nach Frankreich.", "person": "Kanzlerin", "place": "Frankreich"},
              "pipelines-ner", entities.german_tagged_right, "Names cross languages when they are written alike: use "
              "a full name and a city; chapter 4's Multilingual tab shows what a multilingual encoder adds.",
              {"tab": "pipelines-ner", "text": "{text}", "aggregation": "simple", "batch": "0"}),
    Challenge("stop-the-loop", 5, "Stop the loop",
              "Find a prompt on which greedy decoding of N new tokens repeats a 3-gram (three tokens in a row that "
              "the text, prompt included, already holds), and the same prompt with no_repeat_ngram_size=3 does not.",
              (_t("prompt", "the prompt"), _n("max_new_tokens", "N, the new tokens to generate", 1, 64)),
              {"prompt": "Once upon a time", "max_new_tokens": 8}, "decoding", gen.stop_the_loop,
              "In Decoding, run greedy with 48-64 new tokens on a prompt that starts a list or a chant and look for "
              "the loop; then set 'No repeat n-gram' to 3.",
              {"tab": "decoding", "prompt": "{prompt}", "strategy": "greedy", "max_new": "{max_new_tokens}",
               "no_repeat": "0"}),
    Challenge("beam-beats-greedy", 5, "Beam beats greedy",
              f"Find a prompt on which beam search (4 beams) finds N new tokens whose log-prob beats greedy's by at "
              f"least {gen.BEAM_GAIN} nats.",
              (_t("prompt", "the prompt"), _n("max_new_tokens", "N, the new tokens (both generate exactly N)", 2, 24)),
              {"prompt": "1, 2, 3, 4,", "max_new_tokens": 8}, "decoding", gen.beam_beats_greedy,
              "In Decoding, compare greedy and beam on an open prompt: greedy takes the best token now, beam keeps "
              "paths whose later tokens make up for a worse first one.",
              {"tab": "decoding", "prompt": "{prompt}", "strategy": "beam", "max_new": "{max_new_tokens}",
               "num_beams": "4", "no_repeat": "0"}),
    Challenge("sure-next-token", 5, "No choice left",
              f"Write a prompt whose next token the decoder gives probability at least {gen.SURE}, so that top-p "
              "0.9 sampling keeps that one token alone.",
              (_t("prompt", "the prompt"),), {"prompt": "My favourite colour is"}, "decoding", gen.sure_next_token,
              "In Decoding, read the first step's candidates: a famous phrase half written leaves one way on.",
              {"tab": "decoding", "prompt": "{prompt}", "strategy": "greedy", "max_new": "8", "no_repeat": "0"}),
    Challenge("rouge-fooled", 6, "Fool ROUGE",
              f"Write a summary that scores ROUGE-1 at least {meaning.HIGH_ROUGE} against the reference "
              f"\"{meaning.REFERENCE}\" yet gets the other sentiment label.",
              (_t("summary", "your summary"),), {"summary": "The customer liked the delivery."}, "pipelines-classify",
              meaning.rouge_fooled, "ROUGE counts shared words: keep the reference's words and swap the ones that "
              "carry its feeling. Check the label in Pipelines > Text classification.",
              {"tab": "pipelines-classify", "text": meaning.REFERENCE + "\n{summary}", "batch": "1"}),
    Challenge("paraphrase-low-rouge", 6, "Same meaning, other words",
              f"Write a summary that means what the reference \"{meaning.REFERENCE}\" means with ROUGE-1 at most "
              f"{meaning.LOW_ROUGE} and the embeddings' cosine similarity at least {meaning.CLOSE}.",
              (_t("summary", "your summary"),), {"summary": "The customer was delighted."}, "pipelines-summarize",
              meaning.paraphrase_low_rouge, "Use synonyms for every word of the reference (client, thrilled, "
              "fast...): ROUGE drops, the embedding stays.", {"tab": "pipelines-summarize"}),
    Challenge("search-first", 7, "Find it by meaning",
              f"Write a search query that ranks the glossary's '{reading.TARGET_TITLE}' passage first without using "
              "its name.",
              (_t("query", "your query", 160),), {"query": "How do I make a model smaller?"}, "search",
              reading.search_first, "In Semantic search, describe what the passage explains (a small model copying a "
              "big one) and look at the ranking.", {"tab": "search", "query": "{query}"}),
    Challenge("reader-refuses", 7, "A question with no answer",
              f"Ask a question about the passage \"{reading.PASSAGE}\" that it does not answer, so that the QA "
              "reader refuses.",
              (_t("question", "your question", 160),), {"question": "When was the harbour built?"}, "pipelines-qa",
              reading.reader_refuses, "Ask about something the passage never mentions (its cost, a person's name...) "
              "but use one of its words; try it in Pipelines > Question answering.",
              {"tab": "pipelines-qa", "context": reading.PASSAGE, "question": "{question}"}),
    Challenge("int8-within-one-point", 8, "Quantize without losing a point",
              "Give labelled sentences on which the sentiment classifier scores at least 75% and its int8 copy "
              "stays within one point of it.",
              (_texts("positive", "4-10 positive sentences", 4, 10), _texts("negative", "4-10 negative sentences", 4, 10)),
              {"positive": ["Great!", "I love it.", "Wonderful.", "So good."], "negative": ["Great!", "I love it.",
                                                                                     "Wonderful.", "So good."]},
              "efficiency", reading.int8_within_point, "Dynamic int8 quantization rounds weights to 256 levels: "
              "clear sentences keep their labels; see the Efficiency tab's compress section for a whole test set.",
              {"tab": "efficiency"}),
    Challenge("int8-same-text", 8, "Rounded weights, same words",
              "Find a prompt on which the decoder's int8 copy writes the same N greedy tokens as the float32 "
              "original.",
              (_t("prompt", "the prompt"), _n("max_new_tokens", "N, the new tokens to compare", 4, 16)),
              {"prompt": "Once upon a time", "max_new_tokens": 8}, "decoding", gen.int8_same_text,
              "int8 rounding shifts every probability a little: a prompt whose next tokens are clear survives it, "
              "one with close calls does not. Decoding's precision setting shows both side by side.",
              {"tab": "decoding", "prompt": "{prompt}", "strategy": "greedy", "max_new": "{max_new_tokens}",
               "precision": "int8", "no_repeat": "0"}),
    Challenge("zero-shot-winner", 9, "A label it never trained on",
              f"Write a text that zero-shot classification files under '{meaning.ZERO_SHOT_TARGET}' among "
              f"{', '.join(meaning.ZERO_SHOT_LABELS)}, without the words {', '.join(meaning.BANNED)}.",
              (_t("text", "your text"),), {"text": "The match ended in a draw."}, "pipelines-zero_shot",
              meaning.zero_shot_winner, "Describe the thing itself (an oven, garlic, simmering) and watch the scores "
              "in Pipelines > Zero-shot.",
              {"tab": "pipelines-zero_shot", "text": "{text}", "labels": ", ".join(meaning.ZERO_SHOT_LABELS)}),
    Challenge("few-labels", 9, "A classifier from four examples",
              "Give 2-4 example sentences per label (joy, anger) so that labelling each new sentence by the nearest "
              "mean of a label's example embeddings gets at least 5 of 6 held-out sentences right.",
              (_texts("joy", "2-4 joyful sentences", 2, 4), _texts("anger", "2-4 angry sentences", 2, 4)),
              {"joy": ["Hello.", "Good morning."], "anger": ["Hello.", "Good evening."]}, "train",
              meaning.few_labels, "Embeddings as a lookup table: each label is the mean of its examples' vectors. "
              "Write clear, varied examples; the Train tab trains the same idea on a whole data set.", {"tab": "train"}),
    Challenge("first-merge", 10, "Choose the first merge",
              f"Write a corpus on which byte-pair encoding, trained from scratch, merges "
              f"'{words.FIRST_PAIR[0]}' + '{words.FIRST_PAIR[1]}' first.",
              (_t("corpus", "your corpus", 400),), {"corpus": "the cat sat on the mat"}, "scratch", words.first_merge,
              "BPE merges the most frequent pair of neighbouring symbols first: repeat words that contain it. "
              "From scratch > tokenizer shows the merges one by one.", {"tab": "scratch"}),
    Challenge("one-token-word", 10, "A word in one piece",
              f"Write a corpus on which byte-pair encoding with {words.WORD_MERGES} merges encodes '{words.WORD}' as "
              "one token.",
              (_t("corpus", "your corpus", 600),), {"corpus": "transformers are models"}, "scratch",
              words.one_token_word, "Each merge joins one pair: a word of 11 letters needs 10 merges of its own, so "
              "the word must be the corpus's most frequent.", {"tab": "scratch"}),
    Challenge("unseen-word", 10, "A word it never saw",
              f"Write a corpus without the word '{words.UNSEEN}' on which byte-pair encoding with "
              f"{words.UNSEEN_MERGES} merges splits it into '{words.UNSEEN_SPLIT[0]}' + '{words.UNSEEN_SPLIT[1]}'.",
              (_t("corpus", "your corpus", 400),), {"corpus": "the cat sat on the mat"}, "scratch", words.unseen_word,
              "Subwords let a tokenizer read words it never saw: give it other words that share the pieces (the "
              "classic example: low, lower, newest, widest).", {"tab": "scratch"}),
    Challenge("window-enough", 11, "A window is enough",
              f"Find a sentence of 12+ tokens and an encoder head that a sliding window of at most 3 tokens each side "
              f"keeps at least {heads.KEPT:.0%} of.",
              _HEAD + (_n("window", "the window, tokens each side", 1, 3),),
              {"text": "The quick brown fox jumps over the lazy dog near the river bank.", "layer": 5, "head": 0,
               "window": 1}, "attention", heads.window_enough,
              "Local heads (previous or next token) lose little to a window: find one in Attention, then see sparse "
              "attention at the end of From scratch.", _ATTENTION_TRY),
    Challenge("long-range-head", 11, "A head that reads far",
              f"Find a sentence of 12+ tokens and an encoder head that a window of 3 tokens each side keeps under "
              f"{heads.FAR:.0%} of.",
              _HEAD, {"text": "The quick brown fox jumps over the lazy dog near the river bank.", "layer": 0, "head": 0},
              "attention", heads.long_range, "Heads that attend to [SEP], the first token or a far word lose most "
              "under a window: that is what sliding-window attention gives up.", _ATTENTION_TRY),
)

BY_ID = {c.id: c for c in CHALLENGES}
