"""SPDY/3.1 frames (nodeagent/spdy.py, pure): round trips, frames built by hand from the
draft's layout, the header compression dictionary, and malformed input."""
import hashlib
import os
import struct
import sys
import zlib

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent import spdy  # noqa: E402

# sha256 of the 1423-byte dictionary as moby/spdystream (kubectl's SPDY library) has it
DICTIONARY_SHA256 = "51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02"


def by_hand(*fields: tuple[str, int]) -> bytes:
    """Bytes from (struct format, value) pairs, big-endian."""
    return b"".join(struct.pack(">" + fmt, value) for fmt, value in fields)


def hand_block(headers: dict[str, str]) -> bytes:
    out = struct.pack(">I", len(headers))
    for name, value in headers.items():
        out += struct.pack(">I", len(name)) + name.encode() + struct.pack(">I", len(value)) + value.encode()
    return out


def peer_compress(blocks: list[bytes]) -> list[bytes]:
    """Header blocks compressed as a peer does, with zlib directly: one stream, sync-flushed."""
    z = zlib.compressobj(zdict=spdy.DICTIONARY)
    return [z.compress(b) + z.flush(zlib.Z_SYNC_FLUSH) for b in blocks]


def test_the_dictionary_is_the_drafts():
    assert len(spdy.DICTIONARY) == 1423
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")
    assert hashlib.sha256(spdy.DICTIONARY).hexdigest() == DICTIONARY_SHA256


@pytest.mark.parametrize("frame", [
    spdy.Data(5, b"abc", fin=True), spdy.Data(7, b""), spdy.Data(spdy.MAX_STREAM_ID, b"x" * 70000),
    spdy.SynStream(1, {"streamtype": "error"}, associated_id=0, priority=2),
    spdy.SynStream(3, {"streamtype": "stdin", "x": "a\x00b"}, fin=True, unidirectional=True),
    spdy.SynReply(1), spdy.SynReply(3, {"status": "200"}, fin=True), spdy.Headers(5, {"a": "b"}),
    spdy.RstStream(3, spdy.RstStatus.CANCEL), spdy.Settings({spdy.SETTINGS_INITIAL_WINDOW_SIZE: 1 << 20, 4: 100}),
    spdy.Ping(7), spdy.GoAway(9, 2), spdy.WindowUpdate(0, 65536), spdy.WindowUpdate(3, spdy.MAX_STREAM_ID),
])
def test_every_frame_round_trips(frame):
    encoded = spdy.encode(frame, spdy.HeaderCompressor())
    assert spdy.payload_length(encoded[:8]) == len(encoded) - 8
    assert spdy.decode(encoded, spdy.HeaderDecompressor()) == frame


def test_frames_built_by_hand_from_the_draft():
    data = by_hand(("I", 5), ("I", 0x01 << 24 | 3)) + b"abc"          # stream 5, FIN, length 3
    assert spdy.decode(data, spdy.HeaderDecompressor()) == spdy.Data(5, b"abc", fin=True)
    ping = by_hand(("H", 0x8003), ("H", 6), ("I", 4), ("I", 1))
    assert spdy.decode(ping, spdy.HeaderDecompressor()) == spdy.Ping(1)
    window = by_hand(("H", 0x8003), ("H", 9), ("I", 8), ("I", 3), ("I", 0x10000))
    assert spdy.decode(window, spdy.HeaderDecompressor()) == spdy.WindowUpdate(3, 65536)
    settings = by_hand(("H", 0x8003), ("H", 4), ("I", 12), ("I", 1), ("I", 0x01000007), ("I", 1 << 20))
    assert spdy.decode(settings, spdy.HeaderDecompressor()) == spdy.Settings({7: 1 << 20})   # flags byte ignored
    goaway = by_hand(("H", 0x8003), ("H", 7), ("I", 8), ("I", 0x80000009), ("I", 0))          # reserved bit ignored
    assert spdy.decode(goaway, spdy.HeaderDecompressor()) == spdy.GoAway(9, 0)


def test_syn_streams_share_the_peers_zlib_stream():
    first, second = peer_compress([hand_block({"streamtype": "error"}), hand_block({"streamtype": "stdout"})])
    frames = [by_hand(("H", 0x8003), ("H", 1), ("I", (spdy.FLAG_FIN if sid == 1 else 0) << 24 | 10 + len(block)),
                      ("I", sid), ("I", 0), ("H", 0)) + block for sid, block in ((1, first), (3, second))]
    decompressor = spdy.HeaderDecompressor()
    assert spdy.decode(frames[0], decompressor) == spdy.SynStream(1, {"streamtype": "error"}, fin=True)
    assert spdy.decode(frames[1], decompressor) == spdy.SynStream(3, {"streamtype": "stdout"})
    with pytest.raises(spdy.FrameError, match="not zlib"):     # the second block needs the first's context
        spdy.decode(frames[1], spdy.HeaderDecompressor())


def test_our_header_blocks_inflate_with_the_dictionary_alone():
    encoded = spdy.encode(spdy.SynReply(1, {"Content-Type": "x"}), spdy.HeaderCompressor())
    inflate = zlib.decompressobj(zdict=spdy.DICTIONARY)
    assert inflate.decompress(encoded[12:]) == hand_block({"content-type": "x"})


@pytest.mark.parametrize("frame, message", [
    (by_hand(("H", 0x8002), ("H", 6), ("I", 4), ("I", 1)), "SPDY version 2"),
    (by_hand(("H", 0x8003), ("H", 6), ("I", 8), ("I", 1)), "says 8 payload bytes, has 4"),
    (by_hand(("H", 0x8003), ("H", 3), ("I", 4), ("I", 1)), "RST_STREAM payload is 8 bytes, not 4"),
    (by_hand(("H", 0x8003), ("H", 9), ("I", 8), ("I", 1), ("I", 0)), "WINDOW_UPDATE of 0 bytes"),
    (by_hand(("H", 0x8003), ("H", 1), ("I", 6), ("I", 1), ("H", 0)), "shorter than its 10 fixed bytes"),
    (by_hand(("H", 0x8003), ("H", 2), ("I", 7), ("I", 1)) + b"zzz", "not zlib"),
    (by_hand(("H", 0x8003), ("H", 4), ("I", 8), ("I", 2), ("I", 7)), "SETTINGS payload is 16 bytes, not 4"),
])
def test_a_malformed_frame_raises_frame_error(frame, message):
    with pytest.raises(spdy.FrameError, match=message):
        spdy.decode(frame, spdy.HeaderDecompressor())


def test_a_header_block_cut_short_raises_frame_error():
    block = hand_block({"streamtype": "error"})
    compressed, = peer_compress([block[:-2]])
    with pytest.raises(spdy.FrameError, match="ends inside a field"):
        spdy.HeaderDecompressor().decompress(compressed)


def test_unknown_control_frames_are_ignored_and_oversized_ones_refused():
    assert spdy.decode(by_hand(("H", 0x8003), ("H", 10), ("I", 0)), spdy.HeaderDecompressor()) is None
    with pytest.raises(spdy.FrameError, match="exceeds the 24-bit length"):
        spdy.encode(spdy.Data(1, bytes(spdy.MAX_LENGTH + 1)), spdy.HeaderCompressor())
    with pytest.raises(spdy.FrameError, match="not a 31-bit number"):
        spdy.encode(spdy.RstStream(1 << 31, 1), spdy.HeaderCompressor())
