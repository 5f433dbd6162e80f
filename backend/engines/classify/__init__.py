"""Text classification on a model handed in: fine-tuning, the labelled sets, scores, similarity.

`finetune` trains an encoder with a classification head (its batch and epoch plan in
`finetune_plan`); `datasets` holds the shipped labelled sets and reads uploads; `metrics` scores
predictions (accuracy, macro F1, the confusion matrix); `similarity` classifies by embedding
similarity to label descriptions (zero-shot and sentiment without a trained head).
"""
