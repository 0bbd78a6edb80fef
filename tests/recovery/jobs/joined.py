"""A hash join of two rate-limited deterministic generators on a shared key."""


def left(i):
    return (i % 500, f"L{i}")


def right(i):
    return (i % 700, f"R{i}")


def build(env, output, n="9000", rate="3000"):
    a = env.generate(left, count=int(n), rate=float(rate))
    b = env.generate(right, count=int(n) // 3, rate=float(rate) / 3)
    (a.join(b, lambda x: x[0], lambda y: y[0])
        .drop_key()
        .write_text(output, lambda lr: f"{lr[0][1]}\t{lr[1][1]}"))
