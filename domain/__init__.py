"""The pure domain of transcript-store: the Transcript aggregate, its events and rules.

Nothing here does I/O or knows about SQL, codecs or the command line.
"""
