"""Nexmark q8, monitor new users: people who opened an auction in the tumbling window in
which they registered.

    segflow run examples/nexmark_q8.py -p output=out/ --parallelism 4

People keyed by id and auctions keyed by seller are joined window by window (event-time
tumbling windows of ``size`` ms). Writes ``window_start<TAB>person<TAB>name<TAB>auction``
per (person, auction) pair of a window.
"""
from segflow import EventTimeWindow
from segflow.datagen.nexmark import Auction, Person, events_of, watermark_every


def build(env, output, events="50000", size="5000", rate=""):
    size_ms = int(size)
    stamped = (events_of(env, events, rate)
               .filter(lambda e: isinstance(e, (Person, Auction)))
               .add_timestamps(lambda e: e.date_time, watermark_every(1000)))
    people, auctions = stamped.split(2)
    window = EventTimeWindow.tumbling(size_ms)
    new_people = people.filter(lambda e: isinstance(e, Person)).group_by(lambda p: p.id).window(window)
    sellers = auctions.filter(lambda e: isinstance(e, Auction)).group_by(lambda a: a.seller).window(window)
    (new_people.join(sellers)
        .drop_key()
        .map(lambda pa: (pa[0].date_time // size_ms * size_ms, pa[0].id, pa[0].name, pa[1].id))
        .write_text(output, lambda r: "\t".join(map(str, r))))
