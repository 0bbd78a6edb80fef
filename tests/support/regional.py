"""Where a job placed by segment runs each block, for the tests of regional recovery:
``segflow plan``'s placement, and the slot a worker process runs."""
import collections
import os
import re
import subprocess

from support.processes import ROOT, SEGFLOW, command_words

SHAPES_JOB = os.path.join(ROOT, "tests", "recovery", "jobs", "segment_shapes.py")
PLACED = re.compile(r"^(?:source )?block (\d+): \d+ replica\(s\) on (.+?)  \[")


def placement(shape: str, workers: int, tmp_path, job: str = SHAPES_JOB, extra: tuple[str, ...] = ()
              ) -> dict[str, set[int]]:
    """Which blocks each worker (slot) runs, as ``segflow plan`` shows it (``shape``: a
    parameter of the job, "" none)."""
    shape_args = ["-p", f"shape={shape}"] if shape else []
    shown = subprocess.run([SEGFLOW, "plan", job, "-p", f"output={tmp_path}/x", *shape_args,
                            "--parallelism", str(workers), "--placement", "segment", *extra],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "each on workers of its own" in shown.stdout, shown.stdout + shown.stderr
    blocks: dict[str, set[int]] = collections.defaultdict(set)
    for line in shown.stdout.splitlines():
        match = PLACED.match(line)
        if match:
            for share in match.group(2).split(", "):
                blocks[share.split("×")[0]].add(int(match.group(1)))
    return blocks


def slot(process) -> str:
    """The slot a worker process runs: its name, or the lost worker's it took over."""
    words = command_words(process)
    if "took" in words:
        return words[words.index("over") + 1].rstrip(")")
    return words[words.index("--name") + 1] if "--name" in words else ""
