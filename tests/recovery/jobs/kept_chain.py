"""A chain whose every block replays exactly (issue 48: kept consumers of a restarted
block): a parallel generator, then four blocks split by ``max_parallelism`` (one input
channel per replica: replica i feeds replica i), the last with the text sink. The job
declares its functions deterministic (unless ``deterministic=0``). With connectors at blocks 0 (the source), 2 and 4
(the sink) and placement by segment, the groups are {0}, {1, 2} and {3, 4}: a loss in
{1, 2} restarts that group only, and block 3 (plain) with the sink after it keeps running."""
import collections

N_REPLICAS = 2


def build(env, output, events="30000", rate="2500", deterministic="1"):
    if int(deterministic):
        env.declare_deterministic()
    n, rate = int(events), float(rate)
    (env.generate(lambda i: i, count=n, rate=rate)
        .max_parallelism(N_REPLICAS).map(lambda i: i * 3)
        .max_parallelism(N_REPLICAS).map(lambda x: x + 1)
        .max_parallelism(N_REPLICAS).filter(lambda x: x % 2 == 0)
        .max_parallelism(N_REPLICAS).map(str)
        .write_text(output + "/values"))


def oracle(events=30000):
    return {"values": collections.Counter(str(i * 3 + 1) for i in range(events) if (i * 3 + 1) % 2 == 0)}
