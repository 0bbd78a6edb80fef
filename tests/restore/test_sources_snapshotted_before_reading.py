"""File sources snapshotted before they first read (at the start, or right after a restore
when the source has not polled yet) keep their position: found by the restore property."""
import pickle

from segflow.runtime.operators.sources import CsvSource, TextFileSource

from .drive import Placement, Recorder, context


def opened(source, placement, state=None):
    if state is not None:
        source.restore(pickle.loads(pickle.dumps(state)))
    source.open(context(Recorder(), placement))
    return source


def read_all(source) -> list:
    items = []
    while (batch := source.poll(10)) is not None:
        items.extend(batch.items)
    return items


def test_a_text_source_snapshotted_before_reading_resumes_at_its_range_start(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("one\ntwo\nthree\nfour\n")
    for index in (0, 1):
        placement = Placement(index, 2)
        whole = read_all(opened(TextFileSource(str(path)), placement))
        untouched = opened(TextFileSource(str(path)), placement).snapshot()
        restored = opened(TextFileSource(str(path)), placement, untouched)
        again = opened(TextFileSource(str(path)), placement, restored.snapshot())
        assert read_all(again) == whole, f"replica {index}"


def test_a_csv_source_restored_before_reading_its_header_still_skips_it(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("x,y\n1,2\n")
    untouched = opened(CsvSource(str(path), ",", True), Placement()).snapshot()
    restored = opened(CsvSource(str(path), ",", True), Placement(), untouched)
    assert read_all(restored) == [{"x": "1", "y": "2"}]
