"""Messages of any JSON shape, as a hypothesis strategy: the shapes frameworks write.

Messages are JSON objects with a role whose every other key is kept as given (README,
"Messages"): LangChain's `content` is `list[str | dict]`, tool calls come as strings, lists
of strings or objects, parts may have no `text`, and any key may nest.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

ROLES = ["system", "developer", "user", "assistant", "tool", "function"]
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=10,
)
parts = st.lists(
    st.text(max_size=12)
    | st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image_url", "input_audio", "refusal"])},
        optional={"text": json_values, "image_url": json_values, "extra": json_values},
    )
    | json_values,
    max_size=4,
)
tool_calls = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "id": st.text(max_size=6) | json_values,
            "type": st.just("function") | json_values,
            "function": st.fixed_dictionaries(
                {}, optional={"name": json_values, "arguments": json_values}
            )
            | json_values,
        },
    )
    | json_values,
    max_size=3,
)
_extra_keys = st.text(max_size=8).filter(lambda key: key not in ("id", "role"))


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": draw(st.sampled_from(ROLES))}
    message |= draw(
        st.fixed_dictionaries(
            {},
            optional={
                "content": parts | json_values,
                "tool_calls": tool_calls | json_values,
                "tool_call_id": st.text(max_size=6) | json_values,
                "reasoning": json_values,
                "name": json_values,
            },
        )
    )
    for key, value in draw(st.dictionaries(_extra_keys, json_values, max_size=3)).items():
        message.setdefault(key, value)
    return message
