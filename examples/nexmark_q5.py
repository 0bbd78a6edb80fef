"""Nexmark q5, hot items: the auction with the most bids in each sliding window.

    segflow run examples/nexmark_q5.py -p output=out/ --parallelism 4

Bids are counted per auction over event-time windows of ``size`` ms sliding every
``step`` ms; per window, the auction with the most bids wins (the smallest id on ties).
Writes ``auction<TAB>bids`` per window (windows without bids write nothing).
"""
from segflow import EventTimeWindow
from segflow.datagen.nexmark import bids_of, watermark_every


def hottest(bids):
    counts = {}
    for bid in bids:
        counts[bid.auction] = counts.get(bid.auction, 0) + 1
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def build(env, output, events="50000", size="10000", step="2000", rate=""):
    size_ms, step_ms = int(size), int(step)
    (bids_of(env, events, rate)
        .add_timestamps(lambda b: b.date_time, watermark_every(step_ms))
        .window_all(EventTimeWindow.sliding(size_ms, step_ms))
        .map(hottest)
        .write_text(output, lambda r: "\t".join(map(str, r))))
