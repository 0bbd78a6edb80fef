"""Nexmark q1, currency conversion: every bid's price from dollars to euros.

    segflow run examples/nexmark_q1.py -p output=out/ --parallelism 4

Input: ``events`` events of the deterministic Nexmark generator (segflow.datagen.nexmark).
Writes ``auction<TAB>bidder<TAB>price_in_euro_cents<TAB>date_time`` per bid
(price * 0.908, rounded down to a cent).
"""
from segflow.datagen.nexmark import bids_of

EURO_PER_DOLLAR_MILLIS = 908


def to_euro(bid):
    return (bid.auction, bid.bidder, bid.price * EURO_PER_DOLLAR_MILLIS // 1000, bid.date_time)


def build(env, output, events="50000", rate=""):
    (bids_of(env, events, rate)
        .map(to_euro)
        .write_text(output, lambda b: "\t".join(map(str, b))))
