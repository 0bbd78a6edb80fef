"""Writing a pod's volumes (volumes.py) to the node's disk, owned as a kubelet owns them.

Without ``fsGroup`` an emptyDir is a directory anyone may write (0777) and the files of the
other volumes are root's with their modes. With the pod's ``securityContext.fsGroup`` the
kubelet gives every volume to that group: the directories get the set-group-id bit (new
files inherit the group), an emptyDir's files group read-write, the other volumes' files
at least group-readable, so the image's user in that group reads even a 0400 secret.
"""
from __future__ import annotations

import os
import stat
import tempfile

from .volumes import Mount, PodVolume, VolumeConfigError

EMPTY_DIR_MODE = 0o777
FILES_DIR_MODE = 0o755


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


def materialize(volume: PodVolume, root: str, fs_group: int | None) -> str:
    """Make ``volume``'s directory under the pod's volumes directory ``root`` and return it.
    An emptyDir made before is kept as it is (its contents outlive container restarts);
    the other volumes' files are written anew."""
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


def mount_source(mount: Mount, root: str) -> str:
    """The host path of ``mount`` (a volume's directory, or a ``subPath`` in it), which must
    lie inside the pod's volumes directory ``root`` once symbolic links are followed: a
    container could have left a link in an emptyDir pointing anywhere on the node. A
    ``subPath`` missing from an emptyDir becomes a directory with the volume's mode, as
    the kubelet makes it."""
    source = mount.source(root)
    if not os.path.realpath(source).startswith(os.path.realpath(root) + os.sep):
        raise VolumeConfigError(f"volume {mount.volume.name!r} subPath {mount.sub_path!r} leads out of the pod's "
                                f"volumes (a symbolic link?): use a plain file or directory of the volume")
    if not os.path.lexists(source):
        if not mount.volume.writable:
            raise VolumeConfigError(f"volume {mount.volume.name!r} has no {mount.sub_path!r} (subPath): name a key "
                                    f"or item path of the volume")
        os.makedirs(source)
        os.chmod(source, stat.S_IMODE(os.stat(mount.volume.directory(root)).st_mode))   # the kubelet's rule
    return source
