"""``segflow demo`` (what ``make demo`` runs): a worker is killed, the job recovers, the
output is exact."""
import collections
import re
import subprocess

from segflow.cli.demo import differences
from support.processes import ROOT, SEGFLOW


def test_the_demo_kills_a_worker_recovers_and_checks_the_output():
    run = subprocess.run([SEGFLOW, "demo", "--readings", "24000", "--rate", "3000"], capture_output=True,
                         text=True, timeout=180, cwd=ROOT)
    err = run.stderr
    assert run.returncode == 0, err
    assert re.search(r"segflow: web view at http://127\.0\.0\.1:\d+/", err), err
    assert re.search(r"checkpoint \d+ is complete: killing worker w1 \(pid \d+\) with SIGKILL", err), err
    assert "recovering" in err and "with 1 recovery" in err, err
    assert "all 384 windows match a direct computation exactly" in err, err      # 24 windows x 16 sensors
    assert "sensor-00             0        63" in run.stdout, run.stdout
    assert '"level"' not in err, "the demo's services should keep their logs quiet"


def test_the_check_finds_lost_and_duplicated_windows():
    expected = collections.Counter({"a\t0": 1, "b\t0": 1})
    assert differences(expected, collections.Counter(expected)) == ""
    assert differences(expected, collections.Counter({"a\t0": 1})).startswith("1 windows missing, 0 extra")
    assert differences(expected, collections.Counter({"a\t0": 2, "b\t0": 1})).startswith("0 windows missing, 1 extra")
