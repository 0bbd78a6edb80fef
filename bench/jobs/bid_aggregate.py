"""The comparison bench's record-heavy job: parse a CSV of bids, price each in euro cents
(Nexmark q1's rate, in integers so every engine's sums agree exactly), and count and sum
per auction."""


def euro(row):
    return int(row["auction"]), int(row["price"]) * 908 // 1000


def add(total, bid):
    return total[0] + 1, total[1] + bid[1]


def merge(a, b):
    return a[0] + b[0], a[1] + b[1]


def build(env, input):
    return (env.read_csv(input)
            .map(euro)
            .group_by_fold(lambda bid: bid[0], (0, 0), add, merge)
            .collect())
