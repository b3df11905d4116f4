"""Import Claude Code sessions (`~/.claude/projects/<project>/<session-id>.jsonl`).

    from transcripts import TranscriptStore
    from transcripts.adapters.importers.claude_code import import_claude_code

    with TranscriptStore.open() as store:
        for report in import_claude_code(store, ["~/.claude/projects"], dry_run=True):
            print(report.session_id, report.status, report.notes)

One store session per session file, under Claude Code's `sessionId` (source `claude-code`;
metadata: the project folder, cwd, git branch, CLI version, first and last timestamps, and
the bookkeeping an auditor needs: the last `cost-state`, the tools used, the last `mode`, the
number of API requests). A subagent's sidechain (`<session-id>/subagents/agent-<id>.jsonl`)
is a child session `<session-id>:subagents/agent-<id>` whose metadata names the tool call
that started it (`tool_use_id`, and its `.meta.json` under `subagent`).

Records, in the file's order (`files` reads them, `plan` plans them, `writing` writes):
- `user`, `assistant`, `system`, `attachment` records: one message each under its `uuid`,
  the record verbatim under `"claude_code"` (`records`: roles, and why an assistant reply's
  per-block records stay one message each);
- a `compact_boundary`: one `CompactionCommitted` (the summary added under its uuid, the
  preserved segment kept, the rest superseded; `preTokens` / `postTokens`; the trigger in
  the reason);
- a failed `/compact`: one `CompactionFailed` with its error text;
- copies of a record already read (claude-code#92089): stored once, counted;
- bookkeeping (`queue-operation`, `last-prompt`, `cost-state`, `api-request*`, `mode`,
  `tools-used`, `atis-latch`, …): not messages; summed up in the metadata as said above.

Files are only read. Importing again stores nothing (`unchanged`); a session that went on
in Claude Code is resumed after what the store holds. A last line cut short (a crash)
imports up to it, with a note; any other malformed line is a ClaudeCodeImportError naming
the file and line, and nothing of that session is stored.
"""

from __future__ import annotations

from .files import ClaudeCodeImportError, default_folder
from .importer import SessionReport, import_claude_code
from .plan import SOURCE, plan_records

__all__ = [
    "SOURCE",
    "ClaudeCodeImportError",
    "SessionReport",
    "default_folder",
    "import_claude_code",
    "plan_records",
]
