"""Writes glossary.jsonl: short passages on the topics of "NLP with Transformers".

Hand-written concept passages plus passages generated from small tables of facts (models,
datasets, pipeline tasks, FAISS indexes, metrics). Run: python assets/corpus/build_glossary.py
"""

import json
import os

CONCEPTS = [
    # ---------------------------------------------------------------- architecture
    ("Transformer", "The Transformer is a neural network architecture introduced in 2017 in the paper 'Attention Is All You Need' by Vaswani et al. It replaces recurrence with self-attention, so all positions of a sequence are processed in parallel, and is built from stacked encoder and/or decoder blocks."),
    ("Self-attention", "Self-attention lets every token of a sequence compute a weighted average of the representations of all tokens in the same sequence. The weights come from the similarity between a query vector of the token and key vectors of the other tokens."),
    ("Scaled dot-product attention", "Scaled dot-product attention computes softmax(Q K^T / sqrt(d_k)) V. Dividing the dot products by the square root of the key dimension keeps their variance near one, so the softmax does not saturate and gradients stay useful."),
    ("Query, key and value", "In attention, each token embedding is projected by three learned linear layers into a query, a key and a value vector. Queries are compared with keys to get attention weights, and the weights average the values."),
    ("Multi-head attention", "Multi-head attention runs several attention heads in parallel, each with its own query, key and value projections of a smaller dimension. Their outputs are concatenated and projected back, letting different heads focus on different relations such as syntax or coreference."),
    ("Attention head", "An attention head is one set of query, key and value projections inside a multi-head attention layer. BERT-base has 12 heads per layer with a head dimension of 64; visualising individual heads shows patterns like attending to the previous token or to the [SEP] token."),
    ("Causal attention mask", "A causal (or autoregressive) mask sets the attention scores from a token to all later tokens to minus infinity before the softmax, so each position only sees itself and earlier positions. Decoder models such as GPT use it to predict the next token."),
    ("Padding mask", "A padding mask tells attention to ignore pad tokens added to make sequences in a batch the same length. The tokenizer returns it as the attention_mask, with 1 for real tokens and 0 for padding."),
    ("Cross-attention", "Cross-attention is the attention layer in an encoder-decoder model where queries come from the decoder and keys and values come from the encoder's output. It lets each generated token look at the whole source sequence, as in translation."),
    ("Encoder", "The encoder of a Transformer turns an input sequence into a sequence of contextualised embeddings using bidirectional self-attention: every token can attend to all others. Encoder-only models such as BERT are used for classification, token labelling and extractive question answering."),
    ("Decoder", "The decoder of a Transformer generates a sequence one token at a time using masked (causal) self-attention, so a position cannot look at future tokens. Decoder-only models such as GPT-2 are used for text generation."),
    ("Encoder-decoder model", "An encoder-decoder (sequence-to-sequence) Transformer encodes a source sequence and decodes a target sequence with cross-attention to the encoder states. T5, BART and the Marian translation models are encoder-decoder models."),
    ("Feed-forward layer", "Each Transformer block contains a position-wise feed-forward network: two linear layers with a nonlinearity such as GELU between them, applied to every token independently. Its hidden size is usually four times the model dimension, e.g. 3072 for BERT-base."),
    ("Layer normalization", "Layer normalization normalises each token's hidden vector to zero mean and unit variance and then applies a learned scale and shift. The original Transformer placed it after each sub-layer (post-layer norm); most modern models place it before (pre-layer norm), which trains more stably."),
    ("Skip connection", "A skip (residual) connection adds the input of a sub-layer to its output. Transformer blocks wrap both attention and the feed-forward layer in skip connections, which helps gradients flow through deep stacks of layers."),
    ("Positional embeddings", "Self-attention is permutation invariant, so Transformers add information about token position. Options include learned absolute position embeddings (BERT, GPT-2), fixed sinusoidal embeddings (the original Transformer), relative position biases (T5) and rotary position embeddings (RoPE, used by Llama)."),
    ("Sinusoidal position encoding", "The original Transformer encodes position i with sines and cosines of different frequencies across the embedding dimensions. The pattern lets the model attend by relative position and extends to lengths not seen in training."),
    ("Rotary position embedding", "Rotary position embedding (RoPE) rotates pairs of query and key dimensions by an angle proportional to the token position, so the dot product between a query and a key depends on their relative distance. Llama and SmolLM2 use RoPE."),
    ("Token embeddings", "A token embedding layer is a lookup table that maps each token id to a dense vector. It is the first layer of a Transformer; in many language models the output projection to the vocabulary shares (ties) its weights with this table."),
    ("Hidden state", "A hidden state is the vector a Transformer layer outputs for one token. The last hidden state of an encoder is a contextual embedding of each token and is what classification heads and pooling use."),
    ("Model head", "A head is the task-specific layer on top of a pretrained body, for example a linear classifier over the [CLS] hidden state for sequence classification, or a linear layer producing start and end logits for question answering. The Auto classes such as AutoModelForSequenceClassification add the right head."),
    ("Model body", "The body of a Transformer model is the stack of embedding and Transformer layers that produces hidden states, without any task head. In Hugging Face Transformers it is what AutoModel loads."),
    ("Logits", "Logits are the raw, unnormalised scores a model outputs for each class or each vocabulary token. Applying a softmax turns them into probabilities; the argmax of the logits is the most likely class or token."),
    ("Softmax", "The softmax function exponentiates a vector of scores and divides by their sum, producing a probability distribution. It is used for attention weights and for turning logits into class or next-token probabilities."),
    ("Context window", "The context window is the maximum number of tokens a model can process at once, fixed by its position embeddings or training. BERT and DistilBERT accept 512 tokens, GPT-2 1024, and longer texts must be truncated or split into windows."),
    ("KV cache", "During generation a decoder stores the keys and values of all previous tokens (the KV cache) so that each new step only computes attention for the newest token instead of reprocessing the whole prefix. It makes generation much faster at the cost of memory."),
    ("Attention complexity", "Standard self-attention compares every token with every other, so its time and memory grow quadratically with sequence length. Efficient variants such as sparse attention (BigBird, Longformer) and linearised attention reduce this cost for long documents."),
    ("Sparse attention", "Sparse attention restricts each token to attend to a subset of positions, such as a local window plus a few global or random tokens. Longformer and BigBird use it to handle sequences of thousands of tokens."),
    ("Linearized attention", "Linearized attention rewrites the softmax attention with a kernel feature map so that keys and values can be summarised first, giving cost linear in sequence length. Performer and Linear Transformer follow this approach."),
    ("Mixture of experts", "A mixture-of-experts layer replaces the single feed-forward network with many expert networks and a router that sends each token to a few of them. The Switch Transformer uses this to grow the number of parameters without growing the computation per token."),
    # ---------------------------------------------------------------- pretraining
    ("Transfer learning", "Transfer learning in NLP means pretraining a model on a large unlabelled corpus with a self-supervised objective, then fine-tuning the same weights on a smaller labelled dataset for the target task. ULMFiT showed it for LSTMs; GPT and BERT brought it to Transformers."),
    ("ULMFiT", "ULMFiT (Universal Language Model Fine-tuning, Howard and Ruder, 2018) pretrained an LSTM language model on Wikipedia, adapted it to the target domain, and fine-tuned it with a classification head, establishing the pretrain-then-fine-tune recipe for NLP."),
    ("Masked language modeling", "Masked language modeling (MLM) is BERT's pretraining objective: about 15% of input tokens are selected, mostly replaced with [MASK], and the model learns to predict the original tokens from context on both sides."),
    ("Causal language modeling", "Causal language modeling trains a model to predict the next token given all previous tokens. GPT models are pretrained this way, which makes them natural text generators."),
    ("Next sentence prediction", "Next sentence prediction was BERT's second pretraining task: classify whether sentence B really follows sentence A. RoBERTa later found that dropping it did not hurt and often helped downstream performance."),
    ("Replaced token detection", "ELECTRA's pretraining task: a small generator model replaces some tokens, and the main model, a discriminator, predicts for every token whether it was replaced. Learning from all tokens makes it more sample-efficient than masked language modeling."),
    ("Span corruption", "T5 pretrains by span corruption: random spans of the input are replaced by sentinel tokens and the decoder must output the missing spans. It is a denoising objective suited to encoder-decoder models."),
    ("Denoising autoencoder", "BART is pretrained as a denoising autoencoder: the input text is corrupted by masking spans, deleting tokens, or permuting sentences, and the encoder-decoder learns to reconstruct the original. This suits both generation and understanding tasks."),
    ("Domain adaptation", "Domain adaptation continues masked language model pretraining of a model on unlabelled text from the target domain before fine-tuning. It helps when the domain, such as legal text or GitHub issues, differs from the original pretraining data."),
    ("Fine-tuning", "Fine-tuning updates all the weights of a pretrained model on a labelled dataset for a specific task, usually with a small learning rate for a few epochs. It typically beats training a classifier on frozen features but needs more compute."),
    ("Feature extraction", "Feature extraction uses a pretrained model frozen: its hidden states (for example the [CLS] vector or the mean of token vectors) are fed to a simple classifier such as logistic regression. It is cheap and works without a GPU but is usually less accurate than fine-tuning."),
    ("Few-shot learning", "Few-shot learning solves a task from only a handful of labelled examples, either by putting them in the prompt of a large language model (in-context learning) or by methods like SetFit that fine-tune sentence embeddings contrastively."),
    ("Zero-shot classification", "Zero-shot classification assigns labels a model was never trained on. One approach uses a natural language inference model: the text is the premise and each label becomes a hypothesis like 'This example is about sports.' The entailment probability ranks the labels."),
    ("Natural language inference", "Natural language inference (NLI) decides whether a premise entails, contradicts or is neutral to a hypothesis. Models trained on MNLI, such as bart-large-mnli, power the zero-shot classification pipeline."),
    ("Data augmentation", "Data augmentation creates extra training examples from existing ones, for instance by back-translation or by replacing words with synonyms or with tokens predicted by a masked language model. It helps when labelled data is scarce."),
    ("Unsupervised data augmentation", "Unsupervised data augmentation (UDA) trains a model so that its predictions on an unlabelled example and on an augmented version of it agree. This consistency loss lets unlabelled data improve a classifier trained on few labels."),
    ("Uncertainty-aware self-training", "Uncertainty-aware self-training trains a teacher on labelled data, labels unlabelled data with it using Monte Carlo dropout to estimate uncertainty, and trains a student on the confident pseudo-labels."),
    ("Multilingual model", "A multilingual model is pretrained on text in many languages with a shared vocabulary, like mBERT or XLM-RoBERTa (100 languages from CommonCrawl). It enables zero-shot cross-lingual transfer: fine-tune in English, evaluate in German or French."),
    ("Zero-shot cross-lingual transfer", "Zero-shot cross-lingual transfer fine-tunes a multilingual model on labelled data in one language and applies it directly to other languages. In the book, XLM-R fine-tuned on German NER still recognises entities in French, Italian and English."),
    ("Scaling laws", "Scaling laws describe how a language model's loss falls as a power law in the number of parameters, the amount of data and the compute used. They guide how to trade model size against training tokens for a fixed compute budget."),
    ("Emergent abilities", "Large language models show abilities such as multi-step arithmetic or following instructions zero-shot that smaller models lack. The book discusses how scale, data quality and training choices influence what models can do."),
    ("Instruction tuning", "Instruction tuning fine-tunes a pretrained language model on many tasks phrased as instructions with answers, so that it follows new instructions zero-shot. SmolLM2-135M-Instruct is an instruction-tuned version of the SmolLM2 base model."),
    ("Chat template", "A chat template turns a list of messages with roles (system, user, assistant) into the exact token format an instruct model was trained on. In Transformers, tokenizer.apply_chat_template does this and can add the generation prompt for the assistant's reply."),
    ("Pretrained checkpoint", "A checkpoint is a saved set of model weights plus its configuration, identified on the Hugging Face Hub by a name such as bert-base-uncased. from_pretrained downloads and loads it; save_pretrained writes one to a folder."),
    # ---------------------------------------------------------------- tokenization
    ("Tokenization", "Tokenization splits raw text into tokens, the units a model processes, and maps them to integer ids from a vocabulary. Transformers mostly use subword tokenization, a compromise between character and word tokenization."),
    ("Character tokenization", "Character tokenization treats each character as a token. The vocabulary is tiny and nothing is out of vocabulary, but sequences become long and the model must learn words from characters, which costs compute."),
    ("Word tokenization", "Word tokenization splits text on whitespace and punctuation. Vocabularies become huge, rare words map to an unknown token, and related forms like 'run' and 'running' get unrelated ids."),
    ("Subword tokenization", "Subword tokenization keeps frequent words whole and splits rare words into meaningful pieces, learned from a corpus. It keeps the vocabulary to tens of thousands of tokens while still representing any word. WordPiece, BPE and Unigram are common algorithms."),
    ("WordPiece", "WordPiece is the subword algorithm used by BERT and DistilBERT. Pieces that continue a word are prefixed with ##, so 'tokenizing' may become 'token' and '##izing'. bert-base-uncased has a vocabulary of 30,522 tokens."),
    ("Byte-pair encoding", "Byte-pair encoding (BPE) builds a vocabulary by starting from characters (or bytes) and repeatedly merging the most frequent adjacent pair. GPT-2 uses byte-level BPE with 50,257 tokens, so any string can be encoded without unknown tokens."),
    ("Byte-level BPE", "Byte-level BPE runs byte-pair encoding on UTF-8 bytes instead of Unicode characters, so the base vocabulary has only 256 symbols and every input is representable. GPT-2 marks a preceding space with the character Ġ in its tokens."),
    ("Unigram language model tokenizer", "The Unigram tokenizer starts from a large vocabulary and removes tokens that least reduce the likelihood of the training corpus under a unigram language model. SentencePiece implements it and models such as T5 and XLM-R use it."),
    ("SentencePiece", "SentencePiece is a tokenization library that treats the input as a raw stream including spaces, which it encodes as the ▁ character, so it needs no language-specific pre-tokenization. XLM-RoBERTa uses a SentencePiece model with a 250,000-token vocabulary."),
    ("Tokenizer pipeline", "A Hugging Face tokenizer runs four steps: normalization (e.g. lowercasing, Unicode normalization), pre-tokenization (splitting into words), the tokenizer model (subword splitting), and post-processing (adding special tokens like [CLS] and [SEP])."),
    ("Normalization in tokenizers", "Normalization is the first tokenizer step: it cleans text, for example by stripping accents, lowercasing (as in uncased BERT) or applying Unicode NFC/NFKC normalization, so equivalent strings map to the same tokens."),
    ("Special tokens", "Special tokens are reserved vocabulary entries with a structural role: [CLS] and [SEP] in BERT mark the start and the separation of segments, [PAD] fills batches, [MASK] marks tokens to predict, and <|endoftext|> ends documents in GPT-2."),
    ("[CLS] token", "BERT prepends a [CLS] token to every input. Its final hidden state is used as a summary of the whole sequence by the sequence classification head."),
    ("Attention mask from the tokenizer", "When a tokenizer pads a batch it also returns attention_mask, a tensor with 1 for real tokens and 0 for padding, so the model ignores pad positions in attention and in mean pooling."),
    ("Offset mapping", "With return_offsets_mapping=True a fast tokenizer returns, for each token, the character span it covers in the original text. It is how NER and question answering map predicted tokens back to words and answer strings."),
    ("Fast tokenizers", "Fast tokenizers are implemented in Rust in the Hugging Face tokenizers library. They tokenize batches much faster than pure Python ones and provide alignment information such as offsets and word ids."),
    ("Training a tokenizer", "A tokenizer can be trained on a new corpus, for example code, with train_new_from_iterator on an existing tokenizer. The book trains a byte-level BPE tokenizer on Python code so that indentation and keywords become single tokens."),
    ("Fertility of a tokenizer", "Fertility is the average number of tokens a tokenizer produces per word. A tokenizer trained on another domain or language has high fertility there, which wastes context length and compute."),
    ("Out-of-vocabulary words", "Word-level tokenizers map unseen words to an unknown token and lose their meaning. Subword and byte-level tokenizers avoid this by splitting any word into known pieces."),
    ("Truncation and padding", "Batches passed to a model must be rectangular. padding=True pads shorter sequences to the longest one, and truncation=True cuts sequences to the model's maximum length."),
    # ---------------------------------------------------------------- decoding / generation
    ("Text generation", "A language model generates text autoregressively: it predicts a distribution over the next token, a decoding method picks one, the token is appended to the input and the process repeats until an end token or a length limit."),
    ("Greedy search decoding", "Greedy search picks the single most probable token at every step. It is fast and deterministic but tends to produce repetitive text and can miss sequences with a higher overall probability."),
    ("Beam search decoding", "Beam search keeps the num_beams most probable partial sequences at each step and extends each of them, finally returning the sequence with the highest total log probability. It suits tasks with a correct output, such as translation and summarisation."),
    ("Log probability of a sequence", "The probability of a generated sequence is the product of its next-token probabilities; its log probability is the sum of their logarithms, which avoids numerical underflow. Beam search compares candidates by this sum."),
    ("Length penalty", "Log probabilities are negative, so longer sequences get lower totals. A length penalty normalises the score by the sequence length to the power of a parameter, which keeps beam search from favouring short outputs."),
    ("No-repeat n-gram", "The no_repeat_ngram_size generation option forbids any n-gram from appearing twice in the output. It is a simple fix for the repetitive text that greedy and beam search often produce."),
    ("Sampling", "Sampling draws the next token at random from the model's predicted distribution instead of taking the most probable one. It gives diverse, less repetitive text, at the risk of incoherence."),
    ("Temperature", "Temperature divides the logits before the softmax. Values below 1 sharpen the distribution toward likely tokens and make text more conservative; values above 1 flatten it, making rare tokens more likely and text more diverse."),
    ("Top-k sampling", "Top-k sampling keeps only the k most probable next tokens, renormalises their probabilities and samples among them. It avoids the long tail of unlikely tokens that plain sampling occasionally picks."),
    ("Top-p sampling", "Top-p (nucleus) sampling keeps the smallest set of most probable tokens whose cumulative probability reaches p, for example 0.9, and samples among them. The set size adapts to how confident the model is at each step."),
    ("Repetition penalty", "A repetition penalty lowers the scores of tokens that already appear in the output, discouraging the model from repeating itself. It is set with repetition_penalty in generate()."),
    ("Stopping criteria", "Generation stops when the model emits the end-of-sequence token or reaches max_new_tokens (or max_length). Custom stopping criteria can stop on other conditions, such as a stop string."),
    ("Speculative decoding", "Speculative (assisted) decoding lets a small draft model propose several tokens that the large model then verifies in one forward pass, producing the same output as the large model alone but faster."),
    # ---------------------------------------------------------------- tasks
    ("Text classification", "Text classification assigns a label to a whole text, such as positive or negative sentiment or an emotion. A Transformer encoder with a classification head over the [CLS] representation is the standard approach."),
    ("Sentiment analysis", "Sentiment analysis classifies the opinion expressed in a text, usually as positive or negative. The default Hugging Face sentiment pipeline uses distilbert-base-uncased-finetuned-sst-2-english, fine-tuned on the Stanford Sentiment Treebank."),
    ("Named entity recognition", "Named entity recognition (NER) labels spans of text as entities such as persons, organisations and locations. It is a token classification task; the book fine-tunes XLM-RoBERTa for multilingual NER on the PAN-X data."),
    ("IOB2 tagging", "NER datasets often use the IOB2 format: B-TYPE marks the first token of an entity, I-TYPE the following tokens of the same entity, and O tokens outside any entity, e.g. B-PER I-PER for a two-word name."),
    ("Token classification", "Token classification predicts a label for every token, as in NER and part-of-speech tagging. With subword tokenizers, usually only the first subword of each word receives a label, and the others are ignored in the loss with the label -100."),
    ("Question answering", "Extractive question answering finds the answer to a question as a span of a given context. The model predicts, for every token, a score for being the start and the end of the answer span."),
    ("Start and end logits", "An extractive QA model outputs start logits and end logits over the tokens. The answer is the span (i, j) with j >= i that maximises start[i] + end[j], restricted to context tokens and a maximum answer length."),
    ("Long contexts in QA", "When a context exceeds the model's maximum length, the QA pipeline splits it into overlapping windows with a stride, runs the model on each, and keeps the best-scoring answer across windows. The overlap keeps answers that cross a boundary intact."),
    ("SQuAD", "SQuAD (Stanford Question Answering Dataset) contains over 100,000 questions on Wikipedia paragraphs whose answers are text spans. SQuAD 2.0 adds questions that have no answer in the passage."),
    ("Retriever-reader architecture", "A retriever-reader question answering system first retrieves the passages most relevant to a question from a large document collection, then a reader model extracts or generates the answer from those passages. The book builds one with Haystack for product reviews."),
    ("Retriever", "A retriever selects candidate documents for a query. Sparse retrievers such as BM25 match words; dense retrievers such as DPR compare embedding vectors of the query and the documents."),
    ("Reader", "In a retriever-reader system, the reader is the model that reads the retrieved passages and produces the answer: an extractive QA model returning a span, or a generative model writing an answer."),
    ("BM25", "BM25 is a sparse ranking function that scores documents by term frequency, inverse document frequency and document length. It is a strong, cheap baseline for retrieval, used as the default retriever in many QA systems."),
    ("TF-IDF", "TF-IDF weights a term by how often it appears in a document times the log of how rare it is across the collection. Documents and queries become sparse vectors compared with cosine similarity."),
    ("Dense passage retrieval", "Dense Passage Retrieval (DPR) uses two BERT encoders, one for questions and one for passages, trained so that a question's embedding has a high dot product with its answer passage's embedding. Search then becomes nearest-neighbour search over passage vectors."),
    ("Retrieval-augmented generation", "Retrieval-augmented generation (RAG) combines a dense retriever with a generative model: the generator conditions on retrieved documents to write the answer. The book's question answering chapter shows RAG on top of DPR."),
    ("Summarization", "Summarization condenses a long text into a short one. Extractive methods select sentences; abstractive methods, such as sequence-to-sequence Transformers like BART, PEGASUS and T5, write new sentences."),
    ("Abstractive summarization", "Abstractive summarization generates a summary in new words rather than copying sentences. Encoder-decoder Transformers trained on pairs of articles and summaries, such as CNN/DailyMail, do this well."),
    ("Translation", "Machine translation converts text from one language to another. The Helsinki-NLP opus-mt models are Marian encoder-decoder Transformers trained on OPUS data, one model per language pair, e.g. English to German."),
    ("Text generation pipeline", "The text-generation pipeline continues a prompt with a causal language model such as GPT-2. Its generate arguments choose the decoding strategy and control the length."),
    ("Fill-mask task", "The fill-mask task asks a masked language model to predict the token hidden behind [MASK] in a sentence. It shows what a model such as BERT learned in pretraining and can serve as a simple prompt-based classifier."),
    ("pipeline() function", "The Hugging Face pipeline() function bundles a tokenizer, a model and pre- and post-processing for a task, such as 'sentiment-analysis' or 'question-answering', so one call turns raw text into a readable result."),
    # ---------------------------------------------------------------- embeddings and search
    ("Sentence embedding", "A sentence embedding is a single fixed-size vector representing a whole text, such that texts with similar meaning have nearby vectors. Sentence-transformers models like all-MiniLM-L6-v2 produce 384-dimensional sentence embeddings."),
    ("Mean pooling", "Mean pooling turns token embeddings into one sentence embedding by averaging the last hidden states over the tokens, using the attention mask so that padding is not counted. Sentence-transformers models such as all-MiniLM-L6-v2 are trained with mean pooling."),
    ("CLS pooling", "CLS pooling takes the hidden state of the first [CLS] token as the sentence embedding. It works well for models trained to use it, but for many sentence embedding models mean pooling is better."),
    ("Cosine similarity", "Cosine similarity is the dot product of two vectors divided by the product of their lengths; it ranges from -1 to 1 and ignores vector length. For L2-normalised vectors it equals the inner product."),
    ("L2 normalization", "L2 normalization divides a vector by its Euclidean length so that it has unit norm. Normalising embeddings makes the inner product equal to cosine similarity, so an inner-product index ranks by cosine."),
    ("Inner product versus L2 distance", "A FAISS L2 index returns squared Euclidean distances, where smaller is closer; an inner-product index returns similarities, where larger is closer. Sorting L2 distances as if they were similarities inverts the ranking, a common mistake."),
    ("Semantic search", "Semantic search finds documents by meaning rather than shared words: the query and the documents are embedded into the same vector space, and the nearest document vectors to the query vector are returned."),
    ("Asymmetric semantic search", "In asymmetric search a short query retrieves longer passages, as in question answering. Models trained on question-passage pairs (such as MS MARCO models) do better here than models trained only on sentence pairs."),
    ("Nearest neighbour search", "Nearest neighbour search returns the k vectors in a collection closest to a query vector. Exact search compares against every vector; approximate methods trade a little recall for much lower latency on large collections."),
    ("Approximate nearest neighbour search", "Approximate nearest neighbour (ANN) search uses index structures such as graphs (HNSW), inverted files (IVF) or compressed codes (PQ) to find most of the true nearest neighbours while visiting only a small part of the collection."),
    ("Recall at k", "Recall@k of an approximate index is the fraction of the true k nearest neighbours (from exact search) that it returns among its top k, averaged over queries. It measures what the speed-up costs in accuracy."),
    ("FAISS", "FAISS (Facebook AI Similarity Search) is a library for efficient similarity search and clustering of dense vectors. It offers exact flat indexes and approximate ones such as IVF, HNSW and product quantization, on CPU and GPU."),
    ("Embeddings as a lookup table", "Chapter 9 of the book uses a sentence embedding model as a lookup table: embed labelled examples and the new text, and assign the labels of its nearest neighbours. With few labels this k-nearest-neighbour classifier is a strong baseline."),
    ("Sentence-transformers", "Sentence-transformers is a library for computing sentence embeddings with models trained by siamese and contrastive objectives. A model is a Transformer plus a pooling module, and optionally a normalisation module."),
    ("Contrastive learning", "Contrastive learning trains embeddings so that matching pairs, such as a question and its answer, are close and non-matching pairs are far apart. all-MiniLM-L6-v2 was trained contrastively on over one billion sentence pairs."),
    ("Dimensionality reduction", "To plot embeddings in 2-D, dimensionality reduction methods such as PCA (linear) or UMAP and t-SNE (nonlinear) project the vectors while trying to keep nearby points close. The book uses UMAP to visualise emotion embeddings."),
    ("PCA", "Principal component analysis projects data onto the directions of largest variance, found from the singular value decomposition of the centred data. The first two components give a linear 2-D map of embeddings."),
    ("UMAP", "UMAP (Uniform Manifold Approximation and Projection) is a nonlinear dimensionality reduction method that preserves local neighbourhoods. The book's classification chapter uses it to project hidden states of the emotion dataset to 2-D."),
    # ---------------------------------------------------------------- training
    ("Trainer API", "The Hugging Face Trainer runs the training loop: batching, optimisation, mixed precision, evaluation, logging and checkpointing. It is configured with TrainingArguments and given a model, datasets, a data collator and an optional compute_metrics function."),
    ("TrainingArguments", "TrainingArguments holds the hyperparameters of a Trainer run, such as output_dir, learning_rate, num_train_epochs, per_device_train_batch_size, weight_decay, evaluation strategy and whether to push to the Hub."),
    ("Data collator", "A data collator forms batches from dataset examples, for example padding them to the same length. DataCollatorForLanguageModeling also masks tokens randomly for masked language modeling."),
    ("Learning rate schedule", "Transformer fine-tuning usually warms the learning rate up linearly for some steps and then decays it, often linearly to zero. Warm-up avoids large, destabilising updates while the optimizer's statistics are still poor."),
    ("AdamW", "AdamW is the Adam optimizer with decoupled weight decay: the decay is applied directly to the weights rather than added to the gradient. It is the default optimizer for training Transformers."),
    ("Gradient accumulation", "Gradient accumulation sums gradients over several small batches before one optimizer step, simulating a larger batch size than fits in memory."),
    ("Mixed precision training", "Mixed precision training computes in 16-bit floating point (fp16 or bf16) while keeping a 32-bit copy of the weights for updates. It roughly halves memory use and speeds up training on modern GPUs."),
    ("Gradient checkpointing", "Gradient checkpointing stores only some activations in the forward pass and recomputes the others during backpropagation. It trades extra compute for much lower memory, allowing larger models or batches."),
    ("Cross-entropy loss", "Classification and language modeling are trained with cross-entropy: the negative log of the probability the model assigns to the correct class or next token, averaged over examples or tokens."),
    ("Perplexity", "Perplexity is the exponential of the average cross-entropy loss per token of a language model. Lower perplexity means the model assigns higher probability to the text; it is used to evaluate language models and to pick checkpoints."),
    ("Overfitting", "A model overfits when it memorises the training data and its validation loss starts to rise while training loss keeps falling. Early stopping, weight decay, dropout and more data counter it."),
    ("Dropout", "Dropout randomly zeroes a fraction of activations during training, which prevents co-adaptation and reduces overfitting. Transformers apply it after attention and feed-forward layers; it is disabled in eval mode."),
    ("Label smoothing", "Label smoothing replaces one-hot targets with a mixture of the one-hot vector and a uniform distribution, discouraging over-confident predictions. It is common in translation models."),
    ("Hugging Face Hub", "The Hugging Face Hub hosts models, datasets and Spaces. Models are git repositories with weights and configuration files, loaded with from_pretrained by name and published with push_to_hub."),
    ("Hugging Face Datasets", "The Datasets library loads datasets from the Hub or local files as Arrow-backed tables that are memory-mapped from disk. map() applies processing such as tokenization in batches, and streaming mode handles corpora larger than disk."),
    ("Memory mapping in Datasets", "Hugging Face Datasets stores data in Apache Arrow files and memory-maps them, so a dataset larger than RAM can be used with a small memory footprint and random access stays fast."),
    ("Streaming datasets", "With streaming=True, load_dataset returns an IterableDataset that downloads and reads examples on the fly. It is how the book processes the 180 GB CodeParrot corpus without storing it."),
    ("Hugging Face Accelerate", "Accelerate is a library that runs the same PyTorch training loop on one CPU or GPU, several GPUs or TPUs, with minimal code changes. The book trains CodeParrot with a custom Accelerate loop."),
    ("Spaces", "Hugging Face Spaces host machine learning demo apps, often built with Gradio or Streamlit, on free or paid hardware, including ZeroGPU, which attaches a GPU only while a decorated function runs."),
    ("Model card", "A model card documents a model: its intended uses, training data, evaluation results, limitations and biases. On the Hub it is the README.md of the model repository."),
    # ---------------------------------------------------------------- efficiency
    ("Knowledge distillation", "Knowledge distillation trains a small student model to imitate a large teacher model, using the teacher's softened output probabilities as soft targets in addition to the true labels. DistilBERT was made this way from BERT."),
    ("Distillation temperature", "In knowledge distillation the teacher and student logits are divided by a temperature T > 1 before the softmax, which softens the distributions and exposes the teacher's knowledge about which wrong classes are similar. The distillation loss is scaled by T squared."),
    ("Quantization", "Quantization represents weights and activations with low-precision integers such as int8 instead of 32-bit floats. It reduces model size about four times and speeds up inference on CPUs, often with little loss in accuracy."),
    ("Dynamic quantization", "Dynamic quantization converts a model's weights to int8 ahead of time and quantizes activations on the fly during inference. In PyTorch, torch.quantization.quantize_dynamic applies it to the linear layers of a Transformer in one line."),
    ("Static quantization", "Static quantization precomputes the quantization parameters of activations by running calibration data through the model, so no scaling has to be computed at inference. It is faster than dynamic quantization but needs the calibration step."),
    ("Quantization-aware training", "Quantization-aware training simulates the rounding of int8 quantization in the forward pass during training, so the model learns weights that remain accurate after quantization."),
    ("Weight pruning", "Pruning removes weights that matter least, for example those with the smallest magnitude, to produce a sparse model. Movement pruning, used in the book, removes weights that move toward zero during fine-tuning."),
    ("Movement pruning", "Movement pruning scores weights by how they change during fine-tuning rather than by their magnitude, and removes those moving toward zero. It suits pruning while transferring a pretrained model to a task."),
    ("ONNX", "ONNX (Open Neural Network Exchange) is an open format for neural network graphs. Exporting a Transformer to ONNX and running it with ONNX Runtime, which fuses operators and supports quantization, can speed up CPU inference."),
    ("ONNX Runtime", "ONNX Runtime executes ONNX models with graph optimisations such as operator fusion and constant folding, and supports int8 quantization. The book's efficiency chapter combines a distilled model, ONNX Runtime and quantization for a large speed-up."),
    ("Latency and throughput", "Latency is the time to answer one request; throughput is how many requests are served per second. Batching raises throughput but can raise latency; production systems balance the two."),
    ("Performance benchmark", "The book benchmarks models on three axes: model performance (e.g. accuracy), latency (time per query) and memory (model size). Optimisations such as distillation and quantization move a model along these axes."),
    ("DistilBERT", "DistilBERT is a distilled version of BERT with 6 layers instead of 12. It keeps about 97% of BERT's language understanding performance on GLUE while being 40% smaller and 60% faster."),
    # ---------------------------------------------------------------- evaluation
    ("Accuracy", "Accuracy is the fraction of predictions that match the labels. It can mislead on imbalanced datasets, where predicting the majority class already gives a high score."),
    ("F1 score", "The F1 score is the harmonic mean of precision and recall. For multi-class problems it is averaged per class (macro) or over all predictions (micro); NER is evaluated with entity-level F1 using seqeval."),
    ("Precision and recall", "Precision is the fraction of predicted positives that are correct; recall is the fraction of actual positives that were found. In retrieval, recall@k counts relevant documents among the top k results."),
    ("Confusion matrix", "A confusion matrix counts, for each true class, how often the model predicted each class. The book uses one to see that the emotion classifier confuses love with joy and surprise with fear or joy."),
    ("Exact match", "Exact match (EM) scores a QA prediction 1 if it equals a reference answer after normalization (lowercasing, removing punctuation and articles), else 0. It is reported together with token-level F1 on SQuAD."),
    ("BLEU", "BLEU measures translation quality by the precision of n-grams (usually up to 4-grams) of the output that appear in reference translations, combined with a brevity penalty for outputs that are too short. SacreBLEU standardises its tokenization."),
    ("ROUGE", "ROUGE evaluates summaries by overlap with references, focusing on recall: ROUGE-1 and ROUGE-2 count shared unigrams and bigrams, and ROUGE-L uses the longest common subsequence."),
    ("Mean reciprocal rank", "Mean reciprocal rank averages 1/rank of the first relevant result over queries. It rewards retrieval systems that put a correct document near the top."),
    ("Error analysis", "Error analysis inspects the examples with the highest loss or wrong predictions. In the book it reveals mislabelled examples in the emotion dataset and tokenization issues in NER."),
    ("Calibration", "A classifier is calibrated when its predicted probabilities match observed frequencies: among predictions made with 80% confidence, about 80% are correct. Neural networks are often over-confident."),
    # ---------------------------------------------------------------- ethics and data
    ("Bias in language models", "Language models trained on web text absorb its social biases, for example associating professions with genders. The book urges evaluating models for such biases before deployment."),
    ("Data quality for pretraining", "Pretraining corpora scraped from the web contain duplicates, boilerplate and toxic text. Filtering and deduplication, as done for the CodeParrot dataset, improve the resulting model."),
    ("Deduplication", "Near-duplicate documents in a training corpus waste compute and encourage memorisation. Deduplication with exact hashes or MinHash removes them; the CodeParrot dataset was deduplicated this way."),
    ("Data leakage", "Data leakage happens when test examples or information about them appear in training data, inflating evaluation scores. Duplicates shared between train and test splits are a common cause."),
    ("Hallucination", "A generative model hallucinates when it produces fluent text that is not supported by its input or by facts. Retrieval-augmented generation and citing source passages make answers easier to check."),
    ("Model licensing", "Models and datasets on the Hub carry licenses that restrict how they may be used and redistributed. Check them before using a checkpoint in a product."),
    # ---------------------------------------------------------------- libraries and tools
    ("AutoTokenizer", "AutoTokenizer.from_pretrained(name) loads the right tokenizer class for a checkpoint from its configuration and vocabulary files, returning a fast Rust tokenizer when one exists."),
    ("AutoModel", "AutoModel.from_pretrained(name) loads the body of a pretrained model, choosing the architecture class from the checkpoint's config.json. Task variants such as AutoModelForQuestionAnswering add the matching head."),
    ("AutoConfig", "AutoConfig loads a model's configuration: the architecture, hidden size, number of layers and heads, vocabulary size and task labels. Models can be built from a config with random weights for testing."),
    ("torch.inference_mode", "torch.inference_mode() is a context manager that disables gradient tracking and version counting, making inference faster and lighter than under torch.no_grad()."),
    ("Gradio", "Gradio is a Python library for building web demos of machine learning models. Blocks lets you lay out components and wire events; every event can also be called as an API with gradio_client."),
    ("gradio_client", "gradio_client is the Python client for Gradio apps. Client(url).predict(..., api_name='/search') calls an app's endpoint; each Client has its own session, so session state is not shared between clients."),
    ("safetensors", "safetensors is a file format for storing tensors safely and fast: unlike pickle it cannot execute code when loading, and it supports memory-mapped, zero-copy loading."),
    ("GGUF", "GGUF is the file format of llama.cpp for quantized models. Transformers can load a GGUF file with the gguf_file argument, dequantising the weights to a normal PyTorch model."),
    ("Haystack", "Haystack is an open-source framework for building search and question answering pipelines from document stores, retrievers and readers. The book uses it to build a QA system over Amazon product reviews."),
    ("Document store", "A document store holds the documents a retriever searches, with their metadata and, for dense retrieval, their embeddings. Elasticsearch and FAISS are common backends in Haystack."),
    ("Elasticsearch", "Elasticsearch is a search engine built on Lucene that indexes documents for fast full-text search with BM25 ranking. Haystack can use it as a document store for sparse retrieval."),
]

