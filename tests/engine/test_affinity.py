"""Replica threads bound to one core: which core each local worker gets, that only the
replica's own thread is bound, that worker processes of a real run are bound (each to its
own core) and a run in this process to one, unless SEGFLOW_PIN_REPLICAS=off."""
import os
import sys
import threading

import cloudpickle
import pytest

from segflow.jobs.loader import run_pipeline
import segflow
from segflow.runtime.affinity import (PIN_ENV, REPLICA_CPU_ENV, AffinityError, bind_replica_thread,
                                      pinning_wanted, usable_cores, worker_core_from_env, worker_cores)

cloudpickle.register_pickle_by_value(sys.modules[__name__])    # the workers cannot import this test module
two_cores = pytest.mark.skipif(len(usable_cores()) < 2, reason="needs two usable cores to bind workers apart")


def test_each_worker_gets_its_own_core_from_the_rotation_start():
    assert worker_cores(2, [5, 1, 3], first=0) == [1, 3]
    assert worker_cores(3, [5, 1, 3], first=4) == [3, 5, 1]
    assert worker_cores(1, [0, 1], first=7) == [1]


def test_no_worker_is_bound_when_cores_are_too_few_to_go_round():
    assert worker_cores(3, [0, 1], first=0) == [None, None, None]
    assert worker_cores(1, [4], first=0) == [None]
    assert worker_cores(2, [], first=0) == [None, None]


def test_pinning_is_on_unless_turned_off_and_a_misspelt_value_is_refused():
    assert pinning_wanted({}) and pinning_wanted({PIN_ENV: "On "})
    assert not pinning_wanted({PIN_ENV: "off"})
    with pytest.raises(AffinityError, match="'of'.*'on'.*'off'"):
        pinning_wanted({PIN_ENV: "of"})


@two_cores
def test_binding_touches_only_the_calling_thread():
    everything = set(os.sched_getaffinity(0))
    core = max(everything)
    seen = []
    thread = threading.Thread(target=lambda: (bind_replica_thread(core), seen.append(os.sched_getaffinity(0))))
    thread.start()
    thread.join()
    assert seen == [{core}]
    assert os.sched_getaffinity(0) == everything


def test_a_core_that_cannot_be_used_names_the_way_out():
    assert worker_core_from_env({}) is None and worker_core_from_env({REPLICA_CPU_ENV: "3"}) == 3
    with pytest.raises(AffinityError, match=f"{REPLICA_CPU_ENV}='x'.*{PIN_ENV}=off"):
        worker_core_from_env({REPLICA_CPU_ENV: "x"})
    if hasattr(os, "sched_setaffinity"):
        with pytest.raises(AffinityError, match=f"core {os.cpu_count() + 64}.*{PIN_ENV}=off"):
            bind_replica_thread(os.cpu_count() + 64)


@two_cores
def test_the_replicas_of_a_run_in_this_process_share_one_core_and_the_caller_keeps_its_own(monkeypatch):
    everything = set(os.sched_getaffinity(0))
    seen = set()
    env = segflow.StreamEnvironment(parallelism=2)
    env.from_parallel(lambda i, n: range(100)).inspect(lambda _: seen.add(tuple(sorted(os.sched_getaffinity(0)))))
    env.execute()
    assert len(seen) == 1 and len(seen.pop()) == 1
    assert os.sched_getaffinity(0) == everything
    monkeypatch.setenv(PIN_ENV, "off")
    env = segflow.StreamEnvironment(parallelism=2)
    env.from_parallel(lambda i, n: range(100)).inspect(lambda _: seen.add(tuple(sorted(os.sched_getaffinity(0)))))
    env.execute()
    assert seen == {tuple(sorted(everything))}


def replica_cores(env):
    return env.from_parallel(lambda i, n: [i] * 50).map(lambda i: (i, tuple(sorted(os.sched_getaffinity(0))))).collect()


def cores_by_replica(output) -> dict:
    cores: dict = {}
    for replica, seen in output.get():
        cores.setdefault(replica, set()).add(seen)
    return cores


@two_cores
def test_each_local_worker_runs_its_replicas_on_its_own_core():
    cores = cores_by_replica(run_pipeline(replica_cores, 2, runtime="processes")[1])
    assert sorted(cores) == [0, 1]
    (first,), (second,) = cores[0], cores[1]
    assert len(first) == len(second) == 1 and first != second


@two_cores
def test_workers_are_left_to_the_scheduler_when_pinning_is_off(monkeypatch):
    monkeypatch.setenv(PIN_ENV, "off")
    cores = cores_by_replica(run_pipeline(replica_cores, 2, runtime="processes")[1])
    assert cores == {0: {tuple(usable_cores())}, 1: {tuple(usable_cores())}}


def test_a_run_with_a_misspelt_switch_fails_before_starting_anything(monkeypatch):
    monkeypatch.setenv(PIN_ENV, "no")
    with pytest.raises(AffinityError, match=f"{PIN_ENV}='no'"):
        run_pipeline(replica_cores, 2, runtime="processes")
