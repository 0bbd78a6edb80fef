"""A pod's volumes as the node agent lays them out (nodeagent/volumes.py, pure) and writes
them (nodeagent/volumedirs.py, on a temporary directory), and volume targets resolved inside
an image's root (sandbox/runner.resolve_target): no cluster needed."""
import base64
import os
import stat
import sys

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent import volumedirs  # noqa: E402
from nodeagent.volumes import (HOST_PATH_KINDS, MountFailed, PodVolume, VolumeConfigError, VolumeFile,  # noqa: E402
                               container_mounts, host_path_step, pod_volumes)
from sandbox.runner import VolumeError, resolve_target  # noqa: E402

DATA = {("configmap", "settings"): {"app.yaml": "a: 1\n", "log.yaml": "level: info\n"},
        ("secret", "creds"): {"token": base64.b64encode(b"s3cr\x00t").decode(),
                              "user": base64.b64encode(b"me").decode()}}


def lookup(kind, name):
    return DATA.get((kind, name))


def pod(*volumes, security=None):
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u-1", "labels": {"b": "2", "a": "1"},
                         "annotations": {"note": "hi"}},
            "spec": {"volumes": list(volumes), "securityContext": security or {}, "containers": []}}


def test_config_map_and_secret_volumes_hold_their_keys_with_their_modes():
    volumes = pod_volumes(pod({"name": "cfg", "configMap": {"name": "settings"}},
                              {"name": "sec", "secret": {"secretName": "creds", "defaultMode": 0o400,
                                                         "items": [{"key": "token", "path": "auth/token"},
                                                                   {"key": "user", "path": "user", "mode": 0o444}]}}),
                          lookup)
    assert volumes["cfg"] == PodVolume("cfg", "configMap", (VolumeFile("app.yaml", b"a: 1\n", 0o644),
                                                             VolumeFile("log.yaml", b"level: info\n", 0o644)))
    assert volumes["sec"].files == (VolumeFile("auth/token", b"s3cr\x00t", 0o400), VolumeFile("user", b"me", 0o444))
    assert not volumes["cfg"].writable and not volumes["sec"].writable


def test_missing_sources_fail_unless_optional():
    with pytest.raises(VolumeConfigError, match="secret 'absent' not found"):
        pod_volumes(pod({"name": "s", "secret": {"secretName": "absent"}}), lookup)
    with pytest.raises(VolumeConfigError, match="has no key 'nope'"):
        pod_volumes(pod({"name": "c", "configMap": {"name": "settings", "items": [{"key": "nope", "path": "x"}]}}),
                    lookup)
    optional = pod_volumes(pod({"name": "s", "secret": {"secretName": "absent", "optional": True}},
                               {"name": "c", "configMap": {"name": "settings", "optional": True,
                                                           "items": [{"key": "nope", "path": "x"}]}}), lookup)
    assert optional["s"].files == () and optional["c"].files == ()