# (name, year, organisation, architecture, size, pretraining, note)
MODELS = [
    ("GPT", 2018, "OpenAI", "decoder-only", "117 million parameters", "causal language modeling on the BookCorpus", "It showed that generative pretraining followed by fine-tuning works across many NLP tasks."),
    ("GPT-2", 2019, "OpenAI", "decoder-only", "124 million to 1.5 billion parameters", "causal language modeling on WebText, 40 GB of web pages linked from Reddit", "Its largest version was initially withheld over misuse concerns; it generates fluent long texts."),
    ("GPT-3", 2020, "OpenAI", "decoder-only", "175 billion parameters", "causal language modeling on a large filtered web and books corpus", "It showed strong few-shot learning from examples placed in the prompt."),
    ("GPT-Neo", 2021, "EleutherAI", "decoder-only", "125 million to 2.7 billion parameters", "causal language modeling on the Pile", "It is an open reproduction of GPT-3-style models."),
    ("BERT", 2018, "Google", "encoder-only", "110 million (base) and 340 million (large) parameters", "masked language modeling and next sentence prediction on BookCorpus and English Wikipedia", "It set new records on GLUE and SQuAD and made fine-tuning encoders the standard."),
    ("RoBERTa", 2019, "Facebook AI", "encoder-only", "125 million (base) and 355 million (large) parameters", "masked language modeling with dynamic masking on 160 GB of text, without next sentence prediction", "It showed BERT was undertrained: more data, bigger batches and longer training improve it."),
    ("DistilBERT", 2019, "Hugging Face", "encoder-only", "66 million parameters", "knowledge distillation from BERT-base", "It is 40% smaller and 60% faster than BERT while keeping 97% of its GLUE performance."),
    ("ALBERT", 2019, "Google", "encoder-only", "12 million parameters (base)", "masked language modeling and sentence order prediction", "It shares parameters across layers and factorises the embedding matrix to reduce size."),
    ("ELECTRA", 2020, "Google and Stanford", "encoder-only", "14 million (small) to 335 million (large) parameters", "replaced token detection with a small generator and a discriminator", "Learning from every token makes its pretraining more compute-efficient than masked language modeling."),
    ("DeBERTa", 2020, "Microsoft", "encoder-only", "up to 1.5 billion parameters", "masked language modeling with disentangled attention over content and relative position", "It was the first model to beat the human baseline on the SuperGLUE benchmark."),
    ("XLM-RoBERTa", 2019, "Facebook AI", "encoder-only", "270 million (base) and 550 million (large) parameters", "masked language modeling on 2.5 TB of CommonCrawl text in 100 languages", "The book fine-tunes it for multilingual named entity recognition on PAN-X."),
    ("XLM", 2019, "Facebook AI", "encoder-only", "several sizes", "masked and translation language modeling across languages", "Translation language modeling masks tokens in concatenated parallel sentences so the model can look across languages."),
    ("T5", 2019, "Google", "encoder-decoder", "60 million to 11 billion parameters", "span corruption on the C4 corpus", "It casts every task as text-to-text, with task prefixes such as 'summarize:' or 'translate English to German:'."),
    ("BART", 2019, "Facebook AI", "encoder-decoder", "140 million (base) and 400 million (large) parameters", "denoising: reconstructing text corrupted by span masking, deletion and sentence permutation", "Fine-tuned on CNN/DailyMail or XSum it is a strong abstractive summariser."),
    ("PEGASUS", 2019, "Google", "encoder-decoder", "568 million parameters (large)", "gap-sentence generation: predicting whole masked sentences", "Its objective resembles summarisation, and it performs strongly on summarisation benchmarks."),
    ("Marian", 2018, "Microsoft Translator and the University of Edinburgh; models trained by Helsinki-NLP", "encoder-decoder", "about 74 million parameters per opus-mt model", "translation on the OPUS parallel corpora", "The opus-mt checkpoints cover over a thousand language pairs, one model per pair."),
    ("CodeParrot", 2021, "Hugging Face (built in the book)", "decoder-only", "110 million and 1.5 billion parameters", "causal language modeling on deduplicated Python code from GitHub", "Chapter 10 trains it from scratch with a custom tokenizer and Accelerate."),
    ("Codex", 2021, "OpenAI", "decoder-only", "up to 12 billion parameters", "GPT-3 fine-tuned on public GitHub code", "It powers code completion and was evaluated with the HumanEval benchmark."),
    ("CTRL", 2019, "Salesforce", "decoder-only", "1.6 billion parameters", "causal language modeling with control codes prepended to text", "Control codes steer the style, domain and content of the generated text."),
    ("Transformer-XL", 2019, "Google and CMU", "decoder-only", "up to 257 million parameters", "causal language modeling with segment-level recurrence", "It reuses hidden states of the previous segment to model dependencies beyond a fixed context."),
    ("XLNet", 2019, "Google and CMU", "decoder (permutation language model)", "up to 340 million parameters", "permutation language modeling", "It predicts tokens in a random factorisation order, combining autoregressive training with bidirectional context."),
    ("Longformer", 2020, "Allen Institute for AI", "encoder-only", "149 million (base) parameters", "masked language modeling continued from RoBERTa", "Its sliding-window plus global attention handles documents of 4,096 tokens."),
    ("BigBird", 2020, "Google", "encoder-only and encoder-decoder", "about the size of BERT", "masked language modeling with sparse attention", "Random, window and global attention make its cost linear in sequence length."),
    ("Vision Transformer", 2020, "Google", "encoder-only", "86 million (base) to 632 million (huge) parameters", "supervised image classification on large datasets", "It splits an image into 16x16 patches and treats them as tokens."),
    ("CLIP", 2021, "OpenAI", "dual encoder for images and text", "up to about 430 million parameters", "contrastive learning on 400 million image-caption pairs", "It enables zero-shot image classification by comparing image embeddings with embeddings of label captions."),
    ("wav2vec 2.0", 2020, "Facebook AI", "encoder-only over audio", "95 million (base) and 317 million (large) parameters", "self-supervised contrastive learning on raw speech", "Fine-tuned with a CTC head it transcribes speech with little labelled audio."),
    ("LayoutLM", 2019, "Microsoft", "encoder-only", "113 million (base) parameters", "masked language modeling with text and 2-D position of words on scanned pages", "It understands documents such as forms and receipts by combining text with layout."),
    ("TAPAS", 2020, "Google", "encoder-only", "about the size of BERT", "masked language modeling over tables with text", "It answers questions about tables by selecting cells and applying aggregations."),
    ("DPR", 2020, "Facebook AI", "two BERT encoders", "two 110 million parameter encoders", "contrastive training on question-passage pairs", "Dense Passage Retrieval outperforms BM25 on open-domain question answering retrieval."),
    ("all-MiniLM-L6-v2", 2021, "the sentence-transformers project", "encoder-only", "about 22 million parameters, 6 layers, 384 dimensions", "contrastive fine-tuning of MiniLM on over one billion sentence pairs", "It is a small, fast sentence embedding model with mean pooling; inputs are truncated to 256 tokens."),
    ("MiniLM", 2020, "Microsoft", "encoder-only", "as small as 22 million parameters", "deep self-attention distillation from a large teacher", "It distils the attention distributions and value relations of the teacher's last layer."),
    ("SmolLM2-135M-Instruct", 2024, "Hugging Face", "decoder-only (Llama architecture)", "135 million parameters, 30 layers", "causal language modeling on trillions of tokens, then instruction tuning", "It is small enough to run on a laptop CPU and follows simple instructions through its chat template."),
    ("Llama 2", 2023, "Meta", "decoder-only", "7 billion to 70 billion parameters", "causal language modeling on 2 trillion tokens", "It uses rotary position embeddings, RMSNorm and SwiGLU feed-forward layers."),
    ("Switch Transformer", 2021, "Google", "encoder-decoder with mixture of experts", "up to 1.6 trillion parameters", "span corruption like T5", "Each token is routed to a single expert feed-forward network, keeping compute per token constant."),
    ("Reformer", 2020, "Google", "encoder and decoder variants", "varies", "language modeling", "It uses locality-sensitive hashing attention and reversible layers to process long sequences with little memory."),
    ("Performer", 2020, "Google", "encoder and decoder variants", "varies", "language modeling", "Its FAVOR+ mechanism approximates softmax attention with random features in linear time."),
]

