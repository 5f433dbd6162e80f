"""The Multilingual tab (chapter 4): zero-shot cross-lingual transfer of NER."""
