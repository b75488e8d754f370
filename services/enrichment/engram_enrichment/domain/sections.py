"""Article sections, one per attribute: the unit embedded for search and checked by prunes.

A section lists every non-withdrawn value of one attribute (active, contested, superseded)
with its sources, so it names exactly the facts and records it rests on. Its vector is of the
values alone (record ids would only add noise) but is tied to the hash of the whole section, so
a change of sources replaces the vector and the record ids it carries. Sections are derived
from the facts like the article; their stamps (`last_cause`) are written with the entity, so a
retry knows which section vectors to request or delete.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

from engram_enrichment.domain.article import (
    escape,
    ordered,
    replacement,
    show_value,
    sources_of,
)
from engram_enrichment.domain.ids import attribute_token
from engram_enrichment.domain.model import ArticleSection, Entity, Fact

SEPARATOR = "@"


def section_id(entity_id: str, attribute: str) -> str:
    """`entity@attribute`: attribute tokens hold no `@`, so the entity id is recoverable."""
    return f"{entity_id}{SEPARATOR}{attribute_token(attribute)}"


def entity_of(section: str) -> str:
    """The entity id a section id starts with."""
    return section.rsplit(SEPARATOR, 1)[0]


def _shown(entity: Entity) -> dict[str, list[Fact]]:
    """Non-withdrawn facts by attribute, in article order."""
    by_attribute: dict[str, list[Fact]] = defaultdict(list)
    for fact in ordered(list(entity.facts.values())):
        if fact.status != "withdrawn":
            by_attribute[fact.attribute].append(fact)
    return dict(by_attribute)


def _line(entity: Entity, fact: Fact) -> str:
    label = ""
    if fact.status == "contested":
        label = f" (contested, contradiction `{fact.contradiction_id}`)"
    elif fact.status == "superseded":
        label = f" (superseded, replaced by {replacement(entity, fact)})"
    return f"- {show_value(fact.value)}{label} — sources: {sources_of(fact)}"


def render_section(
    entity: Entity, attribute: str, by_attribute: dict[str, list[Fact]] | None = None
) -> str:
    """The section's Markdown, titled with the entity so it stands alone as a search hit."""
    lines = [f"## {escape(entity.entity_id)}: {escape(attribute)}", ""]
    lines += [_line(entity, f) for f in (by_attribute or _shown(entity)).get(attribute, [])]
    return "\n".join(lines) + "\n"


def embedding_text(
    entity: Entity, attribute: str, by_attribute: dict[str, list[Fact]] | None = None
) -> str:
    """What the vector is of: the section's values and statuses, without the source noise."""
    values = []
    for fact in (by_attribute or _shown(entity)).get(attribute, []):
        shown = fact.value if isinstance(fact.value, str) else json.dumps(fact.value)
        values.append(shown if fact.status == "active" else f"{shown} ({fact.status})")
    return f"{entity.entity_id} ({entity.entity_type}), {attribute}: " + "; ".join(values)


def embedding_texts(entity: Entity) -> dict[str, str]:
    """Every shown attribute's embedding text, sorting the facts once for all of them."""
    shown = _shown(entity)
    return {attribute: embedding_text(entity, attribute, shown) for attribute in shown}


def text_sha256(text: str) -> str:
    """The hash a section's vector is tied to."""
    return hashlib.sha256(text.encode()).hexdigest()


def current_sections(
    entity: Entity, attributes: set[str] | None = None
) -> dict[str, ArticleSection]:
    """The sections the facts call for now (of these attributes, if given), with what each cites."""
    sections: dict[str, ArticleSection] = {}
    shown = _shown(entity)
    for attribute, facts in shown.items():
        if attributes is not None and attribute not in attributes:
            continue
        sid = section_id(entity.entity_id, attribute)
        sections[sid] = ArticleSection(
            section_id=sid,
            attribute=attribute,
            text_sha256=text_sha256(render_section(entity, attribute, shown)),
            fact_ids=sorted(f.fact_id for f in facts),
            record_ids=sorted({s.record_id for f in facts for s in f.support}),
        )
    return sections


def _same(old: ArticleSection, new: ArticleSection) -> bool:
    """Equal but for the stamp (compared field by field: dumping both cost more than rendering)."""
    return (old.status, old.text_sha256, old.fact_ids, old.record_ids, old.attribute) == (
        new.status,
        new.text_sha256,
        new.fact_ids,
        new.record_ids,
        new.attribute,
    )


def refresh_sections(entity: Entity, cause: str, attributes: set[str] | None = None) -> None:
    """Stamp new or changed sections with the cause; a section with no facts left is removed.

    `attributes` limits the refresh to the attributes whose facts changed: a section is
    rendered from its own attribute's facts alone, so the others cannot have changed.
    """
    wanted = current_sections(entity, attributes)
    for sid, section in wanted.items():
        old = entity.sections.get(sid)
        if old is None or not _same(old, section):
            section.last_cause = cause
            entity.sections[sid] = section
    for sid, old in list(entity.sections.items()):
        if attributes is not None and old.attribute not in attributes:
            continue
        if sid not in wanted and old.status == "active":
            entity.sections[sid] = ArticleSection(
                section_id=sid, attribute=old.attribute, status="removed", last_cause=cause
            )


def changed_by(entity: Entity, cause: str) -> tuple[list[ArticleSection], list[str]]:
    """Active sections this cause (re)wrote, and ids of sections it removed."""
    touched = [s for _, s in sorted(entity.sections.items()) if s.last_cause == cause]
    return (
        [s for s in touched if s.status == "active"],
        [s.section_id for s in touched if s.status == "removed"],
    )
