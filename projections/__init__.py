"""Read-model logic: what each event does to what users read. No SQL here."""
