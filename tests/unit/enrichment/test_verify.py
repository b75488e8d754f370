"""Prune verification builds models only for entities that still name a pruned record."""

import pytest

from engram_enrichment.service.verify import names_a_record

pytestmark = pytest.mark.unit


def stored(facts: list[tuple[str, list[str]]], sections: list[tuple[str, list[str]]]) -> dict:
    return {
        "facts": [
            {"fact_id": f"e:a:{i}", "status": status, "support": [{"record_id": r} for r in recs]}
            for i, (status, recs) in enumerate(facts)
        ],
        "sections": [
            {"section_id": f"e@{i}", "status": status, "record_ids": recs}
            for i, (status, recs) in enumerate(sections)
        ],
    }


@pytest.mark.parametrize(
    ("doc", "named"),
    [
        (stored([("active", ["rec_a", "rec_x"])], []), True),
        (stored([("contested", ["rec_a"])], []), True),
        (stored([("superseded", ["rec_a"])], []), True),
        (stored([("withdrawn", ["rec_a"])], [("removed", ["rec_a"])]), False),
        (stored([("active", ["rec_x"])], [("active", ["rec_x", "rec_a"])]), True),
        (stored([("active", ["rec_x"])], [("active", ["rec_x"])]), False),
        (stored([], []), False),
    ],
)
def test_an_entity_is_looked_at_closely_when_a_live_fact_or_active_section_names_a_record(
    doc: dict, named: bool
) -> None:
    assert names_a_record(doc, {"rec_a", "rec_b"}) is named
