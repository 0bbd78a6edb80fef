"""The examples are imported by the oracles (for their input generators): put the
repository root on the path. The text input of the examples that read one."""
import os
import sys

import pytest
from example_runs import write_text_input

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture(scope="session")
def text(tmp_path_factory):
    return write_text_input(tmp_path_factory.mktemp("input") / "text.txt")
