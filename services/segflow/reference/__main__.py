"""``python -m segflow.reference --write | --check [--root DIR]``: rewrite the generated
pages, or say which differ from what the code generates (exit 1). ``make docs-reference``
runs ``--write``; tests/docs/test_reference.py does what ``--check`` does."""
from __future__ import annotations

import argparse
import os
import sys

from .pages import differing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m segflow.reference", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the generated pages that differ")
    mode.add_argument("--check", action="store_true", help="exit 1 if a generated page differs from the code's")
    parser.add_argument("--root", default=ROOT, help="the repository (default: this checkout)")
    args = parser.parse_args(argv)
    stale = differing(args.root)
    for path, text in stale.items():
        if args.write:
            os.makedirs(os.path.dirname(os.path.join(args.root, path)), exist_ok=True)
            with open(os.path.join(args.root, path), "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {path}")
        else:
            print(f"{path} differs from what the code generates; `make docs-reference` regenerates it",
                  file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
