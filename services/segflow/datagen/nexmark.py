"""A deterministic Nexmark-style event generator: people, auctions and bids.

Event ``i`` is a pure function of ``i`` (and a seed), so parallel generator replicas,
restarts and replays all see the same stream. As in Nexmark, every block of 50 events
has 1 new person, 3 new auctions and 46 bids; bids go to recent auctions, sellers and
bidders are existing people. Event time (``date_time``, in milliseconds) is
``i * MILLIS_PER_EVENT``, so it grows with the index: watermarks can follow it closely.
"""
from __future__ import annotations

from typing import NamedTuple

BLOCK = 50
AUCTIONS_PER_BLOCK = 3
MILLIS_PER_EVENT = 10
STATES = ("OR", "ID", "CA", "WA", "AZ", "NV", "UT", "TX")
CITIES = ("Portland", "Boise", "Sacramento", "Seattle", "Phoenix", "Reno", "Provo", "Austin")
CATEGORIES = 10
HOT_AUCTIONS = 20      # bids go to one of the most recent auctions


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


def mix(i: int, seed: int = 0) -> int:
    """A 64-bit integer hash (splitmix64's finaliser): well spread and cheap."""
    z = (i * 0x9E3779B97F4A7C15 + seed * 0xBF58476D1CE4E5B9 + 1) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def event(i: int, seed: int = 0) -> Person | Auction | Bid:
    block, slot = divmod(i, BLOCK)
    h = mix(i, seed)
    when = i * MILLIS_PER_EVENT
    if slot == 0:
        k = h % len(STATES)
        return Person(block, f"person{block}", f"p{block}@segflow.io", CITIES[k], STATES[k], when)
    if slot <= AUCTIONS_PER_BLOCK:
        auction = block * AUCTIONS_PER_BLOCK + slot - 1
        return Auction(auction, f"item{auction}", seller=h % (block + 1), category=(h >> 8) % CATEGORIES,
                       initial_bid=100 + (h >> 16) % 1000, expires=when + 10_000 + (h >> 24) % 20_000,
                       date_time=when)
    newest = block * AUCTIONS_PER_BLOCK + AUCTIONS_PER_BLOCK - 1
    auction = max(0, newest - h % HOT_AUCTIONS)
    return Bid(auction, bidder=(h >> 8) % (block + 1), price=100 + (h >> 16) % 10_000, date_time=when)


def timestamp(e: Person | Auction | Bid) -> int:
    return e.date_time


MAX_REPLICAS_FOR_WATERMARKS = 8


def watermark_every(period_ms: int):
    """A watermark function for ``add_timestamps``: about every ``period_ms`` of event
    time, the time itself. A generator replica produces its events in time order, and it
    sees at least one event in the first few of each period (replica ``r`` of ``n`` gets
    events ``r, r + n, ...``; up to 8 replicas), so each replica keeps its watermark moving."""
    window = MILLIS_PER_EVENT * MAX_REPLICAS_FOR_WATERMARKS

    def watermark(_record, ts: int) -> int | None:
        return ts if ts % period_ms < window else None
    return watermark
