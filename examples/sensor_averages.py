"""Per-sensor statistics over one-second event-time windows: the job ``segflow demo`` runs.

    segflow run examples/sensor_averages.py -p output=out/ --parallelism 2 \\
        --checkpoint-protocol aligned --checkpoint-interval 1 --state file:///tmp/sensors

Readings come from a deterministic generator (``-p rate=N`` paces it to N per second): reading ``i`` is sensor
``i % 16`` at event time ``i`` ms with value ``(i * 7919) % 1000``. Per sensor and
tumbling window of 1000 ms, writes ``sensor<TAB>window start<TAB>readings<TAB>sum<TAB>mean``.
:func:`expected` computes the same lines directly, as the oracle a run is checked against.
"""
from collections import Counter, defaultdict

from segflow import EventTimeWindow, WatermarkStrategy

SENSORS = 16
WINDOW_MS = 1000


def reading(i: int) -> tuple[str, int, int]:
    return f"sensor-{i % SENSORS:02d}", i, (i * 7919) % 1000


def summary(window, readings) -> tuple[int, int, int]:
    return window.start, len(readings), sum(r[2] for r in readings)


def line(sensor: str, start: int, count: int, total: int) -> str:
    return f"{sensor}\t{start}\t{count}\t{total}\t{total / count:.2f}"


def build(env, output, readings="80000", rate=""):
    (env.generate(reading, count=int(readings), rate=float(rate) if rate else None)
        .add_timestamps(lambda r: r[1], WatermarkStrategy.monotonous())
        .group_by(lambda r: r[0])
        .window(EventTimeWindow.tumbling(WINDOW_MS))
        .process(summary)
        .unkey()
        .write_text(output, lambda kv: line(kv[0], *kv[1])))


def expected(readings: int) -> Counter:
    """The lines a run writes (as a multiset: part files split them across replicas)."""
    windows: dict = defaultdict(lambda: [0, 0])
    for i in range(readings):
        sensor, time, value = reading(i)
        window = windows[(sensor, time // WINDOW_MS * WINDOW_MS)]
        window[0] += 1
        window[1] += value
    return Counter(line(sensor, start, count, total) for (sensor, start), (count, total) in windows.items())
