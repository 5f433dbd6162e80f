"""decoding package."""
