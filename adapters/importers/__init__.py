"""Importers: transcripts written by other programs, stored through the public API."""
