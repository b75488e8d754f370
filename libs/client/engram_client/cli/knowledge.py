"""`engram knowledge search|relations|path|assert|withdraw` and `engram docs passages`: what the
platform knows, with citations and relations, and a curator's edits of it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import client_from
from engram_client.cli.output import emit

KINDS = ("fact", "article_section", "passage")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `knowledge` commands."""
    knowledge = commands.add_parser("knowledge", help="search facts, article sections and passages")
    actions = knowledge.add_subparsers(dest="action", required=True, metavar="ACTION")
    search = actions.add_parser(
        "search",
        help="search the knowledge built from documents and records",
        description="Print one line per hit, best first: a passage as `passage  SCORE  NAME  "
        "HEADING > PATH  p.PAGE  [START:END]` and its text, a fact as `fact  SCORE  ENTITY  "
        "ATTRIBUTE = VALUE`, a section as `article_section  SCORE  ENTITY  ATTRIBUTE`.",
    )
    search.add_argument("query", metavar="QUERY", help="what to look for, in words")
    search.add_argument(
        "--kinds", nargs="+", choices=KINDS, metavar="KIND", help=f"only these: {', '.join(KINDS)}"
    )
    search.add_argument("--top-k", type=int, default=5, help="at most this many hits (default 5)")
    search.add_argument("--mode", choices=("hybrid", "dense", "lexical"), help="how hits rank")
    search.add_argument("--min-score", type=float, help="the dense score floor (-1 to 1)")
    search.add_argument(
        "--expand",
        type=int,
        choices=(1, 2),
        help="follow each hit with the facts of entities this many relations away",
    )
    search.add_argument("--valid-at", help="facts as true then (an ISO date or date-time)")
    search.add_argument("--as-of", help="facts as Engram knew them then (ISO date or time)")
    search.set_defaults(handler=search_knowledge)
    relations = actions.add_parser(
        "relations",
        help="list an entity's relations",
        description="Print one line per relation, nearest first: `DEPTH  FROM  -PREDICATE->  TO` "
        "(`<-PREDICATE-` when walked against its direction), its status, and `unresolved` while "
        "TO does not exist yet. 404 (exit 3) for an entity that does not exist.",
    )
    relations.add_argument("entity_id", metavar="ENTITY", help="e.g. supplier:s1")
    relations.add_argument("--direction", choices=("out", "in", "both"), help="default both")
    relations.add_argument("--predicate", help="only relations of this predicate")
    relations.add_argument("--depth", type=int, choices=(1, 2, 3), help="hops (default 1)")
    relations.add_argument("--limit", type=int, help="at most this many (default 100)")
    relations.add_argument("--cursor", help="continue from the `more:` cursor printed")
    relations.add_argument("--valid-at", help="the relations true then (an ISO date or time)")
    relations.add_argument("--as-of", help="the relations Engram knew then (ISO date or time)")
    relations.set_defaults(handler=entity_relations)
    path = actions.add_parser(
        "path",
        help="the shortest paths between two entities",
        description="Print each shortest path as its hops, one per line, or `no path`.",
    )
    path.add_argument("start", metavar="FROM")
    path.add_argument("goal", metavar="TO")
    path.add_argument("--max-depth", type=int, help="at most this many hops (1-4, default 3)")
    path.set_defaults(handler=find_paths)
    asserting = actions.add_parser(
        "assert",
        help="assert a fact as a curator (key role curator or admin)",
        description="Queue a value of ENTITY's ATTRIBUTE as a record of source `human` carrying "
        "this key's id, the time and --reason; print `accepted  ENTITY  ATTRIBUTE = VALUE`. "
        'VALUE is read as JSON when it parses (42, true, "text"), else as text.',
    )
    asserting.add_argument("entity_id", metavar="ENTITY", help="e.g. carrier:c1")
    asserting.add_argument("attribute", metavar="ATTRIBUTE")
    asserting.add_argument("value", metavar="VALUE")
    asserting.add_argument("--reason", required=True, help="why (kept with the edit)")
    asserting.set_defaults(handler=assert_fact)
    withdraw = actions.add_parser(
        "withdraw",
        help="withdraw a fact as a curator (key role curator or admin)",
        description="Queue a withdrawal of one value (--value) or every value of ENTITY's "
        "ATTRIBUTE; a value documents still assert is contested (a contradiction opens).",
    )
    withdraw.add_argument("entity_id", metavar="ENTITY")
    withdraw.add_argument("attribute", metavar="ATTRIBUTE")
    withdraw.add_argument("--value", help="the value to withdraw (JSON when it parses)")
    withdraw.add_argument("--reason", required=True, help="why (kept with the edit)")
    withdraw.set_defaults(handler=withdraw_fact)


