"""Helpers shared by the tests, one copy each (tests/pytest.ini puts tests/ on sys.path).

Imported as `support.<module>`; the child programs that tests run as scripts live in
`support/programs/`.
"""
