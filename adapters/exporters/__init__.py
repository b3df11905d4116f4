"""Exporters: sessions written out for programs and people, read through the public API."""
