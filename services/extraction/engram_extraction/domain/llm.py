"""LLM extraction, the pure part: the chat-completions request and its reply read as candidates.

The request asks for `{"records": [{"type", "attributes"}]}` through a JSON-schema
`response_format` built from the schema registry, so declared types carry their id and
required fields. The reply's rows are only candidates: `records.build` validates them like
any other extractor's, and each is located as `llm:item/<index in records>`. A reply that is
not the promised JSON is a permanent failure of that document (a retry would ask again for
the same output); the endpoint being down is `ModelUnavailable`, which the consumer retries
(the rules and the endpoint are shared: `engram_platform.chat`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engram_extraction.domain.candidates import (
    Candidate,
    Extraction,
    ExtractionFailed,
    Limits,
    check_values,
    flatten,
)
from engram_extraction.domain.naming import type_name
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


@dataclass(frozen=True)
class LlmOptions:
    """The configured model and the bounds of one request."""

    model: str
    max_input_chars: int = 200_000
    temperature: float | None = 0.0


def _item_schema(schema: RecordSchema | None, declared: list[str]) -> dict[str, Any]:
    """One record's shape: a declared type with its key and required fields, or any other type."""
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
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "attributes"],
        "properties": {"type": type_spec, "attributes": attributes},
    }


def response_format(registry: SchemaRegistry) -> dict[str, Any]:
    """The `response_format` for the registry's record types (plus undeclared ones)."""
    schemas = sorted(registry.by_name.values(), key=lambda s: s.name)
    declared = [s.name for s in schemas]
    variants = [_item_schema(s, declared) for s in schemas] + [_item_schema(None, declared)]
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


def request_body(text: str, registry: SchemaRegistry, options: LlmOptions) -> dict[str, Any]:
    """The chat-completions request for one document; over-long text fails it at once."""
    if len(text) > options.max_input_chars:
        raise ExtractionFailed(
            f"the document has {len(text)} characters; the LLM extractor reads at most "
            f"{options.max_input_chars}"
        )
    body: dict[str, Any] = {
        "model": options.model,
        "messages": [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": text},
        ],
        "response_format": response_format(registry),
    }
    if options.temperature is not None:
        body["temperature"] = options.temperature
    return body


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


def read_reply(reply: Reply, limits: Limits) -> Extraction:
    """The reply's rows as candidates, or a permanent, content-free reason it has none."""
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
    return Extraction(EXTRACTOR, candidates, model=reply.model)
