"""What a container's process is (argv, environment, user, working directory): a pure
function of the image's OCI config and the pod's container spec, by the rules of Kubernetes
and the OCI image spec, so that they are tested without a container."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nodeagent.podspec import expand

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class ImageConfigError(ValueError):
    """The image and the container spec together do not say what to run, or as whom."""


@dataclass(frozen=True)
class Process:
    """A container's main process, as the runtime starts it inside the image's root."""
    argv: list[str]
    env: dict[str, str]
    uid: int
    gid: int
    cwd: str
    groups: tuple[int, ...] = ()       # supplementary groups


def image_env(image: dict[str, Any]) -> dict[str, str]:
    """The image's ``Env`` (``NAME=value`` strings) as a mapping; PATH defaults as in Docker."""
    env = {"PATH": DEFAULT_PATH}
    for item in image.get("Env") or []:
        name, _, value = item.partition("=")
        env[name] = value
    return env


def _table(text: str) -> dict[str, list[str]]:
    """/etc/passwd or /etc/group: name -> fields (name first)."""
    rows = (line.split(":") for line in text.splitlines() if line and not line.startswith("#"))
    return {row[0]: row for row in rows if len(row) >= 3}


def _id(name: str, table: dict[str, list[str]], kind: str) -> int:
    """A user or group id, numeric or by name from the image's /etc/passwd or /etc/group."""
    if name.isdigit():
        return int(name)
    if name not in table:
        files = {"user": "/etc/passwd", "group": "/etc/group"}
        raise ImageConfigError(f"{kind} {name!r} is not in the image's {files[kind]}: give a numeric {kind} in the "
                               f"Dockerfile's USER or securityContext.runAs{kind.title()}")
    return int(table[name][2])


def user_of(image: dict[str, Any], security: dict[str, Any], passwd_text: str,
            group_text: str) -> tuple[int, int]:
    """``securityContext.runAsUser``/``runAsGroup`` over the image's ``User`` (``uid``,
    ``uid:gid``, ``name`` or ``name:group``). A group not given with the user in force is
    that user's primary group in the image's /etc/passwd, else 0 (containerd's rule: a
    ``runAsUser`` drops the image's group too). No user at all is root."""
    passwd, groups = _table(passwd_text), _table(group_text)
    user, _, group = (image.get("User") or "").partition(":")
    if security.get("runAsUser") is not None:
        uid, group = int(security["runAsUser"]), ""
    else:
        uid = _id(user or "0", passwd, "user")
    if security.get("runAsGroup") is not None:
        return uid, int(security["runAsGroup"])
    if group:
        return uid, _id(group, groups, "group")
    primary = next((int(row[3]) for row in passwd.values() if len(row) > 3 and row[2] == str(uid)), 0)
    return uid, primary


def groups_of(uid: int, gid: int, security: dict[str, Any], passwd_text: str, group_text: str) -> tuple[int, ...]:
    """The supplementary groups, as containerd gives them: the user's groups in the image's
    /etc/group (by the user's name), then the pod's ``supplementalGroups`` and ``fsGroup``
    (so the user reads and writes volumes given to the fsGroup)."""
    names = {row[0] for row in _table(passwd_text).values() if row[2] == str(uid)}
    member = [int(row[2]) for row in _table(group_text).values()
              if len(row) > 3 and names & set(row[3].split(","))]
    wanted = [*member, *(security.get("supplementalGroups") or []),
              *([security["fsGroup"]] if security.get("fsGroup") is not None else [])]
    return tuple(dict.fromkeys(int(g) for g in wanted if int(g) != gid))


def _home(uid: int, passwd_text: str) -> str:
    return next((row[5] for row in _table(passwd_text).values() if len(row) > 5 and row[2] == str(uid)), "/")


def process_of(image: dict[str, Any], container: dict[str, Any], pod_env: dict[str, str],
               passwd_text: str = "", group_text: str = "", pod_security: dict[str, Any] | None = None) -> Process:
    """The container's process. ``command`` replaces the image's ``Entrypoint`` (and drops its
    ``Cmd``), ``args`` replace ``Cmd``; both are ``$(VAR)``-expanded with the pod's
    variables. The environment is the image's overlaid with the pod's; HOME is the user's
    home from /etc/passwd unless set. ``workingDir`` replaces ``WorkingDir``."""
    if container.get("command"):
        argv = list(container["command"]) + list(container.get("args") or [])
    else:
        argv = list(image.get("Entrypoint") or []) + list(container.get("args") or image.get("Cmd") or [])
    if not argv:
        raise ImageConfigError(f"container {container.get('name')!r}: neither the container spec nor the image "
                               f"{container.get('image')!r} says what to run (no command, entrypoint or cmd)")
    argv = [expand(arg, pod_env) for arg in argv]
    security = {**(pod_security or {}), **(container.get("securityContext") or {})}
    uid, gid = user_of(image, security, passwd_text, group_text)
    env = {**image_env(image), **pod_env}
    env.setdefault("HOME", _home(uid, passwd_text))
    return Process(argv, env, uid, gid, container.get("workingDir") or image.get("WorkingDir") or "/",
                   groups_of(uid, gid, security, passwd_text, group_text))
