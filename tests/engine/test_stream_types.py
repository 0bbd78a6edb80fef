"""Stream and KeyedStream are generic in their records, and the operations that their
family modules (segflow.api.ops) define are visible to mypy with typed callbacks."""
import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

PIPELINE = textwrap.dedent("""
    import segflow
    env = segflow.StreamEnvironment()
    numbers = env.from_iterable([1, 2, 3])
    reveal_type(numbers.map(str))
    reveal_type(numbers.map(str).group_by(len))
    reveal_type(numbers.map(str).group_by(len).map(lambda key, value: value + "!"))
    reveal_type(numbers.fold(0.5, lambda acc, x: acc + x))
    reveal_type(numbers.map(str).collect().get())
    numbers.map(lambda x: x.upper())
""")


def test_records_and_callbacks_are_typed(tmp_path: Path):
    job = tmp_path / "typed_job.py"
    job.write_text(PIPELINE)
    out, _, _ = mypy_api.run(["--follow-imports=silent", str(job)])     # the project's cache: seconds once warm
    assert 'Revealed type is "segflow.api.stream.Stream[str]"' in out
    assert 'Revealed type is "segflow.api.stream.KeyedStream[int, str]"' in out
    assert out.count("KeyedStream[int, str]") == 2     # a keyed map keeps the key
    assert 'Revealed type is "segflow.api.stream.Stream[float]"' in out
    assert 'Revealed type is "list[str]"' in out
    assert '"int" has no attribute "upper"' in out
