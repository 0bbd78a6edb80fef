"""The operator's Prometheus metrics."""
from prometheus_client import Counter, Enum, Gauge

from .reconcile.status import Phase

PHASES = ["Pending", *(p.value for p in Phase)]      # Pending: a job's state before its first phase

RECONCILES = Counter("segflow_operator_reconciles", "Reconcile steps taken")
ERRORS = Counter("segflow_operator_reconcile_errors", "Reconcile steps that raised")
SAVEPOINTS = Counter("segflow_operator_savepoints", "Savepoints taken through coordinators")
SAVEPOINT_FAILURES = Counter("segflow_operator_savepoint_failures", "Savepoints that failed")
PHASE = Enum("segflow_streamjob_phase", "Phase of each StreamJob", ["namespace", "name"], states=PHASES)
LEASE_GENERATION = Gauge("segflow_streamjob_lease_generation",
                         "Disaster recovery: generation of the job's lease this cluster holds (0: it stands by)",
                         ["namespace", "name"])
TAKEOVERS = Counter("segflow_streamjob_takeovers", "Disaster recovery: leases this cluster took over",
                    ["namespace", "name"])
STANDBY_READY_WORKERS = Gauge("segflow_standby_ready_workers",
                              "Disaster recovery: worker pods of a warm standby started, registered and ready to "
                              "take over (0 on a cold standby or the active cluster)", ["namespace", "name"])
FOLLOW_LAG_SECONDS = Gauge("segflow_standby_follow_lag_seconds",
                           "Disaster recovery: seconds since the hot standby's least recently followed worker last "
                           "followed the backup store (0 on a cold or warm standby or the active cluster)",
                           ["namespace", "name"])
