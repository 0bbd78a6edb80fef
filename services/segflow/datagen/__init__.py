"""Deterministic data generators for examples, demos and benchmarks."""
