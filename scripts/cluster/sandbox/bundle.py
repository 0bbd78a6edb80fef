"""An unpacked image (scripts/images/build.sh): ``rootfs/`` and ``image.json``, the image's
OCI config (entrypoint, cmd, env, user, working directory)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any


class BundleError(FileNotFoundError):
    """The directory is not an unpacked image."""


@dataclass(frozen=True)
class Bundle:
    path: str

    @property
    def rootfs(self) -> str:
        return os.path.join(self.path, "rootfs")

    def image(self) -> dict[str, Any]:
        """The image's config (OCI ``config`` object)."""
        try:
            with open(os.path.join(self.path, "image.json")) as f:
                return dict(json.load(f))
        except FileNotFoundError:
            raise BundleError(f"{self.path} has no image.json: it is not a bundle of scripts/images/build.sh "
                              f"(run `make images`)") from None

    def read(self, path: str) -> str:
        """A text file of the image (``/etc/passwd``, say); empty when the image lacks it."""
        try:
            with open(os.path.join(self.rootfs, path.lstrip("/"))) as f:
                return f.read()
        except FileNotFoundError:
            return ""
