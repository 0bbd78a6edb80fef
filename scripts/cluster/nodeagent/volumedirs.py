"""Writing a pod's volumes (volumes.py) to the node's disk, owned as a kubelet owns them.

Without ``fsGroup`` an emptyDir is a directory anyone may write (0777) and the files of the
other volumes are root's with their modes. With the pod's ``securityContext.fsGroup`` the
kubelet gives every volume to that group: the directories get the set-group-id bit (new
files inherit the group), an emptyDir's files group read-write, the other volumes' files
at least group-readable, so the image's user in that group reads even a 0400 secret.
A hostPath is the node's own path: checked or made per its type (volumes.host_path_step),
never chowned (a kubelet manages no ownership of a hostPath either).
"""
from __future__ import annotations

import os
import stat
import tempfile

from .volumes import HOST_PATH_KINDS, Mount, MountFailed, PodVolume, VolumeConfigError, host_path_step

EMPTY_DIR_MODE = 0o777
FILES_DIR_MODE = 0o755
HOST_DIRECTORY_MODE = 0o755      # as a kubelet makes a DirectoryOrCreate hostPath
HOST_FILE_MODE = 0o644           # and a FileOrCreate one
FILE_KINDS = {stat.S_IFDIR: HOST_PATH_KINDS["Directory"], stat.S_IFREG: HOST_PATH_KINDS["File"],
              stat.S_IFSOCK: HOST_PATH_KINDS["Socket"], stat.S_IFCHR: HOST_PATH_KINDS["CharDevice"],
              stat.S_IFBLK: HOST_PATH_KINDS["BlockDevice"]}


def _own(path: str, fs_group: int | None, extra: int) -> None:
    """Give ``path`` to ``fs_group`` with the bits ``extra`` added (directories also set-gid and searchable)."""
    if fs_group is None:
        return
    os.chown(path, -1, fs_group, follow_symlinks=False)
    mode = stat.S_IMODE(os.lstat(path).st_mode) | extra
    if os.path.isdir(path):
        mode |= stat.S_ISGID | stat.S_IXUSR | stat.S_IXGRP
    os.chmod(path, mode)


def _write(path: str, content: bytes, mode: int) -> None:
    """Replace ``path`` whole (a reader never sees half a file)."""
    descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".writing-")
    with os.fdopen(descriptor, "wb") as f:
        f.write(content)
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def found_kind(path: str) -> str:
    """What ``path`` is on the node, symbolic links followed: ``missing``, a value of
    FILE_KINDS, or ``other`` (a FIFO)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    return FILE_KINDS.get(stat.S_IFMT(mode), "other")


def host_path(volume: PodVolume) -> str:
    """A hostPath volume's path, made first when its type says so (host_path_step)."""
    path = volume.host_path
    step = host_path_step(volume.name, path, volume.host_type, found_kind(path))
    try:
        if step == "directory":
            os.makedirs(path, mode=HOST_DIRECTORY_MODE, exist_ok=True)
        elif step == "file":
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, HOST_FILE_MODE))
    except OSError as exc:
        raise MountFailed(volume.name, f"cannot make {path}: {exc.strerror}") from exc
    return path


def materialize(volume: PodVolume, root: str, fs_group: int | None) -> str:
    """Make ``volume``'s directory under the pod's volumes directory ``root`` and return it.
    An emptyDir made before is kept as it is (its contents outlive container restarts);
    the other volumes' files are written anew; a hostPath is checked (and made) on the node."""
    if volume.kind == "hostPath":
        return host_path(volume)
    directory = volume.directory(root)
    if volume.writable:
        if not os.path.isdir(directory):
            os.makedirs(directory)
            os.chmod(directory, EMPTY_DIR_MODE)
            _own(directory, fs_group, 0o660)
        return directory
    os.makedirs(directory, exist_ok=True)
    os.chmod(directory, FILES_DIR_MODE)
    _own(directory, fs_group, 0o440)
    for file in volume.files:
        path = os.path.join(directory, file.path)
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent, mode=FILES_DIR_MODE)
            _own(parent, fs_group, 0o440)
        _write(path, file.content, file.mode)
        _own(path, fs_group, 0o440)
    return directory


def _inside(path: str, base: str) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(base).rstrip(os.sep) + os.sep)


def mount_source(mount: Mount, root: str) -> str:
    """The host path of ``mount`` (a volume's directory, or a ``subPath`` in it), which must
    lie inside the pod's volumes directory ``root`` (a hostPath's ``subPath``: inside that
    path) once symbolic links are followed: a container could have left a link in an
    emptyDir or a hostPath pointing anywhere on the node. A ``subPath`` missing from an
    emptyDir or a hostPath becomes a directory with the volume's mode, as the kubelet
    makes it."""
    source = mount.source(root)
    host = mount.volume.kind == "hostPath"
    if (mount.sub_path or not host) and not _inside(source, mount.volume.directory(root) if host else root):
        where = "its hostPath" if host else "the pod's volumes"
        raise VolumeConfigError(f"volume {mount.volume.name!r} subPath {mount.sub_path!r} leads out of {where} "
                                f"(a symbolic link?): use a plain file or directory of the volume")
    if not os.path.lexists(source):
        if not mount.volume.writable:
            raise VolumeConfigError(f"volume {mount.volume.name!r} has no {mount.sub_path!r} (subPath): name a key "
                                    f"or item path of the volume")
        os.makedirs(source)
        os.chmod(source, stat.S_IMODE(os.stat(mount.volume.directory(root)).st_mode))   # the kubelet's rule
    return source
