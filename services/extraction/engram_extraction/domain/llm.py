"""LLM extraction, the pure part: the chat-completions request and its reply read as candidates.

The request asks for `{"records": [{"type", "attributes"}]}` through a JSON-schema
`response_format` built from the schema registry, so declared types carry their id and
required fields. The reply's rows are only candidates: `records.build` validates them like
any other extractor's, and each is located as `llm:item/<index in records>`.

A document with passages is sent as its passages, numbered `[P1]`, `[P2]`, ... under their
heading paths, and each record is asked for the `passages` it was read from; the reply's numbers
become the record's passage ids. A number the request did not send is dropped and the record
kept (cited by its other passages, or by none): its values are validated on their own, and a
wrong pointer is no reason to lose them, while citing a passage that does not exist would be.
The input bound applies to what is sent: a document whose numbered passages do not fit is not
sent at all (the caller keeps it as passages only).

A reply that is not the promised JSON is a permanent failure of that document (a retry would
ask again for the same output); the endpoint being down is `ModelUnavailable`, which the
consumer retries (the rules and the endpoint are shared: `engram_platform.chat`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram_events.payloads.records import MAX_CITED_PASSAGES
from engram_extraction.domain.candidates import (
    Candidate,
    Extraction,
    ExtractionFailed,
    Limits,
    check_values,
    flatten,
)
from engram_extraction.domain.naming import type_name
from engram_extraction.domain.passages import Passage
from engram_extraction.domain.schema import RecordSchema, SchemaRegistry
from engram_platform.chat import ModelFailed, Reply, json_output, json_schema_format

EXTRACTOR = "llm"
SCHEMA_NAME = "engram_records"
TYPE_PATTERN = "^[a-z][a-z0-9_]*$"
SCALAR = {"type": ["string", "number", "boolean", "null"]}
INSTRUCTIONS = (
    "You turn a document into structured records. Return one record per entity the document "
    "states facts about: `type` is the entity's kind (a lower_snake_case singular noun; use a "
    "declared type when one fits) and `attributes` holds the facts as flat name/value pairs, "
    "including an `id` when the document gives one. Use only what the document says; never "
    "invent values. Answer with JSON matching the response schema and nothing else."
)
CITING = (
    " The document is given as numbered passages: each starts with its marker `[P<n>]` on a "
    "line of its own, then its heading path (when it has one) and its text. In each record's "
    "`passages`, list the numbers n of the passages its facts are read from."
)
MARKER = "[P{number}]"
_NUMBER = re.compile(r"^\s*\[?[Pp]?(\d{1,9})\]?\s*$")


@dataclass(frozen=True)
class LlmOptions:
    """The configured model and the bounds of one request."""

    model: str
    max_input_chars: int = 200_000
    temperature: float | None = 0.0


def _item_schema(schema: RecordSchema | None, declared: list[str], cited: int) -> dict[str, Any]:
    """One record's shape: a declared type with its key and required fields, or any other type;
    with `cited` numbered passages, the numbers of those it was read from."""
    attributes: dict[str, Any] = {"type": "object", "additionalProperties": SCALAR}
    if schema is not None:
        needed = list(dict.fromkeys([*schema.id_fields, *schema.required_fields]))
        type_spec: dict[str, Any] = {"type": "string", "const": schema.name}
        if needed:
            attributes["properties"] = {name: SCALAR for name in needed}
            attributes["required"] = needed
    else:
        type_spec = {"type": "string", "pattern": TYPE_PATTERN}
        if declared:
            type_spec["not"] = {"enum": declared}
    item: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "attributes"],
        "properties": {"type": type_spec, "attributes": attributes},
    }
    if cited:
        item["required"].append("passages")
        item["properties"]["passages"] = {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": cited},
        }
    return item


def response_format(registry: SchemaRegistry, cited: int = 0) -> dict[str, Any]:
    """The `response_format` for the registry's record types (plus undeclared ones), asking
    each record for its passage numbers when `cited` passages are sent."""
    schemas = sorted(registry.by_name.values(), key=lambda s: s.name)
    declared = [s.name for s in schemas]
    variants = [_item_schema(s, declared, cited) for s in schemas]
    variants.append(_item_schema(None, declared, cited))
    items = variants[0] if len(variants) == 1 else {"anyOf": variants}
    return json_schema_format(
        SCHEMA_NAME,
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["records"],
            "properties": {"records": {"type": "array", "items": items}},
        },
    )


def numbered(passages: Sequence[Passage]) -> str:
    """The passages as the model reads them, passage n being `passages[n - 1]`: its marker
    `[Pn]`, then its heading path and text."""
    return "\n\n".join(
        f"{MARKER.format(number=n)}\n{p.embedded_text}" for n, p in enumerate(passages, 1)
    )


def request_body(
    text: str,
    registry: SchemaRegistry,
    options: LlmOptions,
    passages: Sequence[Passage] = (),
) -> dict[str, Any]:
    """The chat-completions request for one document (its numbered passages when it has some);
    input over the bound fails it at once."""
    content = numbered(passages) if passages else text
    if len(content) > options.max_input_chars:
        what = f"{len(passages)} numbered passages have" if passages else "document has"
        raise ExtractionFailed(
            f"the {what} {len(content)} characters; the LLM extractor reads at most "
            f"{options.max_input_chars}"
        )
    body: dict[str, Any] = {
        "model": options.model,
        "messages": [
            {"role": "system", "content": INSTRUCTIONS + (CITING if passages else "")},
            {"role": "user", "content": content},
        ],
        "response_format": response_format(registry, len(passages)),
    }
    if options.temperature is not None:
        body["temperature"] = options.temperature
    return body


def _number(entry: Any) -> int | None:
    """A passage number as the model wrote it: 2, 2.0, "2", "P2" or "[P2]"."""
    if isinstance(entry, bool):
        return None
    if isinstance(entry, int):
        return entry
    if isinstance(entry, float) and entry.is_integer():
        return int(entry)
    if isinstance(entry, str) and (match := _NUMBER.match(entry)):
        return int(match.group(1))
    return None


def cited(raw: Any, passage_ids: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """The passage ids a record's `passages` names, in passage order (at most
    `MAX_CITED_PASSAGES`), and how many of its entries name no passage that was sent."""
    entries = raw if isinstance(raw, list) else [] if raw is None else [raw]
    numbers: set[int] = set()
    unknown = 0
    for entry in entries:
        number = _number(entry)
        if number is None or not 1 <= number <= len(passage_ids):
            unknown += 1
        else:
            numbers.add(number)
    chosen = sorted(numbers)[:MAX_CITED_PASSAGES]
    return tuple(passage_ids[n - 1] for n in chosen), unknown


def _candidate(index: int, item: Any, limits: Limits) -> Candidate:
    """One item of `records` as a candidate; a malformed item is a rejected candidate."""
    locator = f"{EXTRACTOR}:item/{index}"
    if not isinstance(item, dict):
        return Candidate(locator, problem=f"expected an object, found {type(item).__name__}")
    attributes = item.get("attributes")
    if not isinstance(attributes, dict) or not attributes:
        return Candidate(locator, problem="the item has no attributes object")
    raw_type = item.get("type")
    hint = type_name(raw_type) if isinstance(raw_type, str) and raw_type.strip() else None
    try:
        flat = flatten(attributes)
    except RecursionError:
        return Candidate(locator, problem="the attributes are nested too deeply")
    return check_values(Candidate(locator, flat, type_hint=hint), limits)


def read_reply(reply: Reply, limits: Limits, passage_ids: Sequence[str] = ()) -> Extraction:
    """The reply's rows as candidates, each citing the passages it names when `passage_ids`
    (the ids of passages 1..n as sent) were numbered; or a permanent, content-free reason it
    has none."""
    if reply.refused:
        raise ExtractionFailed("the model refused to extract this document")
    try:
        data = json_output(reply)
    except ModelFailed as failed:
        raise ExtractionFailed(str(failed)) from None
    items = data.get("records") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ExtractionFailed("the model's output has no `records` array")
    candidates = [_candidate(i, item, limits) for i, item in enumerate(items)]
    unknown = 0
    if passage_ids:
        for candidate, item in zip(candidates, items, strict=True):
            raw = item.get("passages") if isinstance(item, dict) else None
            candidate.passage_ids, dropped = cited(raw, passage_ids)
            unknown += dropped
    return Extraction(EXTRACTOR, candidates, model=reply.model, unknown_citations=unknown)
