"""Import a Hermes agent session store (`state.db`) into a TranscriptStore.

    from transcripts import TranscriptStore
    from transcripts.adapters.importers.hermes import import_hermes

    with TranscriptStore.open() as store:
        for report in import_hermes(store, "~/.hermes/state.db", dry_run=True):
            print(report.session_id, report.status, report.notes)

Schema versions: this importer reads Hermes schema version 31 (`SUPPORTED_SCHEMA_VERSIONS`),
the version whose `sessions` and `messages` columns and `active` / `compacted` flag meanings
it was written and tested against. Any other version is refused with `HermesImportError`
rather than guessed at: Hermes migrates its schema often, and a flag read wrongly would
import a plausible but false history. To accept another version, check its columns and flag
semantics against `reader` and add it to the set. A file that is not SQLite, or has no
`schema_version`, `sessions` or `messages` table, is refused the same way.

What an import does, per session (parents before their children):
- `Started` with the session's source, model, parent session (rotations keep their lineage)
  and metadata: title, end_reason, started/ended/last-activity timestamps, token counters,
  the system prompt, every other non-NULL session column under `"hermes"`, and the
  `session_meta` rows under `"session_meta"` (they are metadata, not messages);
- each conversation row becomes a message with the stable id `hermes-<session>-<row id>`:
  `"\\x00json:"` content and JSON columns decoded, tool calls, tool call ids, tool names,
  reasoning fields, finish_reason and timestamp kept; NULL columns and storage bookkeeping
  (flags, display ordering, row uids) dropped;
- compactions, failed commits and rewinds as `plan` describes. A committed in-place
  compaction supersedes exactly the messages its summary replaced: the rows it carried in
  its head and tail are the same messages as their originals (kept, never stored twice),
  even though Hermes archives the head's originals; successive compactions, summaries of
  summaries included, are successive events. Each failed commit of the failed-commit bug
  (hermes-agent#99477) is recorded where it happened as a failed attempt with failure
  `storage_error` (writing the compacted context failed: Hermes records errors such as
  "database is locked"), and its re-inserted copies and summary are not imported.

Importing the same file again stores nothing new (status "unchanged"); a session that went
on in Hermes since is resumed. The file is opened read-only and never changed. Message rows
of sessions missing from `sessions` are not imported.

Limits of the store's API: event times are the import's (the Hermes timestamps are kept as
message keys and metadata), a summary added by a compaction gets an id from the store
(`msg_...`), and a failed attempt's audit lists its whole snapshot as what it would have
superseded (its error text says what the attempt itself would have superseded).
"""

from __future__ import annotations

from .importer import SessionReport, import_hermes
from .reader import SUPPORTED_SCHEMA_VERSIONS, HermesImportError

__all__ = ["SUPPORTED_SCHEMA_VERSIONS", "HermesImportError", "SessionReport", "import_hermes"]
