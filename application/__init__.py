"""The service layer: `TranscriptStore` and the workflows behind it, on the write side's log."""
