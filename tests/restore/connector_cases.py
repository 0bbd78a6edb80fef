"""Registry entries of the sources and sinks (filled in below)."""
CONNECTOR_CASES: list = []
