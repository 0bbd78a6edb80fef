"""examples/wordcount.py with the bench probe installed (bench/jobs/ckpt_probe.py), so
bench/checkpointing.py's ABS curve can compare the workers' CPU time as well as run time:
the machine it runs on may be shared, and CPU time is far less disturbed by other load."""
import importlib.util
import os

import ckpt_probe

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "examples", "wordcount.py")
_spec = importlib.util.spec_from_file_location("segflow_bench_wordcount_example", _PATH)
wordcount = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wordcount)


def build(env, input, output, probe=""):
    ckpt_probe.install(probe)
    wordcount.build(env, input, output)
