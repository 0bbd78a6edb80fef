"""The worker service: runs the block replicas the plan places on it."""
