"""The operator's log lines are JSON whatever a message holds, with credentials masked."""
import io
import json
import logging

from segflow_operator.main import log_handler


def test_every_line_is_json_with_quotes_newlines_tracebacks_and_no_passwords():
    out = io.StringIO()
    logger = logging.getLogger("segflow-operator-log-test")
    logger.handlers[:] = [log_handler(out)]
    logger.propagate = False
    logger.warning('spec "counts" refused:\n  parallelism "x" is not a number')
    logger.error("state at redis://:hunter2@redis:6379/0 unreachable")
    try:
        raise ValueError('a "quoted" failure')
    except ValueError:
        logger.exception("reconcile failed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    records = [json.loads(line) for line in lines]
    assert records[0]["msg"] == 'spec "counts" refused:\n  parallelism "x" is not a number'
    assert records[0]["level"] == "warning" and records[0]["component"] == "operator"
    assert "hunter2" not in lines[1] and "redis://:***@redis:6379/0" in records[1]["msg"]
    assert 'ValueError: a "quoted" failure' in records[2]["exc"]
