"""attention package."""
