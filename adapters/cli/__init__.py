"""The `transcripts` command line: a thin client of the library (click, rich).

`cli` is the command group and `main` the console script; `app` holds the group, and each
command group has its module (`read`, `transfer`, `search`, `forget`, `projections`, …).
"""

from .app import TranscriptsGroup, cli, main

__all__ = ["TranscriptsGroup", "cli", "main"]
