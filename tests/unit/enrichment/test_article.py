"""Articles are rendered from current facts alone: goldens per scenario step, escaping, order."""

import os
from datetime import UTC, datetime
from typing import Any

import pytest

from engram_enrichment.domain.article import render
from engram_enrichment.domain.contradictions import reconcile, resolve
from engram_enrichment.domain.ids import fact_id
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.support import assert_record
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.service.knowledge import KnowledgeBase
from tests.unit.enrichment import golden
from tests.unit.enrichment.fakes import MemoryStore
from tests.unit.enrichment.scenario import assertion, entity

pytestmark = pytest.mark.unit


async def test_the_scripted_scenario_matches_the_expected_articles() -> None:
    kb = KnowledgeBase(MemoryStore())
    handlers = EnrichmentHandlers(kb, Schema())
    for step in golden.STEPS:
        for event in golden.events(step):
            await handlers.on_record_upserted(event)
        if step == "resolve":
            current = await kb.load(golden.TENANT, golden.ENTITY)
            assert current is not None
            (cid,) = current.contradictions
            keep = fact_id(golden.ENTITY, "hq", golden.KEEP_VALUE)

            def resolved(entity: Any, cid: str = cid, keep: str = keep) -> None:
                resolve(entity, cid, keep, cause="r", at=datetime.now(UTC))

            await kb.change(
                golden.TENANT,
                golden.ENTITY,
                "carrier",
                resolved,
                cause="r",
                at=datetime.now(UTC),
            )
        stored = await kb.load(golden.TENANT, golden.ENTITY)
        assert stored is not None
        if os.environ.get("ENGRAM_UPDATE_GOLDEN"):
            (golden.EXPECTED / f"{step}.md").write_text(stored.article, encoding="utf-8")
        assert stored.article == golden.expected(step), step
        assert stored.article == render(stored), "the stored article is the rendering of the facts"


def test_markdown_in_values_is_shown_literally() -> None:
    e = entity()
    assert_record(e, assertion("rec_a", 1, name="# Big *bold* [link](x)\nsecond line"), Schema())
    reconcile(e, Schema(), cause="c", at=e.records["rec_a"].observed_at, why="w")
    article = render(e)
    assert "\\# Big \\*bold\\* \\[link\\](x) second line" in article
    headings = [line for line in article.splitlines() if line.startswith("#")]
    assert len(headings) == 2, "only the title and the Facts heading are headings"


def test_withdrawn_facts_are_absent_and_the_article_is_not_appended() -> None:
    e = entity()
    schema = Schema()
    for revision, value in enumerate(["One", "Two", "Three"], start=1):
        assert_record(e, assertion("rec_a", revision, minute=revision, name=value), schema)
        reconcile(e, schema, cause=str(revision), at=e.records["rec_a"].observed_at, why="w")
    article = render(e)
    assert "Three" in article and "One" not in article and "Two" not in article
    assert article.count("**name**") == 1


def _titled(*claims: dict[str, object]) -> list[str]:
    e = entity()
    for n, attrs in enumerate(claims, start=1):
        assert_record(e, assertion(f"rec_{n}", 1, **attrs), Schema())  # type: ignore[arg-type]
    reconcile(e, Schema(), cause="c", at=e.records["rec_1"].observed_at, why="w")
    return render(e).splitlines()[:3]


def test_an_article_is_titled_by_the_entity_name_with_its_id_under_it() -> None:
    e = entity()
    assert _titled({"name": "Acme Freight", "city": "Berlin"}) == [
        "# Acme Freight",
        "",
        f"Id: {e.entity_id}",
    ]
    assert _titled({"title": "Night shipping", "city": "Berlin"})[0] == "# Night shipping"


def test_an_article_keeps_its_id_as_title_without_one_agreed_name() -> None:
    e = entity()
    assert _titled({"city": "Berlin"})[0] == f"# {e.entity_id}"
    assert _titled({"name": "Acme"}, {"name": "Acme Ltd"})[0] == f"# {e.entity_id}"