DATASETS = [
    ("emotion dataset", "The emotion dataset contains English Twitter messages labelled with six emotions: sadness, joy, love, anger, fear and surprise. It has 16,000 training, 2,000 validation and 2,000 test examples and is imbalanced toward joy and sadness. The book's text classification chapter uses it."),
    ("PAN-X", "PAN-X (WikiANN) is a cross-lingual named entity recognition dataset built from Wikipedia articles in many languages, with PER, ORG and LOC tags in IOB2 format. It is part of the XTREME benchmark; the book uses its German, French, Italian and English subsets."),
    ("XTREME", "XTREME is a benchmark for cross-lingual generalisation covering 40 languages and tasks such as classification, structured prediction, question answering and retrieval. PAN-X is one of its tasks."),
    ("CNN/DailyMail", "The CNN/DailyMail dataset pairs about 300,000 news articles with the bullet-point highlights written by journalists, used as reference summaries. The book's summarisation chapter compares models on it with ROUGE."),
    ("SAMSum", "SAMSum contains about 16,000 messenger-style dialogues with human-written summaries. The book fine-tunes PEGASUS on it to summarise conversations."),
    ("SubjQA", "SubjQA is a question answering dataset of more than 10,000 customer reviews in six domains, with questions about subjective properties. The book builds a review-based question answering system on its electronics domain."),
    ("GLUE", "GLUE (General Language Understanding Evaluation) is a benchmark of nine English sentence and sentence-pair tasks, such as sentiment (SST-2), paraphrase (MRPC, QQP) and inference (MNLI, RTE). SuperGLUE is its harder successor."),
    ("SST-2", "SST-2 is the binary version of the Stanford Sentiment Treebank: movie review sentences labelled positive or negative. The default sentiment pipeline model was fine-tuned on it."),
    ("MNLI", "MultiNLI contains about 433,000 sentence pairs labelled entailment, neutral or contradiction, across several genres. Models trained on it serve zero-shot classification."),
    ("CLINC150", "CLINC150 is an intent classification dataset with 150 intents across 10 domains plus out-of-scope queries. The book's efficiency chapter uses it for a banking-assistant intent detector."),
    ("CodeParrot dataset", "The CodeParrot dataset contains about 20 million Python files from GitHub (around 180 GB). Deduplicated and filtered, it was used in the book to train a Python code generation model from scratch."),
    ("GitHub issues dataset", "The book collects issues from the Hugging Face Transformers GitHub repository and their labels to study multilabel classification with few labels, comparing zero-shot, data augmentation, embedding lookup and domain adaptation."),
    ("BookCorpus", "BookCorpus is a collection of about 11,000 unpublished books. Together with English Wikipedia it was used to pretrain BERT, and alone it pretrained the original GPT."),
    ("C4", "The Colossal Clean Crawled Corpus (C4) is a cleaned 750 GB English subset of Common Crawl, created to pretrain T5."),
    ("The Pile", "The Pile is an 825 GB English dataset from 22 diverse sources, including books, code and scientific papers, assembled by EleutherAI to train models such as GPT-Neo."),
    ("MS MARCO", "MS MARCO is a large-scale dataset of real Bing queries with passages judged relevant. It is widely used to train and evaluate retrieval and reranking models."),
    ("Natural Questions", "Natural Questions contains real Google search queries with answers annotated in Wikipedia pages, as long and short answers. DPR was trained and evaluated on it."),
]

