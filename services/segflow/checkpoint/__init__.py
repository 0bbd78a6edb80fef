"""Checkpointing protocols, snapshots and recovery."""
