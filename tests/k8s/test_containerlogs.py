"""Which bytes of a container's log answer ``kubectl logs`` (nodeagent/containerlogs.py,
pure): the current or previous run, ``--tail``, ``--limit-bytes``, refused options."""
import os
import sys

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent.containerlogs import (LogQuery, LogQueryError, NoSuchRun, parse_query, run_span,  # noqa: E402
                                     select)

LOG = b"first run\nboom\nsecond run\nline 2\nline 3\n"
RUNS = [0, len(b"first run\nboom\n")]


def test_the_current_run_is_the_last_and_previous_the_one_before():
    assert run_span(RUNS, len(LOG), previous=False) == (RUNS[1], len(LOG))
    start, end = run_span(RUNS, len(LOG), previous=True)
    assert LOG[start:end] == b"first run\nboom\n"
    with pytest.raises(NoSuchRun, match="previous terminated container not found"):
        run_span(RUNS[:1], len(LOG), previous=True)
    with pytest.raises(NoSuchRun, match="has not started"):
        run_span([], 0, previous=False)


def test_tail_lines_then_limit_bytes():
    current = LOG[RUNS[1]:]
    assert select(current, LogQuery(tail_lines=2)) == b"line 2\nline 3\n"
    assert select(current, LogQuery(tail_lines=0)) == b""
    assert select(current, LogQuery(tail_lines=10)) == current
    assert select(current, LogQuery(tail_lines=2, limit_bytes=3)) == b"lin"
    assert select(b"no newline at the end", LogQuery(tail_lines=1)) == b"no newline at the end"


def test_the_query_as_the_api_server_sends_it():
    assert parse_query({"previous": ["true"], "tailLines": ["5"], "follow": ["false"]}) == \
        LogQuery(previous=True, tail_lines=5)
    assert parse_query({"limitBytes": ["10"], "follow": ["true"]}) == LogQuery(limit_bytes=10, follow=True)
    assert parse_query({"timestamps": ["false"]}) == LogQuery()
    with pytest.raises(LogQueryError, match="timestamps are not supported"):
        parse_query({"timestamps": ["true"]})
    with pytest.raises(LogQueryError, match="sinceSeconds is not supported"):
        parse_query({"sinceSeconds": ["10"]})
    with pytest.raises(LogQueryError, match="not a whole number"):
        parse_query({"tailLines": ["x"]})
