"""A replica's inbox: bounded in messages and in records (back-pressure), and, for a
replica restored as finished, reading nothing more, so senders restored behind it (segment
backup resends what it already holds) must never wait for room."""
import threading
import time

from segflow.runtime.channels import Inbox
from segflow.runtime.elements import Batch, Watermark


def put_in_background(inbox, message):
    """Start a sender; the event is set once the put returned."""
    sent = threading.Event()
    threading.Thread(target=lambda: (inbox.put(message), sent.set()), daemon=True).start()
    return sent


def test_records_bound_an_inbox_as_messages_do():
    inbox = Inbox(64, threading.Event(), record_capacity=100)
    inbox.put((0, 0, Batch(list(range(60)))))
    inbox.put((0, 0, Watermark(5)))            # control elements hold no records
    inbox.put((0, 0, Batch(list(range(40)))))
    sent = put_in_background(inbox, (0, 0, Batch([1])))
    assert not sent.wait(0.3), "an inbox holding its records' bound must hold its sender back"
    assert len(inbox.get(0.01)[2]) == 60
    assert sent.wait(2), "taking a batch out must make room"
    assert [type(inbox.get(0.01)[2]).__name__ for _ in range(3)] == ["Watermark", "Batch", "Batch"]


def test_an_empty_inbox_takes_a_batch_larger_than_its_bound():
    inbox = Inbox(64, threading.Event(), record_capacity=10)
    sent = put_in_background(inbox, (0, 0, Batch(list(range(1000)))))
    assert sent.wait(2), "a batch larger than the bound would never pass otherwise"
    assert not put_in_background(inbox, (0, 0, Batch([1]))).wait(0.3)


def test_a_discarding_inbox_releases_a_blocked_sender_and_drops_what_follows():
    inbox = Inbox(2, threading.Event())
    inbox.put((0, 0, "a"))
    inbox.put((0, 0, "b"))
    sent = threading.Event()
    sender = threading.Thread(target=lambda: (inbox.put((0, 0, "c")), sent.set()), daemon=True)
    sender.start()
    assert not sent.wait(0.3), "a full inbox must hold its sender back"
    inbox.discard()
    assert sent.wait(2), "discard() must release a sender waiting for room"
    started = time.monotonic()
    for i in range(100):
        inbox.put((0, 0, i))
    assert time.monotonic() - started < 1
    assert len(inbox) == 0
    assert inbox.get(0.01) is None
