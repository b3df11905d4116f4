"""Import Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

from transcripts import TranscriptStore
from transcripts.adapters.importers.codex import import_codex

with TranscriptStore.open() as store:
    for report in import_codex(store, ["~/.codex/sessions"], dry_run=True):
        print(report.session_id, report.status, report.notes)
"""

from __future__ import annotations

from .importer import SessionReport, import_codex
from .rollout import CodexImportError, default_folder

__all__ = ["CodexImportError", "SessionReport", "default_folder", "import_codex"]
