"""The restore property: an operator restored from its snapshot goes on as if it had never
stopped. Operator by operator and in-process (the case registry, rescaling, sources'
positions), and once per operator family through the public API in new processes
(test_runtime_restore). Whole jobs under failures (kills, lost or damaged stores), their
output checked against an oracle, are tests/recovery's subject."""
