"""The options of ``segflow plan --segment-backup``: apart from the command
(:mod:`.segment_advice`) so that building segflow's command line does not import the cost
model and the in-process runtime."""
from __future__ import annotations

import argparse

RESTART_SECONDS = 1.0        # t^rr: new processes up and restored (bench/segment_backup.py measures ~0.7 s)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("segment backup (the cost model of Shen, Segment Backup, chapter 4)")
    group.add_argument("--segment-backup", action="store_true",
                       help="calibrate the job, then print the connectors and barrier interval to choose "
                            "(the calibration runs the job: point its outputs somewhere disposable)")
    group.add_argument("--max-recovery-delay", type=float, default=30.0, metavar="SECONDS",
                       help="the recovery delay to stay within (default: 30)")
    group.add_argument("--prices", metavar="FILE", help="JSON with per_cpu_second, per_network_byte, "
                                                         "per_stored_byte_second (default: cloud list prices)")
    group.add_argument("--calibrate", type=float, default=5.0, metavar="SECONDS",
                       help="how long the calibration run lasts (default: 5)")
    group.add_argument("--tuple-bytes", type=float, default=100.0, help="bytes per tuple (default: 100)")
    group.add_argument("--job-name", default=None,
                       help="with --state: record the measurements and the choice for this job (default: the "
                            "module's name), where segflow run --connectors auto finds them")
    group.add_argument("--restart-seconds", type=float, default=RESTART_SECONDS,
                       help=f"time until restored processes run (default: {RESTART_SECONDS}; with standby workers "
                            "a restart takes tens of milliseconds)")
    group.add_argument("--checkpoint-seconds", type=float, default=0.0, metavar="SECONDS",
                       help="a checkpoint's time from its trigger to its completion, as the web view shows it: a "
                            "recovery replays that much more input (default: 0, the thesis's model)")