def test_downward_api_and_projected_volumes():
    downward = {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                          {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                          {"path": "note", "fieldRef": {"fieldPath": "metadata.annotations['note']"}, "mode": 0o600}]}
    volumes = pod_volumes(pod({"name": "d", "downwardAPI": downward},
                              {"name": "all", "projected": {"defaultMode": 0o440, "sources": [
                                  {"configMap": {"name": "settings", "items": [{"key": "app.yaml", "path": "app"}]}},
                                  {"secret": {"name": "creds", "items": [{"key": "user", "path": "user"}]}},
                                  {"downwardAPI": {"items": [{"path": "ns",
                                                              "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}),
                          lookup)
    assert volumes["d"].files == (VolumeFile("name", b"p", 0o644), VolumeFile("labels", b'a="1"\nb="2"', 0o644),
                                  VolumeFile("note", b"hi", 0o600))
    assert volumes["all"].files == (VolumeFile("app", b"a: 1\n", 0o440), VolumeFile("user", b"me", 0o440),
                                    VolumeFile("ns", b"ns", 0o440))
    with pytest.raises(VolumeConfigError, match="not allowed in a downward API volume"):
        pod_volumes(pod({"name": "d", "downwardAPI": {"items": [{"path": "ip",
                                                                 "fieldRef": {"fieldPath": "status.podIP"}}]}}), lookup)
    with pytest.raises(VolumeConfigError, match="'nfs'.* is not supported"):
        pod_volumes(pod({"name": "n", "nfs": {"server": "10.0.0.1", "path": "/"}}), lookup)
    with pytest.raises(VolumeConfigError, match="relative path without '..'"):
        pod_volumes(pod({"name": "c", "configMap": {"name": "settings",
                                                    "items": [{"key": "app.yaml", "path": "../escape"}]}}), lookup)


def test_mounts_follow_the_containers_volume_mounts():
    volumes = pod_volumes(pod({"name": "tmp", "emptyDir": {"medium": "Memory"}},
                              {"name": "cfg", "configMap": {"name": "settings"}}), lookup)
    container = {"name": "main", "volumeMounts": [
        {"name": "tmp", "mountPath": "/tmp"},
        {"name": "tmp", "mountPath": "/cache", "subPathExpr": "$(POD)/cache", "readOnly": True},
        {"name": "cfg", "mountPath": "/etc/app.yaml", "subPath": "app.yaml", "readOnly": False}]}
    mounts = [(m.source("/pods/v"), m.target, m.read_only)
              for m in container_mounts(container, volumes, {"POD": "p-1"})]
    assert mounts == [("/pods/v/kubernetes.io~empty-dir/tmp", "/tmp", False),
                      ("/pods/v/kubernetes.io~empty-dir/tmp/p-1/cache", "/cache", True),
                      ("/pods/v/kubernetes.io~configmap/cfg/app.yaml", "/etc/app.yaml", True)]
    with pytest.raises(VolumeConfigError, match="names no volume"):
        container_mounts({"name": "main", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}, volumes, {})
    with pytest.raises(VolumeConfigError, match="subPath"):
        container_mounts({"name": "main", "volumeMounts": [{"name": "tmp", "mountPath": "/x", "subPath": "/etc"}]},
                         volumes, {})


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_written_volumes_are_owned_by_the_pods_fs_group(tmp_path):
    root = str(tmp_path)
    volumes = pod_volumes(pod({"name": "tmp", "emptyDir": {}},
                              {"name": "sec", "secret": {"secretName": "creds", "defaultMode": 0o400,
                                                         "items": [{"key": "token", "path": "auth/token"}]}}), lookup)
    scratch = volumedirs.materialize(volumes["tmp"], root, 4242)
    secret = volumedirs.materialize(volumes["sec"], root, 4242)
    assert (os.stat(scratch).st_gid, _mode(scratch)) == (4242, 0o2777)
    token = os.path.join(secret, "auth", "token")
    with open(token, "rb") as f:
        assert f.read() == b"s3cr\x00t"
    assert (os.stat(token).st_gid, _mode(token)) == (4242, 0o440), "group-readable: the fsGroup reads a 0400 secret"
    assert os.stat(os.path.dirname(token)).st_gid == 4242

    with open(os.path.join(scratch, "kept"), "w") as f:
        f.write("written by a container")
    volumedirs.materialize(volumes["tmp"], root, 4242)
    assert os.path.exists(os.path.join(scratch, "kept")), "an emptyDir outlives a container restart"

    plain = volumedirs.materialize(pod_volumes(pod({"name": "sec", "secret": {"secretName": "creds"}}), lookup)["sec"],
                                   str(tmp_path / "no-group"), None)
    assert (os.stat(os.path.join(plain, "user")).st_gid, _mode(os.path.join(plain, "user"))) == (0, 0o644)


def test_mount_sources_stay_inside_the_pods_volumes(tmp_path):
    root = str(tmp_path / "volumes")
    volumes = pod_volumes(pod({"name": "tmp", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "settings"}}),
                          lookup)
    scratch = volumedirs.materialize(volumes["tmp"], root, 4242)
    volumedirs.materialize(volumes["cfg"], root, None)
    [made, missing, escape] = container_mounts({"name": "c", "volumeMounts": [
        {"name": "tmp", "mountPath": "/a", "subPath": "new/dir"},
        {"name": "cfg", "mountPath": "/b", "subPath": "absent.yaml"},
        {"name": "tmp", "mountPath": "/c", "subPath": "link"}]}, volumes, {})
    assert volumedirs.mount_source(made, root) == os.path.join(scratch, "new", "dir")
    assert _mode(os.path.join(scratch, "new", "dir")) == 0o2777, "a new subPath takes its volume's mode"
    with pytest.raises(VolumeConfigError, match="has no 'absent.yaml'"):
        volumedirs.mount_source(missing, root)
    os.symlink("/etc", os.path.join(scratch, "link"))          # as a container could leave it
    with pytest.raises(VolumeConfigError, match="leads out of the pod's volumes"):
        volumedirs.mount_source(escape, root)


def test_volume_targets_resolve_inside_the_images_root(tmp_path):
    rootfs = tmp_path / "rootfs"
    (rootfs / "run").mkdir(parents=True)
    (rootfs / "var").mkdir()
    (rootfs / "var" / "run").symlink_to("/run")
    (rootfs / "opt").symlink_to("var/run")
    (rootfs / "loop").symlink_to("/loop")
    assert resolve_target(str(rootfs), "/var/run/secrets/x") == "/run/secrets/x"
    assert resolve_target(str(rootfs), "/opt/a") == "/run/a"
    assert resolve_target(str(rootfs), "/tmp/new") == "/tmp/new"
    with pytest.raises(VolumeError, match="too many symbolic links"):
        resolve_target(str(rootfs), "/loop/x")
    with pytest.raises(VolumeError, match="without '..'"):
        resolve_target(str(rootfs), "/tmp/../etc")


# What a kubelet does for a hostPath of each type, by what the path is on the node.
HOST_PATH_STEPS = [
    ("", "missing", "directory"), ("", "file", "mount"), ("", "other", "mount"),
    ("DirectoryOrCreate", "missing", "directory"), ("DirectoryOrCreate", "directory", "mount"),
    ("Directory", "directory", "mount"), ("FileOrCreate", "missing", "file"), ("FileOrCreate", "file", "mount"),
    ("File", "file", "mount"), ("Socket", "socket file", "mount"), ("CharDevice", "character device", "mount"),
    ("BlockDevice", "block device", "mount"),
]
HOST_PATH_REFUSALS = [
    ("Directory", "missing", "/d is not a directory"), ("Directory", "file", "/d is not a directory"),
    ("DirectoryOrCreate", "file", "/d is not a directory"), ("File", "missing", "/d is not a file"),
    ("FileOrCreate", "directory", "/d is not a file"), ("Socket", "file", "/d is not a socket file"),
    ("CharDevice", "missing", "/d is not a character device"), ("BlockDevice", "other", "/d is not a block device"),
]


@pytest.mark.parametrize("host_type,found,step", HOST_PATH_STEPS)
def test_a_host_path_is_mounted_or_made_by_its_type(host_type, found, step):
    assert host_path_step("v", "/d", host_type, found) == step


@pytest.mark.parametrize("host_type,found,message", HOST_PATH_REFUSALS)
def test_a_host_path_not_of_its_type_fails_the_mount_with_the_kubelets_message(host_type, found, message):
    with pytest.raises(MountFailed) as failed:
        host_path_step("v", "/d", host_type, found)
    assert str(failed.value) == f"MountVolume.SetUp failed for volume 'v' : hostPath type check failed: {message}"


def test_a_host_path_of_an_unknown_type_or_a_relative_path_is_refused():
    with pytest.raises(MountFailed, match="Fifo is an invalid volume type"):
        host_path_step("v", "/d", "Fifo", "other")
    for path in ("data", "/a/../etc", ""):
        with pytest.raises(VolumeConfigError, match="absolute path without '..'"):
            pod_volumes(pod({"name": "h", "hostPath": {"path": path}}), lookup)


def test_host_path_mounts_are_writable_unless_read_only_and_take_a_sub_path():
    volumes = pod_volumes(pod({"name": "data", "hostPath": {"path": "/srv/data/", "type": "Directory"}}), lookup)
    assert volumes["data"] == PodVolume("data", "hostPath", host_path="/srv/data", host_type="Directory")
    container = {"name": "main", "volumeMounts": [
        {"name": "data", "mountPath": "/data"},
        {"name": "data", "mountPath": "/in", "subPath": "input", "readOnly": True}]}
    mounts = [(m.source("/pods/v"), m.target, m.read_only) for m in container_mounts(container, volumes, {})]
    assert mounts == [("/srv/data", "/data", False), ("/srv/data/input", "/in", True)]


def test_the_nodes_file_kinds_are_the_ones_host_path_types_check():
    assert set(volumedirs.FILE_KINDS.values()) == set(HOST_PATH_KINDS.values())


def test_host_paths_are_checked_and_made_on_the_node(tmp_path):
    def volume(path, host_type):
        return pod_volumes(pod({"name": "h", "hostPath": {"path": str(path), "type": host_type}}), lookup)["h"]
    made = volumedirs.materialize(volume(tmp_path / "new" / "dir", "DirectoryOrCreate"), "/unused", 4242)
    assert os.path.isdir(made) and os.stat(made).st_gid == 0, "a hostPath is never given to the fsGroup"
    created = volumedirs.materialize(volume(tmp_path / "new" / "file", "FileOrCreate"), "/unused", None)
    assert os.path.isfile(created) and os.path.getsize(created) == 0 and _mode(created) == 0o644
    with pytest.raises(MountFailed, match="cannot make .*absent/file: No such file or directory"):
        volumedirs.materialize(volume(tmp_path / "absent" / "file", "FileOrCreate"), "/unused", None)
    with pytest.raises(MountFailed, match="is not a directory"):
        volumedirs.materialize(volume(tmp_path / "missing", "Directory"), "/unused", None)
    assert not os.path.exists(tmp_path / "missing"), "a Directory hostPath is never made"
    assert volumedirs.materialize(volume(tmp_path / "untyped", ""), "/unused", None) == str(tmp_path / "untyped")
    assert os.path.isdir(tmp_path / "untyped"), "a missing untyped hostPath is made as a directory (the runtime's rule)"


def test_a_host_paths_sub_path_stays_inside_it(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o750)
    (data / "link").symlink_to(tmp_path)
    volumes = pod_volumes(pod({"name": "h", "hostPath": {"path": str(data)}}), lookup)
    [whole, new, escape] = container_mounts({"name": "c", "volumeMounts": [
        {"name": "h", "mountPath": "/a"}, {"name": "h", "mountPath": "/b", "subPath": "new"},
        {"name": "h", "mountPath": "/c", "subPath": "link"}]}, volumes, {})
    assert volumedirs.mount_source(whole, "/unused") == str(data)
    assert volumedirs.mount_source(new, "/unused") == str(data / "new") and _mode(data / "new") == 0o750
    with pytest.raises(VolumeConfigError, match="leads out of its hostPath"):
        volumedirs.mount_source(escape, "/unused")
