"""Nexmark q0, pass-through: every bid as it comes (measures the engine's own cost).

    segflow run examples/nexmark_q0.py -p output=out/ --parallelism 4

Writes ``auction<TAB>bidder<TAB>price<TAB>date_time`` per bid of ``events`` generated events
(segflow.datagen.nexmark); ``rate`` caps the events per second (default: as fast as possible).
"""
from segflow.datagen.nexmark import bids_of


def build(env, output, events="50000", rate=""):
    (bids_of(env, events, rate)
        .map(lambda b: (b.auction, b.bidder, b.price, b.date_time))
        .write_text(output, lambda r: "\t".join(map(str, r))))
