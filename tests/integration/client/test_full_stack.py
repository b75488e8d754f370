"""The whole cascade through the client and the CLI: document → records → facts → memories → pruned."""

from __future__ import annotations

import pytest

from engram_client import EngramClient, NotFound
from engram_client.models import KnowledgeSearch
from tests.integration.client.conftest import Stack, engram
from tests.support.polling import until

CSV = "id,name,city\nc1,Acme Freight,Paris\nc2,Beta Lines,Oslo\n"


def _entity_when_ready(client: EngramClient, entity_id: str, timeout: float = 60) -> None:
    def found() -> bool:
        try:
            client.get_entity(entity_id)
        except NotFound:
            return False
        return True

    until(found, f"entity {entity_id}", timeout)


def _search_when_indexed(client: EngramClient, query: str, timeout: float = 60) -> KnowledgeSearch:
    """Facts are embedded after they are written; search once they are."""
    return until(
        lambda: client.search_knowledge(query, top_k=3),
        f"a hit for {query!r}",
        timeout,
        ready=lambda found: found.results,
    )


def _seed(client: EngramClient) -> tuple[str, str, str]:
    """A document extracted into records and facts, and a memory derived from it."""
    uploaded = client.upload_document("carriers.csv", CSV)
    assert client.wait_for_document(uploaded.document_id, 90).status == "extracted"
    _entity_when_ready(client, "carrier:c1")
    agent = client.create_agent("derived")
    written = client.write_memory(
        agent.agent_id, "Acme Freight is based in Paris", derived_from=[uploaded.document_id]
    )
    assert client.wait_for_memory(agent.agent_id, written.memory_id, 60).status == "active"
    return uploaded.document_id, agent.agent_id, written.memory_id


def test_knowledge_is_read_through_the_client(full_stack: Stack) -> None:
    with EngramClient(full_stack.gateway.url, full_stack.key) as client:
        _seed(client)
        entity = client.get_entity("carrier:c1")
        assert {f.attribute for f in entity.facts} >= {"name", "city"}
        assert all(f.status == "active" and f.support for f in entity.facts)
        assert entity.article and "Acme Freight" in entity.article
        carriers = {e["entity_id"] for e in client.iter_entities(type="carrier", page_size=1)}
        assert carriers == {"carrier:c1", "carrier:c2"}
        assert client.list_contradictions(status="open") == []
        hits = _search_when_indexed(client, "Acme Freight")
        assert hits.results[0].entity_id == "carrier:c1" and hits.results[0].status == "active"
        with pytest.raises(NotFound):
            client.get_entity("carrier:nope")


def test_a_deleted_document_is_followed_to_verified_empty(full_stack: Stack) -> None:
    env = {"ENGRAM_URL": full_stack.gateway.url, "ENGRAM_API_KEY": full_stack.key}
    with EngramClient(full_stack.gateway.url, full_stack.key) as client:
        document_id, agent_id, memory_id = _seed(client)
        job_id = client.delete_document(document_id).prune_job_id
        followed = engram("prune-job", job_id, "--follow", "--timeout", "60", "--json", env=env)
        state = client.get_prune_job(job_id)
        assert followed.returncode == 0, state.model_dump_json()
        assert state.verified_empty is True
        assert client.get_document(document_id).status == "deleted"
        assert client.get_memory(agent_id, memory_id).status == "withdrawn"
