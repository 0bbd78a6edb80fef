"""Every runtime operator the restore property covers, and the bases it need not.

A new operator or connector adds its :class:`~restore.case.RestoreCase` to one of the
lists imported here; test_registry_complete fails until it does (and
tests/spark/test_steps_complete until it names its Spark step)."""
from __future__ import annotations

import importlib
import pkgutil

import segflow.runtime
from segflow.runtime.executor import SourceOperator
from segflow.runtime.operator import Delegating, Operator
from segflow.runtime.operators.iteration import _ControlAlsoAside
from segflow.runtime.operators.stateless import _UserOperator
from segflow.runtime.operators.two_phase import EpochSink, PartSink
from segflow.runtime.operators.sources import _IteratorSource
from segflow.runtime.operators.windows import WindowOperator

from .connector_cases import CONNECTOR_CASES
from .operator_cases import OPERATOR_CASES

CASES = OPERATOR_CASES + CONNECTOR_CASES

# Bases that are never instantiated themselves; their concrete subclasses are covered.
ABSTRACT_BASES = {Operator, Delegating, SourceOperator, _UserOperator, _IteratorSource, WindowOperator,
                  EpochSink, PartSink, _ControlAlsoAside}


def runtime_operator_classes() -> set[type]:
    """Every Operator subclass defined in segflow.runtime, after importing all its modules."""
    for module in pkgutil.walk_packages(segflow.runtime.__path__, "segflow.runtime."):
        importlib.import_module(module.name)
    found, pending = set(), [Operator]
    while pending:
        klass = pending.pop()
        for sub in klass.__subclasses__():
            if sub.__module__.startswith("segflow.") and sub not in found:
                found.add(sub)
                pending.append(sub)
    return found