FAISS_INDEXES = [
    ("IndexFlatIP", "IndexFlatIP is FAISS's exact inner-product index: it stores every vector and compares the query with all of them. With L2-normalised vectors it ranks by cosine similarity. It needs no training and gives recall 1.0, but search time grows linearly with the collection."),
    ("IndexFlatL2", "IndexFlatL2 is FAISS's exact Euclidean index. It returns squared L2 distances, smallest first. For unit vectors, squared L2 distance equals 2 minus 2 times the cosine, so it ranks the same as inner product, but its scores are distances, not similarities."),
    ("IndexHNSWFlat", "IndexHNSWFlat builds a Hierarchical Navigable Small World graph over the vectors. M is the number of neighbours per node, efConstruction the search width while building, and efSearch the search width at query time: larger values give higher recall but slower queries."),
    ("HNSW graph", "HNSW organises vectors in layers of proximity graphs: upper layers are sparse and allow long jumps, the bottom layer contains every vector. A search greedily descends the layers toward the query, so it visits only a small fraction of the data."),
    ("efSearch", "efSearch is the size of the candidate list HNSW keeps while searching. Raising it from 16 to 64 or 128 trades query speed for recall; it can be changed at query time without rebuilding the index."),
    ("IndexIVFFlat", "IndexIVFFlat clusters the vectors with k-means into nlist lists (an inverted file). A query is compared with the centroids and then only with the vectors in the nprobe closest lists. It must be trained before vectors are added."),
    ("nlist and nprobe", "In FAISS IVF indexes, nlist is the number of k-means clusters and nprobe the number of clusters searched per query. A common rule of thumb is nlist around the square root of the number of vectors; nprobe trades speed for recall."),
    ("IndexIVFPQ", "IndexIVFPQ combines an inverted file with product quantization: each vector is stored as a short code of m bytes (with 8 bits per sub-quantizer), so a 384-dimensional float vector of 1,536 bytes can shrink to 16 or 32 bytes. Distances are approximate, which lowers recall."),
    ("Product quantization", "Product quantization splits each vector into m sub-vectors and replaces each by the id of its nearest centroid in a small codebook learned by k-means (usually 256 centroids, 8 bits). Distances are computed from precomputed tables, which makes search over compressed vectors fast."),
    ("Index training in FAISS", "IVF and PQ indexes must be trained on representative vectors before adding data; training runs k-means. FAISS warns when there are fewer than about 39 training points per centroid, and fails when there are fewer points than centroids."),
    ("FAISS index persistence", "faiss.write_index saves an index to a file and faiss.read_index loads it; faiss.serialize_index returns the same bytes as a numpy array. Loading a built index is much faster than rebuilding it from the vectors."),
    ("FAISS batch queries", "FAISS search takes a matrix of queries and is most efficient in batches, where it uses BLAS matrix multiplication and multiple threads. For a single query, an exact flat search may be no faster than a numpy dot product."),
]

