"""The command-line reference, read from segflow's argument parser: every command and
subcommand, and each of their options with its value, default and help, so the page
lists exactly what ``segflow`` accepts.

argparse keeps its commands and groups in attributes without a public accessor
(``_actions``, ``_action_groups``, ``_SubParsersAction``); they have been stable since
Python 3.2, and the tests would show a change as a page that lost its options.
"""
from __future__ import annotations

import argparse
from typing import Iterator

from .markdown import cell, code, generated_note, table

_NO_DEFAULT = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction,
               argparse._AppendConstAction, argparse._CountAction, argparse._HelpAction, argparse._VersionAction)


def commands(parser: argparse.ArgumentParser,
             path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """``(command path, its help, its parser)`` for the parser itself (path ``()``) and
    every subcommand under it, depth first in the order they were added."""
    yield path, "", parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                for subpath, text, subparser in commands(sub, path + (name,)):
                    yield subpath, text or helps.get(name, ""), subparser


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """The options and positionals a parser takes itself (help and subcommands apart):
    what its section of the page must name."""
    return [name for action in _arguments(parser) for name in (action.option_strings or [action.dest])]


def cli_markdown(parser: argparse.ArgumentParser) -> str:
    """The page: one section per command, its arguments in one table (argparse's
    positionals and options together), then one table per named argument group."""
    prog = parser.prog
    lines = [generated_note("segflow's argument parser (segflow/cli/main.py)"), "", "# Command line", "",
             cell(parser.description or ""), "",
             f"Every command also takes `-h`/`--help`; `{prog} COMMAND --help` prints its part of this page.", ""]
    for path, text, sub in commands(parser):
        lines += [f"{'#' * max(2, len(path) + 1)} `{' '.join((prog, *path))}`", ""]
        if text:
            lines += [cell(text[0].upper() + text[1:]) + ".", ""]
        mine = _arguments(sub)
        defaults = [a for g in sub._action_groups[:2] for a in g._group_actions if a in mine]
        groups: list[tuple[str | None, list[argparse.Action]]] = [(None, defaults)]
        groups += [(g.title, [a for a in g._group_actions if a in mine]) for g in sub._action_groups[2:]]
        for title, actions in groups:
            if actions:
                lines += [f"**{cell(title)}**", ""] if title else []
                lines += table(["Argument", "Value", "Default", "Description"], (_row(a) for a in actions)) + [""]
    return "\n".join(lines)


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and a.help != argparse.SUPPRESS]


def _row(action: argparse.Action) -> list[str]:
    names = ", ".join(code(name) for name in action.option_strings) or code(action.dest)
    if action.required and action.option_strings:
        names += " (required)"
    return [names, _value(action), _default(action), cell(action.help or "")]


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        value = "{" + ",".join(str(choice) for choice in action.choices) + "}"
    elif action.metavar or action.option_strings:
        value = str(action.metavar or action.dest.upper())
    else:
        return ""
    if action.nargs in ("+", "*"):
        value += " ..."
    if action.nargs == "?":
        value = f"[{value}]"
    return code(value)


def _default(action: argparse.Action) -> str:
    """A default worth showing: a plain value that is not the absence of one (an object,
    such as a settings record, is described by the help text instead)."""
    default = action.default
    if isinstance(action, _NO_DEFAULT) or default in (None, argparse.SUPPRESS, [], ""):
        return ""
    if isinstance(default, (str, int, float)):
        return code(default)
    return ""
