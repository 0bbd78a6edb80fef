"""The operator's Prometheus metrics."""
from prometheus_client import Counter, Enum

PHASES = ["Pending", "Deploying", "Running", "Recovering", "Suspended", "Completed", "Failed"]

RECONCILES = Counter("segflow_operator_reconciles", "Reconcile steps taken")
ERRORS = Counter("segflow_operator_reconcile_errors", "Reconcile steps that raised")
SAVEPOINTS = Counter("segflow_operator_savepoints", "Savepoints taken through coordinators")
SAVEPOINT_FAILURES = Counter("segflow_operator_savepoint_failures", "Savepoints that failed")
PHASE = Enum("segflow_streamjob_phase", "Phase of each StreamJob", ["namespace", "name"], states=PHASES)
