"""Helpers shared by the test suites (on pytest's pythonpath)."""
