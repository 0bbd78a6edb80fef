"""Credentials never reach what segflow shows: the one redaction function, and the CLI's
errors and logs when stores with credentials fail."""
import os
import subprocess

import pytest

from segflow.redaction import redact, redact_url
from support.processes import ROOT, SEGFLOW
from support.servers import free_port

JOB = os.path.join(ROOT, "tests", "recovery", "jobs", "windowed_counts.py")
PASSWORD = "pw-7f3a9c2e"
S3_SECRET = "s3-secret-e81b44d0"


@pytest.mark.parametrize("url,shown", [
    pytest.param("redis://user:hunter22@host:6379/0", "redis://user:***@host:6379/0", id="user and password"),
    pytest.param("rediss://:hunter22@host:6380/1", "rediss://:***@host:6380/1", id="password alone"),
    pytest.param("s3://bucket/prefix?X-Amz-Signature=abc&X-Amz-Credential=AKIA",
                 "s3://bucket/prefix?X-Amz-Signature=***&X-Amz-Credential=***", id="presigned query"),
    pytest.param("https://u:p@example.com/a?token=t#frag", "https://u:***@example.com/a?token=***#frag",
                 id="password, query and fragment"),
    pytest.param("file:///tmp/state", "file:///tmp/state", id="no secrets: a path"),
    pytest.param("redis://host:6379/0", "redis://host:6379/0", id="no secrets: a server"),
])
def test_urls_lose_passwords_and_query_values(url, shown):
    assert redact_url(url) == shown


def test_text_loses_urls_keys_and_secret_environment_values(monkeypatch):
    monkeypatch.setenv("SEGFLOW_REDIS_PASSWORD", PASSWORD)
    key = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49\n-----END PRIVATE KEY-----"
    text = f"failed at redis://:{PASSWORD}@h:1/0 with {PASSWORD} and {key}; see s3://b/k?sig=x"
    shown = redact(text)
    assert PASSWORD not in shown and "MIGHAgEA" not in shown and "sig=x" not in shown
    assert "redis://:***@h:1/0" in shown and "s3://b/k?sig=***" in shown


def _run(state: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([SEGFLOW, "run", JOB, "-p", "output=/tmp/unused-redaction-out", "-p", "events=100",
                           "--checkpoint-protocol", "aligned", "--state", state, "--restore", "latest"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SEGFLOW_STORE_WAIT_SECONDS": "0", **env})


def test_cli_errors_of_stores_with_credentials_show_none_of_them():
    port = free_port()                                  # nothing listens there
    by_url = _run(f"redis://:{PASSWORD}@127.0.0.1:{port}/0", {})
    by_env = _run(f"redis://127.0.0.1:{port}/0", {"SEGFLOW_REDIS_PASSWORD": PASSWORD})
    s3 = _run("s3://segflow-redaction/state", {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
                                               "AWS_ACCESS_KEY_ID": "segflow-test", "AWS_SECRET_ACCESS_KEY": S3_SECRET})
    for result in (by_url, by_env, s3):
        assert result.returncode != 0
        shown = result.stdout + result.stderr
        assert shown.strip(), "the failure must say something"
        assert PASSWORD not in shown and S3_SECRET not in shown, shown[-2000:]
    assert "redis://:***@127.0.0.1" in by_url.stderr


def test_an_s3_store_without_any_credentials_is_refused_with_what_to_set(tmp_path):
    """No silent fallback to a made-up key pair: the run stops before any request."""
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    result = subprocess.run([SEGFLOW, "run", JOB, "-p", f"output={tmp_path / 'out'}", "-p", "events=100",
                             "--checkpoint-protocol", "aligned", "--state", "s3://segflow-nocreds/state",
                             "--s3-endpoint", f"http://127.0.0.1:{port}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**clean, "HOME": str(tmp_path)})     # no ~/.aws either
    assert result.returncode != 0
    assert "no S3 credentials for s3://segflow-nocreds/state" in result.stderr
    assert "AWS_ACCESS_KEY_ID" in result.stderr and "Traceback" not in result.stderr
