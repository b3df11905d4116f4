"""The timeline's view models without a store or a browser: the context's size over the
versions and the marks (`ContextTimeline`), where the chart draws them (`Chart`), a
message as people read it, and the terminal's chart."""

from __future__ import annotations

from datetime import UTC, datetime

from transcripts.adapters.cli.inert import inert as terminal_text
from transcripts.adapters.cli.timeline import timeline_lines
from transcripts.adapters.web.chart import Chart
from transcripts.adapters.web.context_timeline import ContextTimeline, Restore, Rewind
from transcripts.adapters.web.messages import MessageView, paired

AT = datetime(2026, 3, 1, tzinfo=UTC)


def attempt(version: int, status: str = "committed", superseded: int = 0, added: int = 0, **more):
    return {
        "id": f"cmp-{version}",
        "status": status,
        "version": version,
        "superseded": [f"old{i}" for i in range(superseded)],
        "added": [f"new{i}" for i in range(added)],
        "failure": None if status == "committed" else "summarize_error",
        "error": None if status == "committed" else "TimeoutError: slow\nline two",
        "reason": more.pop("reason", ""),
        "tokens_before": more.pop("tokens_before", None),
        "tokens_after": more.pop("tokens_after", None),
        **more,
    }


def story() -> ContextTimeline:
    """Started (v1), 9 appends (v2–10), a commit superseding 8 and adding 1 (v11), 2 appends,
    a failed attempt (v14), a rewind of 2 (v15), a restore (v16), 4 appends (to v20)."""
    return ContextTimeline.of(
        "s",
        20,
        [
            attempt(11, superseded=8, added=1, tokens_before=900, tokens_after=100),
            attempt(14, "failed", superseded=3, tokens_before=300),
        ],
        [Rewind(15, AT, ("a", "b"), "undo")],
        [Restore(16, "a")],
    )


def test_the_context_grows_by_one_a_version_between_marks_and_each_mark_changes_it_as_it_did():
    timeline = story()
    sizes = [timeline.size_at(version) for version in range(1, 21)]
    assert sizes == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 4, 2, 3, 4, 5, 6, 7]
    assert timeline.size == 7 and timeline.largest == 9


def test_the_curve_is_kept_as_the_points_where_it_bends():
    points = [(point.version, point.size) for point in story().points]
    assert points == [(1, 0), (10, 9), (11, 2), (13, 4), (14, 4), (15, 2), (20, 7)]


def test_there_is_one_mark_per_compaction_rewind_and_restore_in_version_order():
    marks = story().marks
    assert [(m.type, m.version, m.before, m.after) for m in marks] == [
        ("CompactionCommitted", 11, 9, 2),
        ("CompactionFailed", 14, 4, 4),
        ("Rewound", 15, 4, 2),
        ("Restored", 16, 2, 3),
    ]
    assert story().counts() == {
        "CompactionCommitted": 1,
        "CompactionFailed": 1,
        "Rewound": 1,
        "Restored": 1,
    }


def test_a_mark_is_named_by_its_type_and_version_and_says_what_it_did():
    committed, failed, rewound, restored = story().marks
    assert committed.name == "CompactionCommitted at version 11"
    assert committed.label == (
        "CompactionCommitted at version 11: 8 superseded, 1 added, tokens 900 → 100"
    )
    assert failed.summary == "summarize_error: TimeoutError: slow"
    assert rewound.summary == "2 messages rewound (undo)"
    assert restored.summary == "1 message restored"
    assert [m.symbol for m in story().marks] == ["✂", "✗", "↶", "↷"]


def test_events_after_the_head_are_left_out():
    timeline = ContextTimeline.of("s", 12, [attempt(11, superseded=8, added=1)], [], [])
    early = ContextTimeline.of("s", 10, [attempt(11, superseded=8, added=1)], [], [])
    assert [m.version for m in timeline.marks] == [11]
    assert early.marks == () and early.size == 9


def test_tokens_are_points_where_a_compaction_measured_them():
    tokens = [(point.version, point.size) for point in story().tokens]
    assert tokens == [(10, 900), (11, 100), (13, 300)]


def test_a_session_with_nothing_but_its_start_is_one_point():
    timeline = ContextTimeline.of("s", 1, [], [], [])
    assert [(p.version, p.size) for p in timeline.points] == [(1, 0)]
    assert timeline.size_at(1) == 0 and timeline.marks == ()


def test_the_chart_places_versions_left_to_right_and_sizes_bottom_to_top():
    chart = Chart(story())
    assert chart.x(1) < chart.x(10) < chart.x(20) == chart.plot_right
    assert chart.y(0) == chart.plot_bottom > chart.y(9)
    placed = {p.mark.version: (p.x, p.y) for p in chart.marks}
    assert placed[11] == (chart.x(11), chart.y(2))
    assert chart.line.split()[0] == f"{chart.x(1)},{chart.y(0)}"
    assert [t.text for t in chart.x_ticks][0] == "v1" and chart.x_ticks[-1].text == "v20"
    assert chart.y_ticks[0].text == "0" and chart.y_ticks[-1].text == "9"
    assert len(chart.token_segments) == 2  # 900 → 100, and 300 alone


def test_a_tool_call_and_its_result_point_at_each_other():
    call = {
        "id": "m1",
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": '{"a":1}'}}],
    }
    result = {"id": "m2", "role": "tool", "tool_call_id": "c1", "content": "ok"}
    calling, answering = paired([call, result])
    assert calling.answered_by == {"c1": "m2"} and answering.answers == "m1"
    assert calling.tool_calls[0].arguments == '{\n  "a": 1\n}'
    assert calling.snippet == "calls f"


def test_an_image_part_is_named_and_never_a_url_to_load():
    remote = {"type": "image_url", "image_url": {"url": "http://example.invalid/x.png"}}
    inline = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    view = MessageView.of({"id": "m", "role": "user", "content": [remote, inline]})
    assert [(p.kind, p.text) for p in view.parts] == [
        ("image", "image: http://example.invalid/x.png"),
        ("image", "image (image/png, 26 characters inline)"),
    ]


def test_a_long_text_is_cut_in_lists_and_whole_on_its_own_page():
    message = {"id": "m", "role": "user", "content": "x" * 25_000}
    assert MessageView.of(message).parts[0].cut == 5_000
    assert MessageView.of(message, whole=True).parts[0].text == "x" * 25_000


def test_the_terminal_chart_has_its_rows_the_marks_and_a_line_per_mark():
    lines = [line.plain for line in timeline_lines(story(), width=20, height=3)]
    assert lines[0].startswith("Context of s: 7 messages at version 20 (at most 9)")
    assert len(lines) == 1 + 3 + 2 + 4
    assert "✂" in lines[4] and "✗" in lines[4] and "↶" in lines[4]
    assert lines[6].startswith("✂ v11") and "8 superseded, 1 added" in lines[6]


def test_text_for_a_terminal_shows_control_characters_as_escapes():
    assert terminal_text("red\x1b[31m\r\u202eevil\x07") == "red\\x1b[31m\\r\\u202eevil\\x07"
    assert terminal_text("ünïcødé 🦊") == "ünïcødé 🦊"
