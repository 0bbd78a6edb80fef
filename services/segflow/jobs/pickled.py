"""A job whose build function was serialized with cloudpickle.

Lets a pipeline written inline (a notebook, a test) run on worker processes: every
worker loads the same function from ``payload`` and rebuilds the same pipeline.
"""
from __future__ import annotations

import cloudpickle


def build(env, payload):
    with open(payload, "rb") as f:
        fn = cloudpickle.load(f)
    return fn(env)
