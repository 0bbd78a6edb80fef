"""A deterministic Nexmark-style event generator: people, auctions and bids.

Event ``i`` is a pure function of ``i`` (and a seed), so parallel generator replicas,
restarts and replays all see the same stream. As in Nexmark, every block of 50 events
has 1 new person, 3 new auctions and 46 bids; bids go to recent auctions, sellers and
bidders are existing people. Event time (``date_time``, in milliseconds) is
``i * MILLIS_PER_EVENT``, so it grows with the index: watermarks can follow it closely.
"""
from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple

from ..runtime.operators.time import WatermarkStrategy

BLOCK = 50
AUCTIONS_PER_BLOCK = 3
MILLIS_PER_EVENT = 10
STATES = ("OR", "ID", "CA", "WA", "AZ", "NV", "UT", "TX")
CITIES = ("Portland", "Boise", "Sacramento", "Seattle", "Phoenix", "Reno", "Provo", "Austin")
CATEGORIES = 10
HOT_AUCTIONS = 20      # bids go to one of the most recent auctions
MAX_AUCTION_MILLIS = 30_000   # an auction is open for 10 to 30 s of event time


class Person(NamedTuple):
    id: int
    name: str
    email: str
    city: str
    state: str
    date_time: int


class Auction(NamedTuple):
    id: int
    item: str
    seller: int
    category: int
    initial_bid: int
    expires: int
    date_time: int


class Bid(NamedTuple):
    auction: int
    bidder: int
    price: int          # in cents
    date_time: int


_new = tuple.__new__


def mix(i: int, seed: int = 0) -> int:
    """A 64-bit integer hash (splitmix64's finaliser): well spread and cheap."""
    z = (i * 0x9E3779B97F4A7C15 + seed * 0xBF58476D1CE4E5B9 + 1) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def event(i: int, seed: int = 0) -> Person | Auction | Bid:
    """Event ``i``. The tuples are made with ``tuple.__new__``: a NamedTuple's own
    ``__new__`` is a Python function, and called with keywords it tripled the cost of a bid
    (every Nexmark query pays it per event). Fields in declaration order."""
    block, slot = divmod(i, BLOCK)
    h = mix(i, seed)
    when = i * MILLIS_PER_EVENT
    if slot == 0:
        k = h % len(STATES)
        return _new(Person, (block, f"person{block}", f"p{block}@segflow.io", CITIES[k], STATES[k], when))
    if slot <= AUCTIONS_PER_BLOCK:
        auction = block * AUCTIONS_PER_BLOCK + slot - 1
        # id, item, seller, category, initial_bid, expires, date_time
        return _new(Auction, (auction, f"item{auction}", h % (block + 1), (h >> 8) % CATEGORIES,
                              100 + (h >> 16) % 1000, when + 10_000 + (h >> 24) % 20_000, when))
    newest = block * AUCTIONS_PER_BLOCK + AUCTIONS_PER_BLOCK - 1
    # auction, bidder, price, date_time
    return _new(Bid, (max(0, newest - h % HOT_AUCTIONS), (h >> 8) % (block + 1), 100 + (h >> 16) % 10_000, when))


timestamp = attrgetter("date_time")      # of any event


def watermark_every(period_ms: int) -> WatermarkStrategy:
    """The watermarks of the Nexmark queries: the generator's events come in time order
    per replica, so the watermark is the largest timestamp seen, rounded down to a
    multiple of ``period_ms`` and sent after a batch (never inside one, which would cut
    the batch in pieces)."""
    return WatermarkStrategy.monotonous().every(period_ms)


def _rate(rate: str) -> float | None:
    return float(rate) if rate else None


def events_of(env, events: str, rate: str = ""):
    """The stream of ``events`` generated events (``rate``: events per second, "" for no
    cap), as the Nexmark examples take their parameters."""
    return env.generate(event, count=int(events), rate=_rate(rate))


def bids_of(env, events: str, rate: str = ""):
    """The bids among ``events`` generated events."""
    return events_of(env, events, rate).filter(lambda e: isinstance(e, Bid))


def stream_end(events: str) -> int:
    """The event time just after the last of ``events`` events: auctions that expire by
    then are closed."""
    return int(events) * MILLIS_PER_EVENT


def winning_bids(env, events: str, rate: str = ""):
    """``(auction, price)`` of the highest bid of each auction closed by the end of the
    stream, among the bids in ``[auction.date_time, auction.expires)`` (Nexmark's
    WinningBids, shared by q4 and q6): auctions and bids meet in a keyed interval join,
    and one fold per auction keeps the best bid of its lifetime. Keys and timestamps are
    read with ``attrgetter`` (a C call) rather than a lambda: this path sees every bid."""
    end = stream_end(events)
    auctions, bids = events_of(env, events, rate).split(2)
    stamped_auctions = (auctions.filter(lambda e: isinstance(e, Auction) and e.expires <= end)
                        .add_timestamps(timestamp, watermark_every(1000)).group_by(attrgetter("id")))
    stamped_bids = (bids.filter(lambda e: isinstance(e, Bid))
                    .add_timestamps(timestamp, watermark_every(1000)).group_by(attrgetter("auction")))
    return (stamped_auctions.interval_join(stamped_bids, 0, MAX_AUCTION_MILLIS)
            .fold(None, highest_bid_in_time)
            .filter(lambda auction_id, best: best is not None))


def highest_bid_in_time(best: tuple | None, pair: tuple) -> tuple | None:
    """``(auction, price)`` of the highest bid placed before its auction expired (the first
    one of equal prices); None while there is none."""
    auction, bid = pair
    if bid.date_time >= auction.expires or (best is not None and best[1] >= bid.price):
        return best
    return (auction, bid.price)
