"""Containers from images in the one pod network (nodeagent/sandboxed.py), without root: the
command runs in the pod's network namespace with the pod's hosts, resolv.conf and hostname from
/etc/netns/<pod namespace>/ mounted read-only, under the pod's volumes, as the image's user,
from a fresh writable layer."""
import json
import os
import sys

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent.sandbox import Sandbox  # noqa: E402
from nodeagent.sandboxed import bundles, image_command  # noqa: E402
from sandbox.bundle import Bundle  # noqa: E402
from sandbox.runner import Volume  # noqa: E402

POD = {"metadata": {"name": "p", "namespace": "default"}, "spec": {}}


def _bundle(path) -> Bundle:
    etc = path / "rootfs" / "etc"
    etc.mkdir(parents=True)
    (etc / "passwd").write_text("app:x:10001:10001::/home/app:/bin/sh\n")
    (etc / "group").write_text("app:x:10001:\n")
    (path / "image.json").write_text(json.dumps({"Env": ["PATH=/venv/bin:/usr/bin"], "User": "app",
                                                 "Entrypoint": ["segflow"], "WorkingDir": "/app"}))
    return Bundle(str(path))


def test_a_container_from_an_image_runs_in_the_pods_namespace_with_its_hosts_resolv_conf_and_hostname(tmp_path):
    bundle = _bundle(tmp_path / "engine")
    stale = tmp_path / "pod" / "containers" / "main" / "upper" / "left-by-the-last-run"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    kubeconfig = Volume("/state/kubeconfig", "/run/secrets/segflow/kubeconfig", read_only=True)
    command, env, entry = image_command(bundle, POD, {"name": "main", "args": ["--version"]}, {"POD_VAR": "1"},
                                        Sandbox(netns="c-1234abcd", hostname="p"), str(tmp_path / "pod"),
                                        (kubeconfig,))
    assert command[:4] == ["ip", "netns", "exec", "c-1234abcd"]
    setup = command.index("sandbox-setup")
    rootfs, upper, _work, merged, hostname, uid, gid, groups, cwd, python, _enter, volumes = \
        command[setup + 1:setup + 13]
    assert (rootfs, hostname, uid, gid, groups, cwd, python, volumes) == \
        (bundle.rootfs, "p", "10001", "10001", "", "/app", sys.executable, "4")
    assert command[setup + 13:setup + 25] == ["/etc/netns/c-1234abcd/hosts", "/etc/hosts", "ro",
                                              "/etc/netns/c-1234abcd/resolv.conf", "/etc/resolv.conf", "ro",
                                              "/etc/netns/c-1234abcd/hostname", "/etc/hostname", "ro",
                                              "/state/kubeconfig", "/run/secrets/segflow/kubeconfig", "ro"]
    assert command[setup + 25:] == ["segflow", "--version"]
    assert env["POD_VAR"] == "1" and env["PATH"] == "/venv/bin:/usr/bin"
    assert os.listdir(upper) == [], "a restarted container starts from its image again"
    assert (entry.merged, entry.process.argv, entry.process.uid) == (merged, ["segflow", "--version"], 10001)


def test_the_manifest_names_images_by_repository():
    assert bundles({"engine": {"bundle": "/b/engine"}}) == {"segflow/engine": Bundle("/b/engine")}
