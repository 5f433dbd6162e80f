"""One module per tab: widgets, events and formatting for display only."""
