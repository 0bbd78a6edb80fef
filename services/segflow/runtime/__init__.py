"""Execution of a planned job: elements, operators, channels and executors."""
