import os
import threading
import time

from segflow.coordinator.parent import watch_parent


def test_a_parent_that_is_not_this_process_s_any_more_is_reported_gone_once():
    calls = []
    done = threading.Event()
    started = time.monotonic()
    watch_parent(os.getppid() + 1_000_000, calls.append, done, every=0.01)
    assert calls == [f"its segflow run (pid {os.getppid() + 1_000_000}) is gone"]
    assert time.monotonic() - started < 1


def test_a_live_parent_is_watched_until_the_job_is_done():
    calls = []
    done = threading.Event()
    watcher = threading.Thread(target=watch_parent, args=(os.getppid(), calls.append, done, 0.01))
    watcher.start()
    time.sleep(0.2)
    assert watcher.is_alive()
    done.set()
    watcher.join(2)
    assert not watcher.is_alive()
    assert calls == []
