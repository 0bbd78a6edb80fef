"""Nexmark q1 (every bid's price in euro cents) with each event's generation time carried
along, for bench/latency.py: the block that converts the price also takes how long after
its generation the record got there. Every eighth bid's latency is collected (all of them
would not fit the worker's result message); nothing else is written."""
import time

from segflow.datagen.nexmark import MILLIS_PER_EVENT, Bid, event

EURO_PER_DOLLAR_MILLIS = 908


def generated(i):
    return event(i), time.time()


def to_euro_since(stamped):
    bid, born = stamped
    converted = (bid.auction, bid.bidder, bid.price * EURO_PER_DOLLAR_MILLIS // 1000, bid.date_time)
    return converted, born, time.time() - born


def sampled(converted):
    return converted[0][3] % (8 * MILLIS_PER_EVENT) == 0


def build(env, events="200000", rate=""):
    return (env.generate(generated, count=int(events), rate=float(rate) if rate else None)
            .filter(lambda stamped: type(stamped[0]) is Bid)
            .map(to_euro_since)
            .filter(sampled)
            .map(lambda converted: converted[1:])
            .collect())
