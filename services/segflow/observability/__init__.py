"""Logs, metrics and health for the engine's services."""
