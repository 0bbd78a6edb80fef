"""The real Redis and S3 (moto) servers of the connector cases: the state-store tests'
session fixtures, started only when a case needs them and stopped by PID."""
from state.conftest import redis_server, s3_server  # noqa: F401 - fixtures, used by name
