"""Framework integrations, imported as `transcripts.integrations.<framework>`.

Each adapts transcript-store to one agent framework's session or memory interface, through
the public API only. None yet.
"""
