"""Every record crosses the keyed exchange (no pre-aggregation): a data-plane benchmark."""


def build(env, records="2000000", output=""):
    (env.generate(lambda i: (i % 4096, i), count=int(records))
        .group_by(lambda kv: kv[0])
        .fold(0, lambda count, kv: count + 1)
        .unkey()
        .write_text(output, lambda kv: f"{kv[0]}\t{kv[1]}"))
