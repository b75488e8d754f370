"""A prune job waits for every stage of the cascade: records → facts → memories."""

import random

import pytest

from engram_gateway.domain.prune import SELECTION, Ack, JobKind, Progress

pytestmark = pytest.mark.unit


def ack(
    service: str, source: set[str] | None = None, tombstoned: set[str] | None = None, **counts: int
) -> Ack:
    return Ack(service, frozenset(source or ()), frozenset(tombstoned or ()), counts)


def fold(acks: list[Ack]) -> Progress:
    """Each acknowledgement under its own event id."""
    progress = Progress()
    for n, one in enumerate(acks):
        progress.add(f"e{n}", one)
    return progress


def pending(kind: JobKind, acks: list[Ack], document_id: str | None = None) -> dict[str, set[str]]:
    return fold(acks).pending(kind, document_id)


def test_a_new_job_waits_for_the_owner_of_records() -> None:
    assert pending("records", []) == {
        "extraction": {SELECTION},
        "enrichment": set(),
        "memory": set(),
    }


def test_each_record_must_be_covered_by_enrichment_and_memory() -> None:
    acks = [
        ack("extraction", tombstoned={"r1", "r2"}, records=2),
        ack("enrichment", {"r1"}, {"f1"}),
    ]
    waiting = pending("records", acks)
    assert waiting == {"extraction": set(), "enrichment": {"r2"}, "memory": {"r1", "r2", "f1"}}


def test_withdrawn_facts_must_reach_memory_before_the_job_is_done() -> None:
    acks = [
        ack("extraction", tombstoned={"r1"}),
        ack("enrichment", {"r1"}, {"f1"}, facts=1),
        ack("memory", {"r1"}, {"m1"}, memories=1),
    ]
    assert pending("records", acks)["memory"] == {"f1"}
    acks.append(ack("memory", {"f1"}, set(), memories=0))
    assert not any(pending("records", acks).values())
    assert fold(acks).counts == {"facts": 1, "memories": 1}


def test_a_redelivered_acknowledgement_counts_once() -> None:
    progress = fold([ack("extraction", tombstoned={"r1", "r2"}, records=2)])
    progress.add("m", ack("memory", {"r1"}, {"m1"}, memories=1))
    progress.add("m", ack("memory", {"r1"}, {"m1"}, memories=1))
    assert progress.counts == {"records": 2, "memories": 1}
    assert progress.pending("records")["memory"] == {"r2"}


def test_a_document_job_also_waits_for_ingest_and_the_document_in_memory() -> None:
    acks = [ack("extraction", tombstoned=set())]
    waiting = pending("document", acks, "doc_1")
    assert waiting["ingest"] == {"doc_1"} and waiting["memory"] == {"doc_1"}
    acks += [ack("ingest", {"doc_1"}, {"doc_1"}), ack("memory", {"doc_1"})]
    assert pending("document", acks, "doc_1")["enrichment"] == {"doc_1"}, "its passages"
    acks.append(ack("enrichment", {"doc_1"}, vectors=3))
    assert not any(pending("document", acks, "doc_1").values())


def test_an_empty_selection_is_done_once_acknowledged() -> None:
    assert not any(pending("records", [ack("extraction", records=0)]).values())


def needed(progress: Progress, kind: JobKind, document_id: str | None) -> dict[str, set[str]]:
    """What each stage must cover by definition: the cascade records -> facts -> memories, and
    a deleted document's passages in enrichment."""
    records, facts = progress.tombstoned["extraction"], progress.tombstoned["enrichment"]
    need = {"extraction": {SELECTION}, "enrichment": set(records), "memory": records | facts}
    if kind == "document" and document_id:
        need["ingest"] = {document_id}
        need["enrichment"].add(document_id)
        need["memory"].add(document_id)
    return need


CASES: list[tuple[JobKind, str | None]] = [("records", None), ("document", "doc_1")]


@pytest.mark.parametrize("seed", range(20))
def test_what_is_owed_is_kept_as_acknowledgements_arrive_in_any_order(seed: int) -> None:
    rng = random.Random(seed)
    records = [f"r{n}" for n in range(12)]
    facts = [f"f{n}" for n in range(8)]
    acks = [
        ack("extraction", tombstoned=set(records[:6])),
        ack("extraction", tombstoned=set(records[6:])),
    ]
    acks += [
        ack("enrichment", set(rng.sample(records, 4)), set(rng.sample(facts, 3))) for _ in range(5)
    ]
    acks += [ack("memory", set(rng.sample(records + facts + ["doc_1"], 6))) for _ in range(5)]
    acks += [ack("ingest", {"doc_1"}), ack("enrichment", {"doc_1"})]
    rng.shuffle(acks)
    progress = Progress()
    for n, one in enumerate(acks + acks[:3]):
        progress.add(f"e{n % len(acks)}", one)
        for kind, document_id in CASES:
            need = needed(progress, kind, document_id)
            assert progress.pending(kind, document_id) == {
                svc: ids - progress.covered[svc] for svc, ids in need.items()
            }
            assert progress.expected_counts(kind, document_id) == {
                svc: len(ids) for svc, ids in need.items()
            }


def test_a_conversation_job_waits_for_memory_alone() -> None:
    assert pending("conversation", [], "conv_1") == {"memory": {"conv_1"}}
    assert fold([]).expected_counts("conversation", "conv_1") == {"memory": 1}
    done = [ack("memory", source={"conv_1"}, tombstoned={"m1", "m2"}, memories=2)]
    assert pending("conversation", done, "conv_1") == {"memory": set()}
    assert pending("conversation", [ack("memory", source={"conv_2"})], "conv_1") == {
        "memory": {"conv_1"}
    }
