"""The inbox of a replica restored as finished: it reads nothing more, so senders restored
behind it (segment backup resends what it already holds) must never wait for room."""
import threading
import time

from segflow.runtime.channels import Inbox


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
