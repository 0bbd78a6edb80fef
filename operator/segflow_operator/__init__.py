"""The segflow Kubernetes operator: turns StreamJob resources into block pods.

Layers: ``spec`` reads a StreamJob (pure), ``manifests`` renders the objects it owns
(pure), ``reconcile`` decides what to do next from what is observed (pure), and
``handlers`` does the I/O with kopf, the Kubernetes API and the job's coordinator.
"""
GROUP = "segflow.io"
VERSION = "v1alpha1"
PLURAL = "streamjobs"