PIPELINE_TASKS = [
    ("sentiment-analysis", "text classification into positive and negative", "distilbert-base-uncased-finetuned-sst-2-english"),
    ("ner", "named entity recognition with aggregation of subword tokens into entity spans", "dbmdz/bert-large-cased-finetuned-conll03-english"),
    ("question-answering", "extractive question answering over a context", "distilbert-base-cased-distilled-squad"),
    ("summarization", "abstractive summarisation of long texts", "sshleifer/distilbart-cnn-12-6"),
    ("translation_en_to_de", "English to German translation", "Helsinki-NLP/opus-mt-en-de"),
    ("text-generation", "continuing a prompt with a causal language model", "gpt2"),
    ("zero-shot-classification", "classification into labels given at inference time using an NLI model", "facebook/bart-large-mnli"),
    ("fill-mask", "predicting the token behind a [MASK] placeholder", "bert-base-uncased"),
    ("feature-extraction", "returning the hidden states of a model as features", "a model body such as distilbert-base-uncased"),
]

CHAPTERS = [
    (1, "Hello Transformers", "the encoder-decoder framework, attention, transfer learning in NLP, and a tour of pipeline() tasks on a customer complaint to an online store"),
    (2, "Text Classification", "classifying tweets in the emotion dataset, tokenization, training a classifier on hidden-state features and by fine-tuning DistilBERT, and error analysis"),
    (3, "Transformer Anatomy", "self-attention, multi-head attention, feed-forward layers, positional embeddings, the encoder and decoder, and the family tree of Transformer models"),
    (4, "Multilingual Named Entity Recognition", "fine-tuning XLM-RoBERTa on PAN-X for NER in German, French, Italian and English, and zero-shot cross-lingual transfer"),
    (5, "Text Generation", "decoding strategies: greedy search, beam search, sampling with temperature, top-k and nucleus sampling, with GPT-2"),
    (6, "Summarization", "comparing summarisation baselines and models on CNN/DailyMail with ROUGE, and fine-tuning PEGASUS on SAMSum dialogues"),
    (7, "Question Answering", "extractive QA on SubjQA reviews, long passages with sliding windows, retriever-reader systems with Haystack, and retrieval-augmented generation"),
    (8, "Making Transformers Efficient in Production", "an intent classifier for CLINC150 made faster with knowledge distillation, quantization, ONNX Runtime and pruning"),
    (9, "Dealing with Few to No Labels", "tagging GitHub issues with zero-shot classification, data augmentation, embeddings as a lookup table with FAISS, and domain adaptation"),
    (10, "Training Transformers from Scratch", "building the CodeParrot dataset, training a tokenizer for Python code, and pretraining a GPT-style model with Accelerate"),
    (11, "Future Directions", "scaling laws, efficient attention, multimodal Transformers for vision, tables, speech and text, and open challenges"),
]

