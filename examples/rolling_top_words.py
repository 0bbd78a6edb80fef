"""Rolling top words: the most frequent words over a sliding event-time window.

    segflow run examples/rolling_top_words.py -p output=out/ --parallelism 2

Input: a generated stream of (word, time) events (a Zipf-like vocabulary, event time in
milliseconds, ``events`` of them). Per sliding window of ``size`` ms every ``step`` ms,
the ``top`` words by count. Writes one line per window:
``word1:count1 word2:count2 ...`` (ties broken alphabetically).
"""
from segflow import EventTimeWindow
from segflow.datagen.nexmark import mix

VOCABULARY = ("the", "of", "and", "to", "in", "stream", "window", "state", "barrier", "snapshot",
              "segment", "replica", "block", "worker", "pod", "key", "shuffle", "fold")
MILLIS_PER_EVENT = 10


def word_event(i):
    h = mix(i, 7)
    rank = min(int(len(VOCABULARY) * (h % 1000 / 1000) ** 2), len(VOCABULARY) - 1)
    return (VOCABULARY[rank], i * MILLIS_PER_EVENT)


def watermark(_event, ts):
    return ts if ts % 500 < MILLIS_PER_EVENT * 8 else None


def top_of(top):
    def rank(words):
        counts = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return " ".join(f"{w}:{n}" for w, n in best)
    return rank


def build(env, output, events="20000", size="2000", step="500", top="3"):
    (env.generate(word_event, count=int(events))
        .add_timestamps(lambda e: e[1], watermark)
        .map(lambda e: e[0])
        .window_all(EventTimeWindow.sliding(int(size), int(step)))
        .map(top_of(int(top)))
        .write_text(output))
