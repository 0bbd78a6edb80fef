"""Starting a container from a bundle: ``ip netns exec`` into the caller's network
namespace, ``unshare`` new mount, pid, UTS and IPC namespaces, and there a short setup
script (host tools, by absolute path) that mounts the image's root filesystem under a
writable overlay layer of the container's own, ``/proc``, ``/sys`` and a minimal ``/dev``,
sets the hostname, and runs ``unshare --root`` into it as the image's user. Nothing
of the host's filesystem is mounted inside unless a caller's volume puts it there.

The setup script stays as the pid namespace's init and waits for the container's process,
exiting with its status (128 + the signal's number for a killed one, as a kubelet reports
it): were the container's process that init itself, the outer ``unshare --fork`` would
report a SIGKILLed container as exit 1 ("sigprocmask unblock failed: Invalid argument",
util-linux 2.38 re-raising SIGKILL). Started in the background, it gets SIGINT and SIGQUIT
back to their defaults (``env --default-signal``), which a shell ignores for background
commands. The init ignores SIGTERM (no handler), so a SIGTERM to the container's process
group reaches the container's process alone.

crun from Debian would do the same from the bundle's config.json, but refuses here:
"cgroups in hybrid mode not supported" with ``--cgroup-manager=disabled``
(docs/architecture/images.md).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from .bundle import Bundle
from .process import Process

# $1.. = lower upper work merged hostname uid gid cwd, the number of volumes and for each its
# source, target and mode (rw or ro), then the container's argv. PATH is the container's (for
# execvp inside the root), so host tools are named by absolute path.
SETUP = r"""
set -eu
lower=$1 upper=$2 work=$3 merged=$4 name=$5 uid=$6 gid=$7 cwd=$8 volumes=$9
shift 9
/usr/bin/mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$merged"
while [ "$volumes" -gt 0 ]; do
    source=$1 target=$merged$2 mode=$3
    shift 3
    if [ -d "$source" ]; then
        /usr/bin/mkdir -p "$target"
    else
        /usr/bin/mkdir -p "${target%/*}"
        [ -e "$target" ] || : > "$target"
    fi
    /usr/bin/mount --bind "$source" "$target"
    [ "$mode" = rw ] || /usr/bin/mount -o remount,bind,ro "$target"
    volumes=$((volumes - 1))
done
/usr/bin/mount -t proc -o nosuid,nodev,noexec proc "$merged/proc"
/usr/bin/mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$merged/sys"
/usr/bin/mount -t tmpfs -o nosuid,mode=755 dev "$merged/dev"
for device in null zero full random urandom tty; do
    : > "$merged/dev/$device"
    /usr/bin/mount --bind "/dev/$device" "$merged/dev/$device"
done
/usr/bin/mkdir "$merged/dev/shm" "$merged/dev/pts"
/usr/bin/mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$merged/dev/shm"
/usr/bin/ln -s /proc/self/fd "$merged/dev/fd"
/usr/bin/ln -s /proc/self/fd/0 "$merged/dev/stdin"
/usr/bin/ln -s /proc/self/fd/1 "$merged/dev/stdout"
/usr/bin/ln -s /proc/self/fd/2 "$merged/dev/stderr"
/usr/bin/hostname "$name"
/usr/bin/env --default-signal=INT,QUIT \
    /usr/bin/unshare --root="$merged" --wd="$cwd" --setgid="$gid" --setuid="$uid" -- "$@" &
code=0
wait $! || code=$?
exit $code
"""


@dataclass(frozen=True)
class Volume:
    """A host file or directory bind-mounted into the container (an ``emptyDir``, a rendered
    ``configMap``): the only way anything of the host gets in."""
    source: str
    target: str
    read_only: bool = False


class ContainerStuck(RuntimeError):
    """A container's processes did not end after SIGKILL."""


class VolumeError(ValueError):
    """A volume's target cannot be mounted safely."""


def check_target(rootfs: str, target: str) -> None:
    """Refuse a volume target under a symbolic link of the image: the setup script's
    ``mkdir -p`` and ``mount`` would follow an absolute link out of the container's root
    into the host's (runtimes resolve such links inside the root; this one does not)."""
    if not target.startswith("/") or ".." in target.split("/"):
        raise VolumeError(f"volume target {target!r} must be an absolute path without '..'")
    path = rootfs
    for part in target.strip("/").split("/"):
        path = os.path.join(path, part)
        if os.path.islink(path):
            raise VolumeError(f"volume target {target!r} lies under the image's symbolic link "
                              f"{path[len(rootfs):]!r}: mount it at the link's destination instead")


@dataclass(frozen=True)
class Layout:
    """Where a container's writable layer lives on the host (the caller's state directory)."""
    directory: str

    @property
    def upper(self) -> str:
        return os.path.join(self.directory, "upper")

    @property
    def work(self) -> str:
        return os.path.join(self.directory, "work")

    @property
    def merged(self) -> str:
        return os.path.join(self.directory, "root")


def command_line(rootfs: str, process: Process, netns: str, layout: Layout, hostname: str,
                 volumes: Sequence[Volume] = ()) -> list[str]:
    """The host command that runs ``process`` as a container. ``--kill-child`` takes the
    container's pid 1 (and with it its pid namespace) down with the outer process."""
    mounts = [word for volume in volumes for word in (volume.source, volume.target, "ro" if volume.read_only else "rw")]
    return ["ip", "netns", "exec", netns,
            "unshare", "--mount", "--pid", "--uts", "--ipc", "--fork", "--kill-child", "--propagation", "private",
            "--", "/bin/sh", "-c", SETUP, "sandbox-setup",
            rootfs, layout.upper, layout.work, layout.merged, hostname, str(process.uid), str(process.gid),
            process.cwd, str(len(volumes)), *mounts, *process.argv]


def prepare(bundle: Bundle, directory: str, volumes: Sequence[Volume] = ()) -> Layout:
    """Check the volumes' targets and make the container's writable layer's directories."""
    for volume in volumes:
        check_target(bundle.rootfs, volume.target)
    layout = Layout(directory)
    for path in (layout.upper, layout.work, layout.merged):
        os.makedirs(path, exist_ok=True)
    return layout


def start(bundle: Bundle, process: Process, netns: str, directory: str, hostname: str,
          output: IO[bytes] | int | None = None, volumes: Sequence[Volume] = ()) -> subprocess.Popen[bytes]:
    """Start the container (its writable layer under ``directory``, which must be new or
    empty); stdout and stderr go to ``output``. Stop it with :func:`kill`."""
    layout = prepare(bundle, directory, volumes)
    return subprocess.Popen(command_line(bundle.rootfs, process, netns, layout, hostname, volumes), env=process.env,
                            stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT if output else None,
                            start_new_session=True)


def kill(container: subprocess.Popen[bytes], timeout: float = 10.0) -> int:
    """SIGKILL the container's process group (the outer process and the container's pid 1,
    whose end ends every process of its pid namespace), reap it, and wait until the kernel
    has taken the rest of the group away too; the container's exit code."""
    try:
        os.killpg(container.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    code = container.wait()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(container.pid, 0)
        except ProcessLookupError:
            return code
        time.sleep(0.02)
    raise ContainerStuck(f"processes of the container in process group {container.pid} outlived SIGKILL by "
                         f"{timeout:g} s: see `ps -g {container.pid}`")
