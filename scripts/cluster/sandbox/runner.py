"""Starting a container from a bundle: ``ip netns exec`` into the caller's network
namespace, ``unshare`` new mount, pid, UTS and IPC namespaces, and there a short setup
script (host tools, by absolute path) that mounts the image's root filesystem under a
writable overlay layer of the container's own, ``/proc``, ``/sys`` and a minimal ``/dev``,
sets the hostname, and runs the container's process in it (chroot) as the image's user with
the pod's groups. Nothing of the host's filesystem is mounted inside unless a caller's volume
puts it there.

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
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import IO

from .bundle import Bundle
from .process import Process

# $1.. = lower upper work merged hostname uid gid groups (comma-separated) cwd, the host's
# Python and ENTER (below), the number of volumes and for each its source, target and mode (rw or ro), then
# the container's argv. PATH is the container's (for execvp inside the root), so host tools
# are named by absolute path.
SETUP = r"""
set -eu
lower=$1 upper=$2 work=$3 merged=$4 name=$5 uid=$6 gid=$7 groups=$8 cwd=$9 python=${10} enter=${11}
volumes=${12}
shift 12
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
/usr/bin/env --default-signal=INT,QUIT "$python" -I -S -c "$enter" "$merged" "$cwd" "$uid" "$gid" "$groups" "$@" &
code=0
wait $! || code=$?
exit $code
"""
# The last step, in the host's Python (given its path: it runs before the root changes):
# util-linux's ``unshare --setuid`` clears the supplementary groups and cannot set them, but
# a pod's fsGroup must be one. A command that cannot be run exits 127, as from a shell.
ENTER = r"""
import os, sys, warnings    # execvp imports warnings: after the chroot the host's modules are gone
root, cwd, uid, gid, groups, *argv = sys.argv[1:]
os.chroot(root)
os.chdir(cwd)
os.setgroups([int(g) for g in groups.split(",") if g])
os.setgid(int(gid))
os.setuid(int(uid))
try:
    os.execvp(argv[0], argv)
except OSError as exc:
    print(f"segflow sandbox: cannot run {argv[0]!r} in the container: {exc.strerror}", file=sys.stderr)
    sys.exit(127)
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


MAX_LINKS = 40      # as the kernel's path walk


def resolve_target(rootfs: str, target: str) -> str:
    """``target`` with the image's symbolic links on its way resolved inside the image's
    root, as runtimes do (``/var/run/secrets`` is ``/run/secrets`` when /var/run links to
    /run): the setup script's ``mkdir -p`` and ``mount`` would otherwise follow an absolute
    link out of the container's root into the host's."""
    if not target.startswith("/") or ".." in target.split("/"):
        raise VolumeError(f"volume target {target!r} must be an absolute path without '..'")
    pending, links = [p for p in target.split("/") if p], 0
    resolved: list[str] = []
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            resolved = resolved[:-1]
            continue
        path = os.path.join(rootfs, *resolved, part)
        if not os.path.islink(path):
            resolved.append(part)
            continue
        links += 1
        if links > MAX_LINKS:
            raise VolumeError(f"volume target {target!r}: too many symbolic links in the image on its way")
        link = os.readlink(path)
        if link.startswith("/"):
            resolved = []
        pending = [p for p in link.split("/") if p] + pending
    return "/" + "/".join(resolved)


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
            ",".join(map(str, process.groups)), process.cwd, sys.executable, ENTER, str(len(volumes)), *mounts,
            *process.argv]


def container_init(pid: int) -> int:
    """The container's pid 1 (in the host's pid namespace): the one child of the outer
    ``unshare --fork`` process ``pid`` that :func:`start` or the node agent started."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        children = f.read().split()
    if len(children) != 1:
        raise ProcessLookupError(f"process {pid} has {len(children)} children, not the container's one pid 1")
    return int(children[0])


def enter_command(init: int, merged: str, process: Process, argv: Sequence[str]) -> list[str]:
    """The host command that runs ``argv`` inside a running container (an exec probe): in
    the namespaces of its pid 1 ``init`` (whose mount namespace still sees the host's root,
    with the container's at ``merged``), then the runner's last step, as the container's
    user with its groups, in its working directory. Run it with the container's environment."""
    return ["nsenter", f"--target={init}", "--mount", "--uts", "--ipc", "--net", "--pid", "--",
            sys.executable, "-I", "-S", "-c", ENTER, merged, process.cwd, str(process.uid), str(process.gid),
            ",".join(map(str, process.groups)), *argv]


def prepare(bundle: Bundle, directory: str, volumes: Sequence[Volume] = ()) -> tuple[Layout, list[Volume]]:
    """Make the container's writable layer's directories; the volumes with their targets
    resolved inside the image's root (:func:`resolve_target`), parents before what lies
    under them (mounted in that order, a parent would otherwise hide its children)."""
    layout = Layout(directory)
    for path in (layout.upper, layout.work, layout.merged):
        os.makedirs(path, exist_ok=True)
    resolved = [replace(v, target=resolve_target(bundle.rootfs, v.target)) for v in volumes]
    return layout, sorted(resolved, key=lambda v: v.target.count("/"))


def start(bundle: Bundle, process: Process, netns: str, directory: str, hostname: str,
          output: IO[bytes] | int | None = None, volumes: Sequence[Volume] = ()) -> subprocess.Popen[bytes]:
    """Start the container (its writable layer under ``directory``, which must be new or
    empty); stdout and stderr go to ``output``. Stop it with :func:`kill`."""
    layout, resolved = prepare(bundle, directory, volumes)
    return subprocess.Popen(command_line(bundle.rootfs, process, netns, layout, hostname, resolved), env=process.env,
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
