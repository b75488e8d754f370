"""A newer version of a document retires the records it no longer asserts, over the real stack."""

from __future__ import annotations

from typing import Any

from tests.conftest import Infra
from tests.integration.extraction.conftest import Pipeline
from tests.support.kafka import read_all, wait_for

V1 = "id,name,city\nA,Alpha,Oslo\nB,Beta,Riga\nC,Gamma,Rome\n"
V2 = "id,name,city\nA,Alpha,Oslo\nC,Gamma,Turin\n"


async def test_v2_without_b_tombstones_b_revises_c_and_leaves_a_alone(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    prefix = names["ENGRAM_TOPIC_PREFIX"]
    first = await pipeline.submit("carriers.csv", V1)
    await pipeline.document_when(first["document_id"], lambda d: d["status"] == "extracted")
    ids = {r["entity_id"]: r["record_id"] for r in await pipeline.records(type="carrier")}

    second = await pipeline.submit("carriers.csv", V2)
    assert second["document_id"] == first["document_id"] and second["version"] != first["version"]
    await pipeline.document_when(
        first["document_id"],
        lambda d: d["latest_version"] == second["version"] and d["status"] == "extracted",
    )
    (tombstoned,) = await wait_for(
        infra.bootstrap,
        f"{prefix}engram.record-events.v1",
        lambda m: m.get("event_type") == "record.tombstoned",
    )
    assert tombstoned["payload"]["record_id"] == ids["carrier:B"]
    assert tombstoned["payload"]["reason"] == "absent_from_version"
    assert tombstoned["payload"]["document_id"] == first["document_id"]

    events = await read_all(infra.bootstrap, f"{prefix}engram.record-events.v1", settle=2.0)
    upserts: dict[str, list[int]] = {}
    for m in events:
        if m and m.get("event_type") == "record.upserted":
            upserts.setdefault(m["payload"]["entity_id"], []).append(m["payload"]["revision"])
    assert upserts == {"carrier:A": [1], "carrier:B": [1], "carrier:C": [1, 2]}

    compacted = await read_all(infra.bootstrap, f"{prefix}engram.records.v1", settle=2.0)
    latest: dict[str, Any] = {}
    for m in compacted:
        if m is not None:
            latest[m["payload"]["record_id"]] = m["payload"]
    assert compacted.count(None) == 1, "one Kafka tombstone, for B"
    assert latest[ids["carrier:C"]]["revision"] == 2

    heads = {r["entity_id"]: r for r in await pipeline.records(type="carrier")}
    assert {k: (r["status"], r["revision"]) for k, r in heads.items()} == {
        "carrier:A": ("active", 1),
        "carrier:B": ("tombstoned", 1),
        "carrier:C": ("active", 2),
    }
    assert heads["carrier:A"]["lineage"]["document_version"] == first["version"]
    assert heads["carrier:C"]["attributes"]["city"] == "Turin"
    assert not heads["carrier:B"]["attributes"], "a marker keeps hashes, not content"
