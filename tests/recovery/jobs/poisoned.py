"""A numbers job that fails on record ``bad`` while the file ``poison`` exists: a test
makes a run fail mid-way, then removes the poison and restores the job."""
import os


def build(env, output, poison, n="5000", bad="3000", rate="2500"):
    bad_record, poison_file = int(bad), poison

    def check(i):
        if i == bad_record and os.path.exists(poison_file):
            raise ValueError(f"record {i} is poisoned")
        return i

    env.generate(lambda i: i, count=int(n), rate=float(rate)).map(check).write_text(output)
