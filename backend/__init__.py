"""Everything that is not UI: importable and testable without Gradio."""
