"""Nexmark q7, highest bid: per tumbling window of ``size`` ms of event time, the bid(s)
with the highest price.

    segflow run examples/nexmark_q7.py -p output=out/ --parallelism 4

Writes ``window_start<TAB>auction<TAB>bidder<TAB>price`` per highest bid (several on ties).
"""
from segflow import EventTimeWindow
from segflow.datagen.nexmark import bids_of, watermark_every


def highest(window, bids):
    top = max(b.price for b in bids)
    return sorted((window.start, b.auction, b.bidder, b.price) for b in bids if b.price == top)


def build(env, output, events="50000", size="10000", rate=""):
    (bids_of(env, events, rate)
        .add_timestamps(lambda b: b.date_time, watermark_every(1000))
        .window_all(EventTimeWindow.tumbling(int(size)))
        .process(highest)
        .flatten()
        .write_text(output, lambda r: "\t".join(map(str, r))))
