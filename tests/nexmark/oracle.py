"""Nexmark q0-q8 in DuckDB SQL over the same generated events: an oracle written
independently of the engine (it uses segflow only for the event generator). Each query
gives the lines its example writes."""
from __future__ import annotations

import functools

import duckdb

from segflow.datagen.nexmark import MILLIS_PER_EVENT, Auction, Bid, Person, event

QUERIES = {
    "q0": "SELECT auction, bidder, price, date_time FROM bids",
    "q1": "SELECT auction, bidder, price * 908 // 1000, date_time FROM bids",
    "q2": "SELECT auction, price FROM bids WHERE auction % 123 = 0",
    "q3": """SELECT p.name, p.city, p.state, a.id FROM auctions a JOIN people p ON a.seller = p.id
             WHERE p.state IN ('OR', 'ID', 'CA') AND a.category = 1""",
    "q4": """WITH {winning} SELECT category, count(*), sum(price) FROM winning GROUP BY category""",
    "q5": """WITH windows AS (
                 SELECT (date_time // 2000 - k) * 2000 AS start, auction
                 FROM bids, range(5) AS t(k)),
             counts AS (SELECT start, auction, count(*) AS n FROM windows GROUP BY start, auction)
             SELECT arg_min(auction, [-n, auction]), max(n) FROM counts GROUP BY start""",
    "q6": """WITH {winning}, latest AS (
                 SELECT seller, price, row_number() OVER (PARTITION BY seller ORDER BY expires DESC, id DESC) AS r
                 FROM winning)
             SELECT seller, count(*), sum(price) FROM latest WHERE r <= 10 GROUP BY seller""",
    "q7": """WITH windowed AS (SELECT date_time // 10000 * 10000 AS start, * FROM bids)
             SELECT w.start, w.auction, w.bidder, w.price FROM windowed w
             WHERE w.price = (SELECT max(price) FROM windowed m WHERE m.start = w.start)""",
    "q8": """SELECT a.date_time // 5000 * 5000, p.id, p.name, a.id FROM people p JOIN auctions a
             ON a.seller = p.id AND a.date_time // 5000 = p.date_time // 5000""",
}
WINNING = """winning AS (
    SELECT a.id, a.seller, a.category, a.expires, max(b.price) AS price
    FROM auctions a JOIN bids b ON b.auction = a.id AND b.date_time >= a.date_time AND b.date_time < a.expires
    WHERE a.expires <= {end}
    GROUP BY a.id, a.seller, a.category, a.expires)"""
AVERAGED = ("q4", "q6")     # lines end with the average of their integer total, as the examples write it


@functools.lru_cache(maxsize=4)
def _database(events: int) -> duckdb.DuckDBPyConnection:
    db = duckdb.connect()
    generated = [event(i) for i in range(events)]
    for kind, table in ((Person, "people"), (Auction, "auctions"), (Bid, "bids")):
        rows = [tuple(e) for e in generated if isinstance(e, kind)]
        columns = ", ".join(f"{name} {'VARCHAR' if isinstance(value, str) else 'BIGINT'}"
                            for name, value in zip(kind._fields, rows[0]))
        db.execute(f"CREATE TABLE {table} ({columns})")
        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(kind._fields))})", rows)
    return db


def nexmark_lines(query: str, events: int) -> list[str]:
    """The lines the example of ``query`` (``q0`` .. ``q8``) writes for ``events`` events."""
    sql = QUERIES[query].format(winning=WINNING.format(end=events * MILLIS_PER_EVENT))
    rows = _database(events).execute(sql).fetchall()
    if query in AVERAGED:
        rows = [(*row, f"{row[2] / row[1]:.2f}") for row in rows]
    return ["\t".join(map(str, row)) for row in rows]
