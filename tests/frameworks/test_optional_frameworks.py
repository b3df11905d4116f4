"""The frameworks are optional extras: the store, and the integrations package itself,
import none of them."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = (
    "agents",
    "openai",
    "langchain",
    "langchain_core",
    "langgraph",
    "pydantic_ai",
    "claude_agent_sdk",
)


def test_importing_transcripts_and_its_integrations_package_imports_no_framework() -> None:
    program = (
        "import sys, transcripts, transcripts.integrations; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r})))"
    )
    imported = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert imported.stdout.strip() == "[]"
