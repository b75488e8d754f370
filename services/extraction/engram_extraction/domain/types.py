"""A tenant's record type definitions: what a declaration must hold, and its versions (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError

from engram_events.ids import AttributeName
from engram_extraction.domain.schema import RecordSchema

MAX_FIELDS = 200
"""Attributes one list of a definition may name."""
FIELD_LISTS = ("id_fields", "required_fields", "single_valued")
_ATTRIBUTE: TypeAdapter[str] = TypeAdapter(AttributeName)


class BadDefinition(ValueError):
    """A definition a tenant may not declare; `errors` name each field and why."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors))
        self.errors = errors


def _error(loc: list[str | int], msg: str) -> dict[str, Any]:
    return {"loc": [str(part) for part in loc], "msg": msg}


def definition_of(name: str, body: Any) -> RecordSchema:
    """The body as the type `name`: the model extraction builds records with (unknown keys and
    bad names refused), then the rules a tenant's declaration keeps besides."""
    if not isinstance(body, Mapping):
        raise BadDefinition([_error([], "a type definition is a JSON object")])
    if "name" in body and body["name"] != name:
        raise BadDefinition(
            [_error(["name"], f"the body names another type than the path's {name}")]
        )
    try:
        schema = RecordSchema.model_validate({**body, "name": name})
    except ValidationError as exc:
        raise BadDefinition(
            [_error(list(e["loc"]), e["msg"]) for e in exc.errors(include_input=False)[:20]]
        ) from None
    errors = _rule_errors(schema)
    if errors:
        raise BadDefinition(errors)
    return schema


def _rule_errors(schema: RecordSchema) -> list[dict[str, Any]]:
    """Attribute names as records carry them, no repeats, and every id field required (a row
    without it would have no key)."""
    errors: list[dict[str, Any]] = []
    for list_name in FIELD_LISTS:
        fields = getattr(schema, list_name) or ()
        if len(fields) > MAX_FIELDS:
            errors.append(_error([list_name], f"at most {MAX_FIELDS} attributes"))
            continue
        seen: set[str] = set()
        for i, field in enumerate(fields):
            try:
                _ATTRIBUTE.validate_python(field)
            except ValidationError:
                errors.append(_error([list_name, i], "an attribute name is 1-200 characters"))
            if field in seen:
                errors.append(_error([list_name, i], f"{field!r} is listed twice"))
            seen.add(field)
    required = set(schema.required_fields)
    for i, field in enumerate(schema.id_fields):
        if field not in required:
            errors.append(_error(["id_fields", i], f"{field!r} is not in required_fields"))
    return errors[:20]


@dataclass(frozen=True)
class TypeVersion:
    """One version of a tenant's type: its definition, or None when that version retired it."""

    name: str
    version: int
    schema: RecordSchema | None
    at: datetime
    key_id: str | None = None

    def view(self) -> dict[str, Any]:
        """As the API shows it: the version, whether it retired the type, the definition, who
        changed it and when."""
        return {
            "name": self.name,
            "version": self.version,
            "retired": self.schema is None,
            "definition": self.schema.model_dump(mode="json") if self.schema else None,
            "changed_at": self.at,
            "changed_by": self.key_id,
        }


def current(heads: list[TypeVersion]) -> dict[str, tuple[int, RecordSchema]]:
    """A tenant's live declarations by name (a retired type falls back to the bundled one)."""
    return {h.name: (h.version, h.schema) for h in heads if h.schema is not None}
