"""Nexmark q1 (every bid's price in euro cents) with each event's generation time carried
along, for bench/latency.py: the converted bids are dealt round-robin to a second block,
as to a sink in other processes, which takes how long after its generation each got
there (q1's work runs in the source's block, on the source's thread: a latency taken
there would leave out every channel). Every eighth bid's latency is
collected (all of them would not fit the worker's result message); nothing else is
written."""
import time

from segflow.datagen.nexmark import MILLIS_PER_EVENT, Bid, event

EURO_PER_DOLLAR_MILLIS = 908


def generated(i):
    return event(i), time.time()


def to_euro(stamped):
    bid, born = stamped
    return (bid.auction, bid.bidder, bid.price * EURO_PER_DOLLAR_MILLIS // 1000, bid.date_time), born


def sampled(converted):
    return converted[0][3] % (8 * MILLIS_PER_EVENT) == 0


def since_born(converted):
    born = converted[1]
    return born, time.time() - born


def build(env, events="200000", rate=""):
    return (env.generate(generated, count=int(events), rate=float(rate) if rate else None)
            .filter(lambda stamped: type(stamped[0]) is Bid)
            .map(to_euro)
            .shuffle()
            .filter(sampled)
            .map(since_born)
            .collect())