METRICS_NUMBERS = [
    ("BERT-base dimensions", "BERT-base has 12 layers, a hidden size of 768, 12 attention heads and 110 million parameters; BERT-large has 24 layers, a hidden size of 1024, 16 heads and 340 million parameters."),
    ("GPT-2 dimensions", "The smallest GPT-2 has 12 layers, a hidden size of 768, 12 attention heads, a context of 1,024 tokens and a vocabulary of 50,257 byte-level BPE tokens."),
    ("all-MiniLM-L6-v2 dimensions", "all-MiniLM-L6-v2 has 6 layers, 12 attention heads, a hidden size of 384 and a WordPiece vocabulary of 30,522 tokens; its sentence embeddings are 384-dimensional and normalised."),
    ("Original Transformer dimensions", "The base model of 'Attention Is All You Need' had 6 encoder and 6 decoder layers, a model dimension of 512, 8 heads and a feed-forward dimension of 2048, trained on WMT English-German and English-French translation."),
]


def passages():
    out = list(CONCEPTS)
    for name, year, org, arch, size, pre, note in MODELS:
        out.append((f"{name} (model)", f"{name} is a {arch} Transformer released in {year} by {org}, with {size}. It was pretrained with {pre}. {note}"))
    out.extend((f"{t} (dataset)" if "dataset" not in t else t, x) for t, x in DATASETS)
    out.extend((f"{t} (FAISS)", x) for t, x in FAISS_INDEXES)
    for task, what, ckpt in PIPELINE_TASKS:
        out.append((f"pipeline('{task}')", f"The '{task}' pipeline performs {what}. In the book's examples its default or chosen checkpoint is {ckpt}; pass model= to use another checkpoint from the Hub."))
    for n, title, topics in CHAPTERS:
        out.append((f"Chapter {n}: {title}", f"Chapter {n} of 'Natural Language Processing with Transformers', '{title}', covers {topics}."))
    out.extend(METRICS_NUMBERS)
    return out


def main():
    items = passages()
    titles = [t for t, _ in items]
    texts = [x for _, x in items]
    assert len(set(titles)) == len(titles), "duplicate titles"
    assert len(set(texts)) == len(texts), "duplicate texts"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "glossary.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for t, x in items:
            f.write(json.dumps({"title": t, "text": x}, ensure_ascii=False) + "\n")
    print(f"wrote {len(items)} passages to {path}")


if __name__ == "__main__":
    main()
