"""Nexmark q3, local item suggestion: who sells what in a few states, for one category.

    segflow run examples/nexmark_q3.py -p output=out/ --parallelism 4

Joins people living in OR, ID or CA with the auctions of category 1 they opened
(auction.seller == person.id), a hash join shipped by key. Writes
``name<TAB>city<TAB>state<TAB>auction`` per match.
"""
from segflow.datagen.nexmark import Auction, Person, events_of

STATES = ("OR", "ID", "CA")
CATEGORY = 1


def build(env, output, events="50000", rate=""):
    people, auctions = events_of(env, events, rate).split(2)
    local = people.filter(lambda e: isinstance(e, Person) and e.state in STATES)
    chosen = auctions.filter(lambda e: isinstance(e, Auction) and e.category == CATEGORY)
    (chosen.join(local, lambda a: a.seller, lambda p: p.id)
        .drop_key()
        .map(lambda ap: (ap[1].name, ap[1].city, ap[1].state, ap[0].id))
        .write_text(output, lambda r: "\t".join(map(str, r))))
