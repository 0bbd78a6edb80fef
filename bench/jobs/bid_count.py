"""Nexmark q5-style keyed count for benchmarks: bids per auction over a generated stream."""


def auction_of(i):
    return (i * 2654435761) % 1000


def build(env, bids="2000000"):
    return env.generate(auction_of, count=int(bids)).group_by_count().collect()
