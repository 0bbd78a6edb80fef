"""A block replica's input stage (Noir's StartBlock): what arrives from every sender of
every input, merged into one stream for the operator chain. Watermarks become one frontier
(the slowest live sender's, idle senders left out), and end-of-stream and termination
pass on once every sender has sent them."""
from __future__ import annotations

from typing import Any

from .elements import Batch


class InputState:
    """What the StartBlock tracks about one input of the block."""

    __slots__ = ("senders", "watermarks", "idle", "ended", "terminated", "replay", "feedback", "cache")

    def __init__(self, senders: list[int], replay: bool, feedback: bool):
        self.senders = senders
        self.watermarks: dict[int, Any] = {}
        self.idle: set[int] = set()          # senders whose watermarks are not waited for
        self.ended = 0
        self.terminated = 0
        self.replay = replay
        self.feedback = feedback
        self.cache: list[Batch] | None = [] if replay else None

    @property
    def count(self) -> int:
        return len(self.senders)

    def snapshot(self) -> tuple:
        return (self.watermarks, self.ended, self.terminated, self.cache, self.idle)

    def restore(self, state: tuple) -> None:
        self.watermarks, self.ended, self.terminated, self.cache = state[:4]
        self.idle = set(state[4]) if len(state) > 4 else set()     # snapshots before idleness had none


class InputStage:
    """Counts and frontiers over the block's inputs; each method returns what the chain
    must see (``None``: nothing yet)."""

    def __init__(self, inputs: list[InputState]):
        self.inputs = inputs
        self.frontier: Any = None

    def channels(self) -> list[tuple[int, int]]:
        return [(i, s) for i, state in enumerate(self.inputs) for s in state.senders]

    def back_edges(self) -> set[int]:
        return {i for i, state in enumerate(self.inputs) if state.feedback}

    def watermark(self, index: int, sender: int, ts: Any) -> Any:
        """A sender's watermark: the new frontier if it advanced."""
        state = self.inputs[index]
        state.watermarks[sender] = ts
        state.idle.discard(sender)
        return self._advance()

    def idle(self, index: int, sender: int) -> tuple[Any, bool]:
        """A sender went idle: ``(new frontier or None, whether every sender is idle)``."""
        self.inputs[index].idle.add(sender)
        frontier = self._advance()
        return frontier, all(s.feedback or s.replay or len(s.idle) == s.count for s in self.inputs)

    def ended(self, index: int) -> bool:
        """End of stream from one sender: true once every sender has ended (the counts of
        inputs that are not replayed start again, for the next iteration)."""
        self.inputs[index].ended += 1
        if not all(s.ended >= s.count for s in self.inputs):
            return False
        for s in self.inputs:
            if not s.replay:
                s.ended = 0
        return True

    def terminated(self, index: int) -> bool:
        """A sender terminated: true once every sender has."""
        self.inputs[index].terminated += 1
        return all(s.terminated >= s.count for s in self.inputs)

    def close_finished(self, channels: set[tuple[int, int]]) -> None:
        """Channels ``(input, sender)`` whose sender finished before a snapshot restored at
        other replica counts: they have ended and terminated, and no watermark will come."""
        for index, sender in channels:
            state = self.inputs[index]
            state.ended += 1
            state.terminated += 1
            state.idle.add(sender)

    def cache(self, index: int, batch: Batch) -> None:
        """Side inputs of a loop keep their first pass, replayed on each iteration."""
        state = self.inputs[index]
        if state.cache is not None and state.ended < state.count:
            state.cache.append(batch)

    def cached(self) -> list[tuple[int, Batch]]:
        return [(index, batch) for index, state in enumerate(self.inputs) for batch in state.cache or ()]

    def snapshot(self) -> tuple[list, Any]:
        return [s.snapshot() for s in self.inputs], self.frontier

    def restore(self, inputs: list, frontier: Any) -> None:
        for s, input_state in zip(self.inputs, inputs):
            s.restore(input_state)
        self.frontier = frontier

    def _advance(self) -> Any:
        low = None
        for s in self.inputs:
            if s.feedback or s.replay:
                continue
            waiting = [w for sender, w in s.watermarks.items() if sender not in s.idle]
            if len(waiting) + len(s.idle) < s.count:
                return None
            if not waiting:
                continue
            m = min(waiting)
            low = m if low is None or m < low else low
        if low is not None and (self.frontier is None or low > self.frontier):
            self.frontier = low
            return low
        return None
