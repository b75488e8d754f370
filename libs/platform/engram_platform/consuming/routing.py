"""Which handler takes which event type, and what a fetch's records decode to."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from engram_events import Envelope, EventType, PoisonMessage, decode, topic_name
from engram_events.payloads.dlq import DeadLetter
from engram_platform.consuming.messages import (
    BatchHandler,
    BatchResult,
    DeadLetterHook,
    Handler,
    Published,
    Work,
    addressed_elsewhere,
    declared_type,
)
from engram_platform.consuming.salvage import salvage
from engram_platform.dlq import DeadLetters
from engram_platform.give_way import give_way

log = logging.getLogger(__name__)
P = TypeVar("P", bound=BaseModel)


class Routes:
    """Event types to their handlers (single, batch, look-ahead), and the topics they come on."""

    def __init__(self, topic_prefix: str = "") -> None:
        self.prefix = topic_prefix
        self.single: dict[str, Handler] = {}
        self.batch: dict[str, BatchHandler] = {}
        self.ahead: dict[str, Callable[[list[Envelope[Any]]], None]] = {}
        self.dead_lettered: dict[str, DeadLetterHook] = {}
        self.topics: set[str] = set()

    def on(
        self,
        event_type: EventType[P],
        handler: Callable[[Envelope[P]], Awaitable[Published]],
        *,
        batch: Callable[[list[Envelope[P]]], Awaitable[Sequence[BatchResult]]] | None = None,
        ahead: Callable[[list[Envelope[P]]], None] | None = None,
        on_dead_letter: Callable[[Envelope[P], DeadLetter], Awaitable[Published]] | None = None,
    ) -> None:
        """Route one event type to its handler, and optionally runs of it to a batch handler;
        `ahead` is told first, in order, every input of that type a batch is about to handle;
        `on_dead_letter` runs for each input dead-lettered, before the offset moves on, so the
        item it names reaches a status its owner can see."""
        self.single[event_type.name] = handler
        if on_dead_letter is not None:
            self.dead_lettered[event_type.name] = on_dead_letter
        if batch is not None:
            self.batch[event_type.name] = batch
        if ahead is not None:
            self.ahead[event_type.name] = ahead
        self.topics.add(topic_name(event_type.topic, self.prefix))

    def runs(self, work: list[Work], cap: int | None) -> list[list[Work]]:
        """Consecutive inputs of one batch-routed type together (at most `cap` when set);
        every other input alone."""
        runs: list[list[Work]] = []
        limit = cap or len(work)
        for item in work:
            kind = item[2].event_type
            if (
                runs
                and kind in self.batch
                and runs[-1][-1][2].event_type == kind
                and len(runs[-1]) < limit
            ):
                runs[-1].append(item)
            else:
                runs.append([item])
        return runs

    def look_ahead(self, work: list[Work]) -> None:
        """Tell each look-ahead route what this batch will hand it; only a hint, so a failure
        is logged and the batch goes on."""
        for kind, ahead in self.ahead.items():
            upcoming = [envelope for _, _, envelope in work if envelope.event_type == kind]
            if upcoming:
                try:
                    ahead(upcoming)
                except Exception:
                    log.exception("look-ahead failed", extra={"event_type": kind})


async def decode_records(
    routes: Routes, records: Sequence[Any], dead_letters: DeadLetters, consumer: str
) -> tuple[list[Envelope[Any] | None], dict[int, str], list[tuple[Envelope[Any], DeadLetter]]]:
    """Each record's event (validated), or None: dead-lettered when it does not decode, or
    passed over unparsed when its header names a type nobody here handles (returned by index).
    A dead letter carries what ids the record still yields (so its tenant sees it), and an
    event whose payload validates without its invalid fields is returned with its letter for
    its route's dead-letter hook."""
    routed = routes.single
    decoded: list[Envelope[Any] | None] = []
    skipped: dict[int, str] = {}
    salvaged: list[tuple[Envelope[Any], DeadLetter]] = []
    for index, record in enumerate(records):
        await give_way()
        declared = declared_type(record)
        if declared is not None and (
            declared not in routed or addressed_elsewhere(record, consumer)
        ):
            skipped[index] = declared
            decoded.append(None)
            continue
        try:
            decoded.append(decode(record.value))
        except PoisonMessage as exc:
            left = salvage(record.value)
            letter = await dead_letters.send(
                consumer=consumer,
                record=record,
                error=exc,
                attempts=1,
                envelope_fields=left.fields,
            )
            if left.envelope is not None and left.envelope.event_type in routes.dead_lettered:
                salvaged.append((left.envelope, letter))
            decoded.append(None)
    return decoded, skipped, salvaged
