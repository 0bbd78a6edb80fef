"""The workloads of bench/checkpointing.py: Nexmark q1, q3, q8, q12 and a cyclic 3-hop query.

    segflow run bench/jobs/checkpoint_queries.py --function q3 -p output=out/ -p events=400000 \\
        [-p rate=20000] [-p probe=dir/] --parallelism 2

Why not the examples: to measure end-to-end latency every record carries the wall-clock
time its source created it, ``(created, payload)``, and every result the creation time of
the newest input it depends on (the thesis's rule for joins and aggregates). The sink
writes one line per result, ``latency_ms<TAB>weight<TAB>payload``, where the latency is
taken as the sink handles the result and ``weight`` is how many results or inputs it
stands for (1, or a window's count), so the total weight is the same in every correct run,
failures included: the bench checks exactly-once output with it.

Events come from the deterministic Nexmark generator (segflow.datagen.nexmark); ``rate``
caps the source at that many events per second (empty: as fast as possible). A restored
source goes on at its rate, so records produced again after a recovery get a new creation
time; only records replayed from logs or channel state keep their first one.
"""
from __future__ import annotations

import time

import ckpt_probe
from segflow import EventTimeWindow, ProcessingTimeWindow
from segflow.datagen.nexmark import Auction, Bid, Person, event, mix, watermark_every

EURO_PER_DOLLAR_MILLIS = 908
Q3_STATES = ("OR", "ID", "CA")
Q3_CATEGORY = 1


def stamped(i: int) -> tuple:
    return time.time(), event(i)


def _source(env, make, events: str, rate: str, probe: str):
    ckpt_probe.install(probe)
    return env.generate(make, count=int(events), rate=float(rate) if rate else None)


def _line(result: tuple) -> str:
    created, weight, payload = result
    return f"{(time.time() - created) * 1000:.3f}\t{weight}\t{payload}"


def _newest(pair: tuple) -> float:
    return max(pair[0][0], pair[1][0])


def q1(env, output, events="400000", rate="", probe=""):
    """Currency conversion: a map per bid (no shuffle, as in the thesis)."""
    (_source(env, stamped, events, rate, probe)
        .filter(lambda r: type(r[1]) is Bid)
        .map(lambda r: (r[0], 1, f"{r[1].auction} {r[1].price * EURO_PER_DOLLAR_MILLIS // 1000}"))
        .write_text(output, _line))


def q3(env, output, events="400000", rate="", probe=""):
    """Local item suggestion: people of three states joined with their category-1 auctions
    (symmetric hash join, both sides shuffled by person id)."""
    people, auctions = _source(env, stamped, events, rate, probe).split(2)
    local = people.filter(lambda r: type(r[1]) is Person and r[1].state in Q3_STATES)
    chosen = auctions.filter(lambda r: type(r[1]) is Auction and r[1].category == Q3_CATEGORY)
    (chosen.join(local, lambda r: r[1].seller, lambda r: r[1].id)
        .drop_key()
        .map(lambda ap: (_newest(ap), 1, f"{ap[1][1].name} {ap[1][1].state} {ap[0][1].id}"))
        .write_text(output, _line))


def q8(env, output, events="400000", rate="", probe="", size="10000"):
    """New users: people joined with the auctions they opened in the same event-time
    tumbling window of ``size`` ms (a window join, shuffled by person id)."""
    window = EventTimeWindow.tumbling(int(size))
    stamped_events = (_source(env, stamped, events, rate, probe)
                      .filter(lambda r: type(r[1]) is not Bid)
                      .add_timestamps(lambda r: r[1].date_time, watermark_every(1000)))
    people, auctions = stamped_events.split(2)
    new_people = people.filter(lambda r: type(r[1]) is Person).key_by(lambda r: r[1].id).window(window)
    sellers = auctions.filter(lambda r: type(r[1]) is Auction).key_by(lambda r: r[1].seller).window(window)
    (new_people.join(sellers)
        .drop_key()
        .map(lambda pa: (_newest(pa), 1, f"{pa[0][1].id} {pa[1][1].id}"))
        .write_text(output, _line))


def _count_newest(acc: tuple, r: tuple) -> tuple:
    return max(acc[0], r[0]), acc[1] + 1


def q12(env, output, events="400000", rate="", probe="", seconds="1.0"):
    """Bids per bidder in processing-time tumbling windows of ``seconds`` (shuffled by
    bidder); the weight is the count, so the total weight is the number of bids."""
    (_source(env, stamped, events, rate, probe)
        .filter(lambda r: type(r[1]) is Bid)
        .group_by(lambda r: r[1].bidder)
        .window(ProcessingTimeWindow.tumbling(float(seconds)))
        .fold((0.0, 0), _count_newest)
        .unkey()
        .map(lambda kv: (kv[1][0], kv[1][1], kv[0]))
        .write_text(output, _line))


def edge(i: int, nodes: int) -> tuple[int, int]:
    h = mix(i, 3)
    return h % nodes, (h >> 24) % nodes


def _extend(routes, edges):
    """Every route ``(created, from, to)`` followed by every edge leaving its end."""
    return (routes.join(edges, lambda r: r[2], lambda e: e[1][0])
            .drop_key()
            .map(lambda re: (_newest(re), re[0][1], re[1][1][1])))


def cyclic(env, output, events="20000", rate="", probe="", degree="2"):
    """The cyclic 3-hop query: routes of three edges over a generated graph of
    ``events`` edges (average out-degree ``degree``). An ``iterate`` loop extends the routes
    one edge per iteration (a feedback edge in the dataflow); the edges are its side input.
    segflow's iterations are bulk-synchronous: an iteration starts when the previous one
    has ended, so the latency here is that of a superstep, not of a streaming cycle."""
    nodes = max(2, int(events) // int(degree))
    edges = _source(env, lambda i: (time.time(), edge(i, nodes)), events, rate, probe)
    first, side = edges.split(2)
    _, routes = first.map(lambda r: (r[0], r[1][0], r[1][1])).iterate(
        2, 0, lambda s, _state: _extend(s, side),
        local_fold=lambda n, _r: n + 1, global_fold=lambda total, n: total + n, delta_init=0)
    routes.map(lambda r: (r[0], 1, f"{r[1]} {r[2]}")).write_text(output, _line)
