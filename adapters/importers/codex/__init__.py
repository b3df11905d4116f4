"""Import Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`).

    from transcripts import TranscriptStore
    from transcripts.adapters.importers.codex import import_codex

    with TranscriptStore.open() as store:
        for report in import_codex(store, ["~/.codex/sessions"], dry_run=True):
            print(report.session_id, report.status, report.notes)

One store session per rollout (`rollout` finds and reads them; the file is only read), its
lines planned in order (`plan`, into the `steps` of `steps`) and carried out through the
store's public API (`importer`):
- `session_meta`: `Started` (source `codex`, the session it forked from as parent, metadata
  from `metadata`: the instructions' digest, never their text);
- `response_item`: one message each (`items`: the item verbatim under `"codex"`, a role the
  store knows, tool calls and outputs paired by `call_id`), under the item's id, else one
  derived from the rollout id and the line's ordinal;
- `compacted`: one `CompactionCommitted` whose result is its `replacement_history`: items
  that are active messages are kept, the others added under their ids, every other active
  message superseded; token counts from the nearest `token_count` events;
- a turn that ended in `context_window_exceeded` before it wrote its `turn_context` (Codex's
  compaction before the turn found no room): one `CompactionFailed`; later in a turn the
  rollout cannot tell a failed compaction from an overflowing request: a note;
- a fork starts from its parent's lines before the fork point (`forks`).

Status per rollout: imported, doubtful (imported; the notes say what the file could not
tell), unchanged, diverged (the store holds another history: nothing written, the first line
that differs reported), unreadable (not a rollout, or a fork whose parent is not found).
"""

from __future__ import annotations

from .importer import SessionReport, import_codex
from .rollout import CodexImportError, default_folder

__all__ = ["CodexImportError", "SessionReport", "default_folder", "import_codex"]