def register_passages(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `docs passages` under the `docs` commands."""
    passages = actions.add_parser(
        "passages",
        help="list a document's passages",
        description="Print the current version's passages in order: `ORDINAL  HEADING > PATH  "
        "p.PAGE  [START:END]` and the text. 404 (exit 3) while it has none.",
    )
    passages.add_argument("document_id", metavar="ID", help="the id `docs upload` printed")
    passages.add_argument("--after", type=int, help="start after this ordinal (next_after)")
    passages.add_argument("--limit", type=int, help="at most this many (the gateway caps 500)")
    passages.set_defaults(handler=list_passages)


def search_knowledge(args: argparse.Namespace) -> int:
    """Print the hits, passages with their citation."""
    with client_from(args) as client:
        found = client.search_knowledge(
            args.query,
            top_k=args.top_k,
            min_score=args.min_score,
            mode=args.mode,
            kinds=args.kinds,
            expand=args.expand,
            valid_at=args.valid_at,
            as_of=args.as_of,
        )
    emit(found, args.json, _hits_text)
    return exit_codes.OK


def entity_relations(args: argparse.Namespace) -> int:
    """Print one page of the entity's relations."""
    with client_from(args) as client:
        page = client.entity_relations(
            args.entity_id,
            direction=args.direction,
            predicate=args.predicate,
            depth=args.depth,
            limit=args.limit,
            cursor=args.cursor,
            valid_at=args.valid_at,
            as_of=args.as_of,
        )
    emit(page, args.json, _relations_text)
    return exit_codes.OK


def find_paths(args: argparse.Namespace) -> int:
    """Print the shortest paths."""
    with client_from(args) as client:
        found = client.find_paths(args.start, args.goal, max_depth=args.max_depth)
    emit(found, args.json, _paths_text)
    return exit_codes.OK


def _hop(relation: models.Relation) -> str:
    arrow = (
        f"-{relation.predicate}->" if relation.direction == "out" else f"<-{relation.predicate}-"
    )
    flags = "" if relation.resolved else "  unresolved"
    return f"{relation.from_}  {arrow}  {relation.to}  {relation.status}{flags}"


def _relations_text(page: models.RelationPage) -> str:
    lines = [f"{r.depth}  {_hop(r)}" for r in page.relations] or ["no relations"]
    if page.next_cursor:
        lines.append(f"more: --cursor {page.next_cursor}")
    return "\n".join(lines)


def _paths_text(found: models.Paths) -> str:
    lines: list[str] = []
    for number, path in enumerate(found.paths, start=1):
        lines.append(f"path {number} ({path.length} hops)")
        lines += [f"  {_hop(edge)}" for edge in path.edges]
    return "\n".join(lines) or "no path"


def scalar(raw: str) -> Any:
    """A value as JSON when it parses to a scalar, else the text itself."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return raw if isinstance(value, (dict, list)) else value


def assert_fact(args: argparse.Namespace) -> int:
    """Queue the curator's value and print what was queued."""
    with client_from(args) as client:
        edit = client.assert_fact(
            args.entity_id, args.attribute, scalar(args.value), reason=args.reason
        )
    emit(edit, args.json, _edit_text)
    return exit_codes.OK


def withdraw_fact(args: argparse.Namespace) -> int:
    """Queue the curator's withdrawal and print what was queued."""
    with client_from(args) as client:
        if args.value is None:
            edit = client.withdraw_fact(args.entity_id, args.attribute, reason=args.reason)
        else:
            edit = client.withdraw_fact(
                args.entity_id, args.attribute, reason=args.reason, value=scalar(args.value)
            )
    emit(edit, args.json, _edit_text)
    return exit_codes.OK


def _edit_text(edit: models.FactEdit) -> str:
    shown = "(every value)" if edit.value is None else json.dumps(edit.value)
    return f"{edit.status}  {edit.action}  {edit.entity_id}  {edit.attribute} = {shown}"


def list_passages(args: argparse.Namespace) -> int:
    """Print one page of the document's passages."""
    with client_from(args) as client:
        page = client.list_passages(args.document_id, after=args.after, limit=args.limit)
    emit(page, args.json, _passages_text)
    return exit_codes.OK


def _where(path: list[str] | None, page: int | None, start: int, end: int) -> str:
    heading = " > ".join(path or []) or "-"
    return f"{heading}  p.{page if page is not None else '-'}  [{start}:{end}]"


def _hits_text(found: models.KnowledgeSearch) -> str:
    lines = []
    for hit in found.results:
        score = f"{hit.score:.3f}" if hit.score is not None else "-"
        if hit.kind == "passage":
            span = hit.span or models.Span(start=0, end=0)
            where = _where(hit.heading_path, hit.page, span.start, span.end)
            lines.append(f"passage  {score}  {hit.name}  {where}\n  {hit.text}")
        elif hit.kind == "fact":
            line = f"fact  {score}  {hit.entity_id}  {hit.attribute} = {hit.value}"
            if hit.expanded:
                line += f"  (related to {hit.expanded['from']}, {hit.expanded['distance']} away)"
            lines.append(line)
        else:
            lines.append(f"{hit.kind}  {score}  {hit.entity_id}  {hit.attribute}")
    return "\n".join(lines) or "no results"


def _passages_text(page: models.PassagePage) -> str:
    lines = [f"{page.document_id}  version={page.version}  {page.name}"]
    for p in page.passages:
        lines.append(f"{p.ordinal}  {_where(p.heading_path, p.page, p.start, p.end)}\n  {p.text}")
    if page.next_after is not None:
        lines.append(f"more: --after {page.next_after}")
    return "\n".join(lines)
