"""Nexmark q2, selection: the bids on a few auctions (``auction % modulus == 0``; Nexmark
uses 123, which this generator's auction ids reach every 41 blocks of events).

    segflow run examples/nexmark_q2.py -p output=out/ --parallelism 4

Writes ``auction<TAB>price`` per selected bid.
"""
from segflow.datagen.nexmark import bids_of


def build(env, output, events="50000", modulus="123", rate=""):
    every = int(modulus)
    (bids_of(env, events, rate)
        .filter(lambda b: b.auction % every == 0)
        .map(lambda b: (b.auction, b.price))
        .write_text(output, lambda r: "\t".join(map(str, r))))
