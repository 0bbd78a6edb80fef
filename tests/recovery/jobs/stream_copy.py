"""Entries of a Redis stream, read at a capped rate (so that a test can kill workers while the
job runs), transformed on two replicas and written both to a Redis stream and to S3."""


def transform(entry):
    entry_id, fields = entry
    n = int(fields["n"])
    return {"src": entry_id, "n": n, "square": n * n}


def build(env, redis, input, output, s3, s3_endpoint="", rate="2000"):
    entries = env.read_redis_stream(redis, input, rate=float(rate))
    to_redis, to_s3 = entries.shuffle().map(transform).split(2)
    to_redis.write_redis_stream(redis, output)
    to_s3.write_s3(s3, "jsonl", endpoint=s3_endpoint or None)
