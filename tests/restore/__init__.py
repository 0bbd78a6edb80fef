"""The restore property, operator by operator and in-process: a runtime operator or
connector snapshotted, pickled and restored into a fresh instance behaves as if it had
never stopped (case registry, rescaling, sources' positions). Whole jobs whose processes
are killed and restored from a store are tests/recovery's subject."""
