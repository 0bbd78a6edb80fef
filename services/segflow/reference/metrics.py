"""The metrics reference, read from the Prometheus collectors themselves: each metric's
name as a scrape shows it, its type, labels and help.

prometheus_client has no public accessor for a metric's label names, nor for a
registry's collectors (``_labelnames``, ``_states``, ``_collector_to_names``): they are
read here, in one place; were they renamed, the page would lose its labels and the
tests would say so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase

from .markdown import cell, code, generated_note, table

@dataclass(frozen=True)
class Metric:
    name: str                   # as declared, without the suffixes a scrape adds
    type: str                   # counter, gauge, histogram, summary, info, enum
    labels: tuple[str, ...]
    help: str
    states: tuple[str, ...] = ()    # an enum's

    @property
    def scraped(self) -> str:
        """The name a query uses: a counter's with ``_total`` (a histogram's or summary's
        series add ``_bucket``, ``_sum`` and ``_count`` to it, as the page's intro says)."""
        return self.name + "_total" if self.type == "counter" else self.name


def registered(registry: CollectorRegistry) -> list[object]:
    """The collectors registered in ``registry``, in registration order."""
    return list(registry._collector_to_names)


def described(collectors: Iterable[object]) -> list[Metric]:
    """The metrics of ``collectors``: metric objects (Counter, Gauge, ...) and custom
    collectors alike (a custom one is asked to collect, and may report nothing but its
    families' names, types and labels)."""
    found = []
    for collector in collectors:
        if isinstance(collector, MetricWrapperBase):
            labels = tuple(collector._labelnames)
            states = tuple(getattr(collector, "_states", ()))
            found += [Metric(family.name, family.type, labels + ((family.name,) if states else ()),
                             family.documentation, states) for family in collector.describe()]
        else:
            found += [Metric(family.name, family.type, tuple(getattr(family, "_labelnames", ())), family.documentation)
                      for family in collector.collect()]         # type: ignore[attr-defined]
    return found


def metrics_markdown(sections: Mapping[str, tuple[str, list[Metric]]]) -> str:
    """The page: per section (title -> (what serves them, metrics)) one table, sorted by name."""
    lines = [generated_note("the Prometheus collectors of segflow and its operator"), "", "# Metrics", "",
             "Every metric segflow and its operator export to Prometheus, by the name a query uses; a "
             "histogram's series are that name with `_bucket`, `_sum` and `_count`, and a stateset's is a gauge "
             "per state (1 for the current one), labelled by the metric's own name.", ""]
    for title, (about, metrics) in sections.items():
        lines += [f"## {title}", "", cell(about), ""]
        lines += table(["Metric", "Type", "Labels", "Description"],
                       ([code(m.scraped), m.type, ", ".join(code(label) for label in m.labels),
                         cell(m.help + (f" (states: {', '.join(m.states)})" if m.states else ""))]
                        for m in sorted(metrics, key=lambda m: m.name))) + [""]
    return "\n".join(lines)
