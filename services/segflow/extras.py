"""Optional parts of segflow and the packages they need (``pip install 'segflow[EXTRA]'``).

The core (the engine, local and distributed runs, file state) needs none of them; each
store, connector and engine below imports its package only when a job uses it, through
:func:`require`, so that a missing one is a clear error saying what to install.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from .errors import SegflowError

EXTRAS = {"redis": "redis", "boto3": "s3", "botocore": "s3", "pyspark": "spark", "pyarrow": "columnar",
          "kopf": "kubernetes", "kubernetes": "kubernetes"}


class MissingExtra(SegflowError):
    """A feature's package is not installed."""


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` (a package of :data:`EXTRAS`, or one of its modules) for ``what``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = EXTRAS[module.split(".")[0]]
        raise MissingExtra(f"{what} needs the {module.split('.')[0]} package, which is not installed: "
                           f"pip install 'segflow[{extra}]' (or 'segflow[all]')") from exc
