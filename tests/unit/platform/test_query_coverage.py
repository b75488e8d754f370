"""Every module that queries a collection has its queries held to the indexes by a test: a new
module with queries fails here until its store test exists and it is listed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
QUERY_METHODS = frozenset(
    {
        "find",
        "find_one",
        "count_documents",
        "update_one",
        "update_many",
        "replace_one",
        "delete_one",
        "delete_many",
        "aggregate",
        "distinct",
        "bulk_write",
        "find_one_and_update",
        "find_one_and_replace",
        "find_one_and_delete",
    }
)
COVERED = {
    "libs/platform/engram_platform/audit.py": "tests/unit/platform/test_indexes.py",
    "libs/platform/engram_platform/held.py": "tests/unit/ingest/test_indexes.py",
    "libs/platform/engram_platform/consuming/parked_store.py": (
        "tests/unit/platform/test_indexes.py"
    ),
    "libs/platform/engram_platform/idempotency.py": "tests/unit/platform/test_indexes.py",
    "libs/platform/engram_platform/outbox/embedded.py": "tests/unit/platform/test_indexes.py",
    "libs/platform/engram_platform/outbox/relay.py": "tests/unit/platform/test_indexes.py",
    "libs/platform/engram_platform/outbox/staging.py": "tests/unit/platform/test_indexes.py",
    "libs/platform/engram_platform/indexes.py": "tests/unit/platform/test_indexes.py",
    "services/connectors/engram_connectors/adapters/ledger.py": "tests/unit/connectors/test_indexes.py",
    "services/enrichment/engram_enrichment/adapters/store.py": "tests/unit/enrichment/test_indexes.py",
    "services/enrichment/engram_enrichment/adapters/passages.py": (
        "tests/unit/enrichment/test_indexes.py"
    ),
    "services/enrichment/engram_enrichment/adapters/relations.py": (
        "tests/unit/enrichment/test_indexes.py"
    ),
    "services/enrichment/engram_enrichment/adapters/reindex.py": (
        "tests/unit/enrichment/test_indexes.py"
    ),
    "services/extraction/engram_extraction/adapters/store.py": "tests/unit/extraction/test_indexes.py",
    "services/extraction/engram_extraction/adapters/passages.py": (
        "tests/unit/extraction/test_indexes.py"
    ),
    "services/extraction/engram_extraction/adapters/tombstones.py": "tests/unit/extraction/test_indexes.py",
    "services/extraction/engram_extraction/adapters/types.py": "tests/unit/extraction/test_indexes.py",
    "services/gateway/engram_gateway/adapters/prune_jobs.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/registry.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/submissions.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/edit_claims.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/dead_letters.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/telemetry.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/keys.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/usage.py": "tests/unit/gateway/test_indexes.py",
    "services/gateway/engram_gateway/adapters/tenant_limits.py": "tests/unit/gateway/test_indexes.py",
    "services/ingest/engram_ingest/adapters/store.py": "tests/unit/ingest/test_indexes.py",
    "services/memory/engram_memory/adapters/conversations.py": "tests/unit/memory/test_indexes.py",
    "services/memory/engram_memory/adapters/dedup.py": "tests/unit/memory/test_indexes.py",
    "services/memory/engram_memory/adapters/rows.py": "tests/unit/memory/test_indexes.py",
    "services/memory/engram_memory/adapters/retention.py": "tests/unit/memory/test_indexes.py",
    "services/memory/engram_memory/adapters/reindex.py": "tests/unit/memory/test_indexes.py",
}
NOT_COLLECTIONS = {
    "services/memory/engram_memory/api/lean.py": "`Dedup.find`, the service's dedup, not a collection",
}


def querying_modules() -> set[str]:
    """Source modules of the services and the platform lib calling a collection query method."""
    sources = [
        *ROOT.glob("services/*/engram_*/**/*.py"),
        *ROOT.glob("libs/platform/engram_platform/**/*.py"),
    ]
    found = set()
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in QUERY_METHODS
            ):
                found.add(str(path.relative_to(ROOT)))
                break
    return found


def test_every_querying_module_has_its_queries_checked() -> None:
    found = querying_modules() - set(NOT_COLLECTIONS)
    assert sorted(found - set(COVERED)) == [], "exercise its queries in a test_indexes.py"
    assert sorted(set(COVERED) - found) == []
    assert all((ROOT / test).exists() for test in COVERED.values())
