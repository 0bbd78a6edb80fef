"""Where snapshots live: local directory, Redis or S3, behind one interface."""
from .backend import StateBackend, StateStoreError, open_backend

__all__ = ["StateBackend", "StateStoreError", "open_backend"]
