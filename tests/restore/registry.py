"""Every runtime operator the restore property covers, and the bases it need not.

A new operator or connector adds its :class:`~restore.case.RestoreCase` to one of the
lists imported here; test_registry_complete fails until it does."""
from __future__ import annotations

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
