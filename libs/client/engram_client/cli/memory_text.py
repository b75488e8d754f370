"""How the `engram memory` commands print memories, counts and recall hits."""

from __future__ import annotations

from engram_client import models


def status_text(memory: models.Memory) -> str:
    """The id and status, and for a rejection why (a duplicate names the memory it repeats)."""
    if memory.duplicate_of:
        return f"{memory.memory_id}  {memory.status}  duplicate of {memory.duplicate_of}"
    return "  ".join(filter(None, (memory.memory_id, memory.status, memory.reason)))


def listing_text(page: models.MemoryPage, *, across_agents: bool) -> str:
    """One line per memory, led by its agent when the listing spans agents."""
    return "\n".join(memory_line(m, across_agents) for m in page.memories)


def memory_line(memory: models.Memory, across_agents: bool) -> str:
    line = f"{memory.memory_id}  {memory.status}  {memory.type or '-'}  {one_line(memory.content)}"
    return f"{memory.agent_id or '-'}  {line}" if across_agents else line


def count_text(counted: models.MemoryCount) -> str:
    """The total alone on the first line (easy to read in a script), then the breakdowns."""
    return "\n".join(
        [
            str(counted.count),
            f"by status: {tally(counted.by_status)}",
            f"by type: {tally(counted.by_type)}",
        ]
    )


def tally(counts: dict[str, int]) -> str:
    return " ".join(f"{name}={n}" for name, n in sorted(counts.items())) or "-"


def one_line(text: str | None) -> str:
    """Content on a single line, so each memory or hit stays one line of output."""
    return " ".join((text or "").split())


RECALL_HEADER = f"{'FUSED':>7}  {'DENSE':>7}  {'LEXICAL':>7}  MEMORY_ID  CONTENT"


def recall_text(result: models.Recall) -> str:
    """Each hit's scores, id and content under a header, then what the floor dropped."""
    rows = [hit_line(hit) for hit in result.results]
    header = [RECALL_HEADER] if rows else []
    summary = f"({len(rows)} hit(s), {result.mode}; {result.dropped_below_floor} below the floor)"
    return "\n".join([*header, *rows, summary])


def hit_line(hit: models.RecallHit) -> str:
    scores = hit.scores
    lexical = "-" if scores.lexical is None else f"{scores.lexical:.4f}"
    return (
        f"{scores.fused:>7.4f}  {scores.dense:>7.4f}  {lexical:>7}  "
        f"{hit.memory_id}  {one_line(hit.content)}"
    )


def history_text(history: models.MemoryHistory) -> str:
    """One line per version, oldest first: id, status, when, which key and role, and why."""
    lines = []
    for v in history.versions:
        when = v.created_at.isoformat() if v.created_at else "-"
        who = f"{v.author.key_id}/{v.author.role}" if v.author else "-"
        why = f"  {one_line(v.edit_reason)}" if v.edit_reason else ""
        lines.append(f"{v.memory_id}  {v.status}  {when}  {who}{why}")
    return "\n".join(lines)
