"""What an extractor yields: one row's attributes and where it was found, or why it is invalid."""

from __future__ import annotations

from dataclasses import dataclass, field

from engram_events.ids import Scalar
from engram_events.values import VALUE_PROBLEMS, value_problem


class ExtractionFailed(Exception):
    """The whole document cannot be read; the reason is safe to show (no content)."""


@dataclass(frozen=True)
class Limits:
    """Input bounds that keep one document from starving the pipeline."""

    max_columns: int = 1000
    max_records: int = 50_000
    max_value_chars: int = 32_000


@dataclass
class Candidate:
    """One extracted row; `problem` set means it is kept as a rejected candidate; `passage_ids`
    are the passages of its document it was read from (the model's rows only)."""

    locator: str
    attributes: dict[str, Scalar] = field(default_factory=dict)
    type_hint: str | None = None
    problem: str | None = None
    passage_ids: tuple[str, ...] = ()


@dataclass
class Extraction:
    """Everything one extractor found in one document (and the model, when one read it, with
    how many of its passage numbers named no passage it was sent)."""

    extractor: str
    candidates: list[Candidate]
    model: str | None = None
    unknown_citations: int = 0


def flatten(
    value: object, prefix: str = "", out: dict[str, Scalar] | None = None
) -> dict[str, Scalar]:
    """Nested objects and lists become dotted scalar attributes (`address.city`, `tags.0`)."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for key, inner in value.items():
            flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            flatten(inner, f"{prefix}.{index}" if prefix else str(index), out)
    elif value is None or isinstance(value, str | int | float | bool):
        out[prefix or "value"] = value
    else:
        out[prefix or "value"] = str(value)
    return out


def check_values(candidate: Candidate, limits: Limits) -> Candidate:
    """Reject rows with too many attributes, over-long names or values, or a value storage
    would not keep as given (NaN, infinities, integers beyond 64 bits, unencodable text)."""
    if candidate.problem:
        return candidate
    if len(candidate.attributes) > limits.max_columns:
        candidate.problem = (
            f"{len(candidate.attributes)} attributes exceed the limit of {limits.max_columns}"
        )
        return candidate
    for name, value in candidate.attributes.items():
        if not name or len(name) > 200:
            candidate.problem = "an attribute name is empty or longer than 200 characters"
            return candidate
        if isinstance(value, str) and len(value) > limits.max_value_chars:
            candidate.problem = (
                f"attribute {name[:50]!r} is longer than {limits.max_value_chars} characters"
            )
            return candidate
        problem = value_problem(value) or value_problem(name)
        if problem is not None:
            candidate.problem = f"attribute {name[:50]!r}: {VALUE_PROBLEMS[problem]}"
            return candidate
    return candidate
