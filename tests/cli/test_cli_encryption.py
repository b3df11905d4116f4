"""The command line on an encrypted store: `generate-key`, and the key from the environment."""

from __future__ import annotations

from base64 import b64decode

import pytest

from support.cli import Run, error_line


def test_generate_key_prints_a_new_aes_256_key_each_time(run: Run) -> None:
    first, second = run("generate-key"), run("generate-key")
    assert first.exit_code == second.exit_code == 0
    assert len(b64decode(first.stdout.strip(), validate=True)) == 32
    assert first.stdout != second.stdout


def test_commands_read_an_encrypted_store_with_the_key_from_the_environment(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRANSCRIPTS_CIPHER_KEY", run("generate-key").stdout.strip())
    assert run("demo").exit_code == 0
    sessions = run("sessions", "--json")
    assert sessions.exit_code == 0 and '"demo"' in sessions.stdout
    assert "encrypted (AES-GCM)" in run("info").stdout

    monkeypatch.delenv("TRANSCRIPTS_CIPHER_KEY")
    assert error_line(run("sessions")) == (
        "Error: this store is encrypted: set TRANSCRIPTS_CIPHER_KEY to its key"
    )
    monkeypatch.setenv("TRANSCRIPTS_CIPHER_KEY", "nonsense")
    assert error_line(run("sessions")).startswith(
        "Error: TRANSCRIPTS_CIPHER_KEY is not a valid key"
    )
