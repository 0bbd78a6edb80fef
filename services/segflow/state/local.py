"""State in a local directory: one file per key, written atomically by rename.

A key is written to a temporary file first, named after its writer (host and pid). A
writer killed mid-write (a worker SIGKILLed, or SIGTERMed when its job ends) leaves its
temporary behind; a delete that empties a directory removes such orphans too, so a
deleted checkpoint leaves no directory holding only a dead writer's half-written part.
"""
from __future__ import annotations

import errno
import os
import socket
import tempfile
from typing import Iterable
from urllib.parse import unquote, urlparse

from ..errors import SegflowError
from .backend import StateBackend, StateStoreError


class LocalBackend(StateBackend):
    def __init__(self, url: str):
        parsed = urlparse(url)
        root = unquote(parsed.path)
        if parsed.netloc not in ("", "localhost") or not root.startswith("/"):
            raise SegflowError(f"file state URLs need an absolute path, like file:///var/segflow (got {url!r})")
        self.url = url
        self.root = root
        try:
            os.makedirs(root, exist_ok=True)
        except OSError as exc:
            raise StateStoreError(f"cannot create the state directory {root}: {exc}") from exc

    def _path(self, key: str) -> str:
        if key.startswith("/") or ".." in key.split("/"):
            raise ValueError(f"bad state key {key!r}")
        return os.path.join(self.root, key)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        try:
            fd, temporary = _temporary_file(os.path.dirname(path))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, path)
        except OSError as exc:
            raise StateStoreError(f"cannot write {path}: {exc}") from exc

    def get(self, key: str) -> bytes | None:
        try:
            with open(self._path(key), "rb") as f:
                return f.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None   # no key here (the path may be a prefix of keys, or run through one)
        except OSError as exc:
            raise StateStoreError(f"cannot read {key} under {self.root}: {exc}") from exc

    def list(self, prefix: str) -> list[str]:
        keys = []
        for directory, _dirs, files in os.walk(self.root):
            for name in files:
                if name.startswith(TEMPORARY_PREFIX):
                    continue
                key = os.path.relpath(os.path.join(directory, name), self.root).replace(os.sep, "/")
                if key.startswith(prefix):
                    keys.append(key)
        return sorted(keys)

    def delete(self, keys: Iterable[str]) -> None:
        """Remove the keys, then the directories that held them if that left them empty
        (a deleted checkpoint leaves no empty directory behind)."""
        parents = set()
        for key in keys:
            _remove(self._path(key))
            parents.add(os.path.dirname(self._path(key)))
        for parent in parents - {self.root}:
            for orphan in _orphaned_temporaries(parent):
                _remove(orphan)
            try:
                os.rmdir(parent)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                    raise StateStoreError(f"cannot remove the directory {parent}: {exc}") from exc


TEMPORARY_PREFIX = ".tmp-"


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StateStoreError(f"cannot delete {path}: {exc}") from exc


def _writer_prefix(host: str, pid: int) -> str:
    return f"{TEMPORARY_PREFIX}{host}-{pid}-"


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:         # alive, another user's
        return False
    return False


def _orphaned_temporaries(directory: str) -> list[str]:
    """The temporaries in ``directory`` whose writer ran on this host and has exited: no
    rename will ever make them a key. A writer of another host (a shared volume) may still
    be alive, so its temporaries stay."""
    host = socket.gethostname()
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    orphans = []
    for name in names:
        writer = name[len(TEMPORARY_PREFIX):].rsplit("-", 2) if name.startswith(TEMPORARY_PREFIX) else []
        if len(writer) == 3 and writer[0] == host and writer[1].isdigit() and _process_gone(int(writer[1])):
            orphans.append(os.path.join(directory, name))
    return orphans


def _temporary_file(directory: str, attempts: int = 5) -> tuple[int, str]:
    """A new temporary file in ``directory``, which is created first. A delete in another
    process removes the directories it empties, so the directory can vanish between its
    creation and the file's, or inside ``os.makedirs`` between its ``mkdir`` and its check
    that the directory is there: a worker writing a pending window's next part while the
    coordinator truncates the older parts of that replica. Then it is created again."""
    failed = 0
    while True:
        try:
            os.makedirs(directory, exist_ok=True)     # FileExistsError: it vanished inside makedirs
            return tempfile.mkstemp(dir=directory, prefix=_writer_prefix(socket.gethostname(), os.getpid()))
        except (FileNotFoundError, FileExistsError):
            failed += 1
            if failed == attempts:
                raise
