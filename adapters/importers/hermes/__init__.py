"""Import a Hermes agent session store (`state.db`) into a TranscriptStore.

    from transcripts import TranscriptStore
    from transcripts.adapters.importers.hermes import import_hermes

    with TranscriptStore.open() as store:
        for report in import_hermes(store, "~/.hermes/state.db", dry_run=True):
            print(report.session_id, report.status, report.notes)

Schema versions 11 to 31 are read (`SUPPORTED_SCHEMA_VERSIONS`): every published release
(0.13.0 writes 11, 0.19.0 writes 22) and upstream's development schemas up to 31. Columns
are read where present and treated as absent otherwise (`reader`); any other version is
refused with `HermesImportError` naming the versions read, as is a file that is not SQLite,
or has no `schema_version`, `sessions` or `messages` table, or is malformed (JSON nested
deeper than a message may be, a sessions row without a text id): nothing is stored then.

What an import does, per session (parents before their children):
- `Started` with the session's source, model, parent session (rotations keep their lineage)
  and metadata: title, end_reason, started/ended/last-activity timestamps, token counters,
  the system prompt, every other non-NULL session column under `"hermes"`, and the
  `session_meta` rows under `"session_meta"` (they are metadata, not messages);
- each conversation row becomes a message with the stable id `hermes-<session>-<row id>`:
  `"\\x00json:"` content and JSON columns decoded, tool calls, tool call ids, tool names,
  reasoning fields, finish_reason and timestamp kept; NULL columns and storage bookkeeping
  (flags, display ordering, row uids) dropped;
- compactions, failed commits and rewinds as `plan` describes: copies are recognised by
  their content and the shape of what a compaction writes, never by timestamps; whether a
  compaction committed, by what is live, else by its rows' write times (`evidence`). A committed
  compaction supersedes exactly the messages its summary replaced (the rows it carried are
  the same messages as their originals); each failed commit of the failed-commit bug
  (hermes-agent#99477) is a failed attempt (failure `storage_error`) whose audit lists what
  its result would have superseded, and its copies and summary are not imported. Each
  `/undo` (rows neither live nor archived) is one `store.rewind` of those messages, the tail
  of the context where Hermes undid them: marked rewound in the history, no compaction.

Status per session: `imported` (nothing guessed); `repaired` (failed commits found, every
copy accounted for); `doubtful` (something was guessed; the notes say what and what was kept);
`unchanged` (the store holds it already). Importing the same file again stores nothing new;
a session that went on in Hermes since is resumed. The file is opened read-only and never
changed. Message rows of sessions missing from `sessions` are not imported. Event times are
the import's (the Hermes timestamps are kept as message keys and metadata), and a summary
added by a compaction gets an id from the store (`msg_...`).
"""

from __future__ import annotations

from .importer import SessionReport, import_hermes
from .reader import SUPPORTED_SCHEMA_VERSIONS, HermesImportError

__all__ = ["SUPPORTED_SCHEMA_VERSIONS", "HermesImportError", "SessionReport", "import_hermes"]
