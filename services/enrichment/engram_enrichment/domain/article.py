"""The Markdown article of an entity, rendered from its current facts alone (never appended)."""

from __future__ import annotations

import json
import re

from engram_enrichment.domain.model import Contradiction, Entity, Fact, SupportRef
from engram_events.ids import Scalar

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|!~])")


def escape(text: str) -> str:
    """Source text is shown literally: Markdown syntax in a value cannot restructure the article."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def show_value(value: Scalar) -> str:
    """Strings as text, everything else as its JSON form."""
    return escape(value) if isinstance(value, str) else json.dumps(value)


def show_source(ref: SupportRef) -> str:
    """A record revision and, when known, the document and place it came from."""
    where = f"`{ref.record_id}` rev {ref.revision}"
    if ref.document_id:
        where += f", document `{ref.document_id}`"
        if ref.locator:
            where += f" at {escape(ref.locator)}"
    return where


def _sources(fact: Fact) -> str:
    return "; ".join(show_source(ref) for ref in fact.support) or "none"


def _fact_line(fact: Fact) -> str:
    return f"- **{escape(fact.attribute)}**: {show_value(fact.value)} — sources: {_sources(fact)}"


def _ordered(facts: list[Fact]) -> list[Fact]:
    return sorted(facts, key=lambda f: (f.attribute, f.fact_id))


def _contested_section(entity: Entity, item: Contradiction) -> list[str]:
    lines = [f"### {escape(item.attribute)} (contradiction `{item.contradiction_id}`)", ""]
    claims = [entity.facts[c.fact_id] for c in item.claims if c.fact_id in entity.facts]
    for fact in _ordered([f for f in claims if f.status == "contested"]):
        lines.append(f"- {show_value(fact.value)} — sources: {_sources(fact)}")
    return [*lines, ""]


def render(entity: Entity) -> str:
    """Active facts, then contested ones under their own heading, then superseded; withdrawn absent."""
    facts = list(entity.facts.values())
    active = _ordered([f for f in facts if f.status == "active"])
    superseded = _ordered([f for f in facts if f.status == "superseded"])
    contested = sorted(
        (c for c in entity.contradictions.values() if c.status == "open"),
        key=lambda c: (c.attribute, c.contradiction_id),
    )
    lines = [f"# {escape(entity.entity_id)}", "", f"Type: {escape(entity.entity_type)}", ""]
    lines += ["## Facts", ""]
    lines += [_fact_line(f) for f in active] or ["_No uncontested facts._"]
    lines.append("")
    if contested:
        lines += ["## Contested", ""]
        lines += ["Sources disagree on these values; none is taken as true until resolved.", ""]
        for item in contested:
            lines += _contested_section(entity, item)
    if superseded:
        lines += ["## Superseded", ""]
        by_id = entity.facts
        for fact in superseded:
            winner = by_id.get(fact.superseded_by or "")
            kept = show_value(winner.value) if winner and winner.live else "a later value"
            lines.append(
                f"- **{escape(fact.attribute)}**: {show_value(fact.value)} — replaced by {kept}"
                f" — sources: {_sources(fact)}"
            )
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
