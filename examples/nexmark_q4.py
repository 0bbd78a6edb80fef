"""Nexmark q4, average price per category: the average winning price of the closed
auctions of each category.

    segflow run examples/nexmark_q4.py -p output=out/ --parallelism 4

An auction is closed when it expires by the end of the ``events`` generated events; its
winning price is its highest bid within ``[date_time, expires)`` (auctions without a bid
have none). Writes ``category<TAB>auctions<TAB>total<TAB>average`` (the average with two
decimals, from integer totals, so it is exact).
"""
from segflow.datagen.nexmark import winning_bids


def build(env, output, events="50000", rate=""):
    (winning_bids(env, events, rate).unkey()
        .group_by(lambda won: won[1][0].category)
        .fold((0, 0), lambda acc, won: (acc[0] + 1, acc[1] + won[1][1]))
        .write_text(output, lambda kv: f"{kv[0]}\t{kv[1][0]}\t{kv[1][1]}\t{kv[1][1] / kv[1][0]:.2f}"))
