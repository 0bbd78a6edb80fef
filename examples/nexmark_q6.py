"""Nexmark q6, average selling price by seller: per seller, the average winning price of
their last ``last`` (Nexmark: 10) closed auctions, by closing time.

    segflow run examples/nexmark_q6.py -p output=out/ --parallelism 4

Winning prices as in q4. Writes ``seller<TAB>auctions<TAB>total<TAB>average`` at the end
of the stream (the average with two decimals, from integer totals).
"""
from segflow.datagen.nexmark import winning_bids


def keep_last(n):
    def add(latest, won):
        auction, price = won[1]
        return sorted(latest + [(auction.expires, auction.id, price)])[-n:]
    return add


def build(env, output, events="50000", last="10", rate=""):
    (winning_bids(env, events, rate).unkey()
        .group_by(lambda won: won[1][0].seller)
        .fold([], keep_last(int(last)))
        .map(lambda seller, latest: (len(latest), sum(p for _, _, p in latest)))
        .write_text(output, lambda kv: f"{kv[0]}\t{kv[1][0]}\t{kv[1][1]}\t{kv[1][1] / kv[1][0]:.2f}"))
