"""Benchmark (not a test): record encodings for the data plane, on typical batches.

Compares, per batch of 1024 records, encode + decode time and size for pickle protocol 5
(the data plane's choice), pickle 4, marshal and msgpack (when installed), on words,
(word, count) pairs and Nexmark-like dict records. Prints JSON lines, fastest first per
kind, then one line with them all. msgpack decodes tuples as lists, so it would change
user records; it is measured for information only.

    .venv/bin/python bench/encoding.py [--rounds 300]
"""
from __future__ import annotations

import argparse
import json
import marshal
import pickle
import random
import time

from common import report

rng = random.Random(1)
WORDS = ["".join(rng.choices("abcdefghij", k=rng.randint(2, 9))) for _ in range(1024)]
BATCHES = {
    "words": WORDS,
    "pairs": [(w, rng.randint(1, 10_000)) for w in WORDS],
    "dicts": [{"auction": rng.randint(0, 10_000), "bidder": rng.randint(0, 10_000),
               "price": rng.randint(1, 10**6), "channel": "web", "ts": 1_700_000_000_000 + i}
              for i in range(1024)],
}

CODECS = {
    "pickle5": (lambda b: pickle.dumps(b, protocol=5), pickle.loads),
    "pickle4": (lambda b: pickle.dumps(b, protocol=4), pickle.loads),
    "marshal": (marshal.dumps, marshal.loads),
}
try:
    import msgpack
    CODECS["msgpack"] = (msgpack.packb, msgpack.unpackb)
except ImportError:
    pass


def measure(encode, decode, batch, rounds=300):
    data = encode(batch)
    started = time.perf_counter()
    for _ in range(rounds):
        decode(encode(batch))
    return (time.perf_counter() - started) / rounds, len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300, help="encode+decode rounds per codec and batch")
    args = parser.parse_args()
    every_kind = []
    for kind, batch in BATCHES.items():
        rows = []
        for name, (encode, decode) in CODECS.items():
            seconds, size = measure(encode, decode, batch, args.rounds)
            rows.append({"kind": kind, "codec": name, "us_per_batch": round(seconds * 1e6, 1),
                         "bytes": size, "ns_per_record": round(seconds * 1e9 / len(batch), 1)})
        for row in sorted(rows, key=lambda r: r["us_per_batch"]):
            print(json.dumps(row))
            every_kind.append(row)
    report("encoding", {"rounds": args.rounds, "batches": every_kind})


if __name__ == "__main__":
    main()
