"""Word count: how often each word occurs in a text file.

    segflow run examples/wordcount.py -p input=book.txt -p output=out/ --parallelism 4

Writes ``word<TAB>count`` lines into part files in ``output`` (a directory, or part
objects under an s3:// URL, as a job on a cluster writes them); words are
``line.lower().split()``. Counting is associative, so every replica counts its share of
the file first and only the partial counts cross the shuffle.
"""


def split_words(line):
    return line.lower().split()


def format_count(pair):
    word, count = pair
    return f"{word}\t{count}"


def build(env, input, output):
    """``output``: a directory, or s3://bucket/prefix (endpoint from $AWS_ENDPOINT_URL)."""
    counts = (env.read_text(input)
              .flat_map(split_words)
              .group_by_count())
    counts.write_text(output, format_count)
