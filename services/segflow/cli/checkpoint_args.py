"""The options of ``segflow checkpoints``: apart from the command (:mod:`.checkpoints`) so
that building segflow's command line does not import the state store and its catalog."""
from __future__ import annotations

import argparse

from ..runtime.elements import FINAL_CHECKPOINT, FINAL_NAME


def add_command(commands) -> None:
    group = commands.add_parser("checkpoints", help="list, show or remove the checkpoints in a state store")
    actions = group.add_subparsers(dest="action", required=True)
    for name, text in (("ls", "the checkpoints of every job (or of --job)"),
                       ("show", "one checkpoint: its record and its objects"),
                       ("rm", "remove checkpoints (savepoints too, when named)")):
        action = actions.add_parser(name, help=text)
        action.add_argument("--state", required=True, metavar="URL",
                            help="file:///dir, redis://host:port/db or s3://bucket/prefix")
        action.add_argument("--s3-endpoint", default=None, metavar="URL", help="S3 endpoint for s3:// stores")
        action.add_argument("--job", required=name != "ls", metavar="NAME",
                            help="the job's name in the store" + (" (default: every job)" if name == "ls" else ""))
        if name == "show":
            action.add_argument("id", type=checkpoint_or_line,
                                help=f"the checkpoint's id (or final; {LINE}: the stored stable line of an "
                                     "uncoordinated job)")
        elif name == "rm":
            action.add_argument("ids", nargs="+", type=checkpoint_id, metavar="ID",
                                help="the checkpoints' ids (or final)")


LINE = "line"        # what ``ls`` calls an uncoordinated job's stored stable line


def checkpoint_or_line(text: str) -> int | str:
    """What ``show`` takes: a checkpoint as ``ls`` shows it, or ``line``."""
    return LINE if text == LINE else checkpoint_id(text)


def checkpoint_id(text: str) -> int:
    """A checkpoint as ``ls`` shows it: its id, or ``final`` (the job's end)."""
    if text == FINAL_NAME:
        return FINAL_CHECKPOINT
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a checkpoint id or 'final', not {text!r}") from None
