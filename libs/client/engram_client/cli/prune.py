"""`engram prune` and `engram prune-job`: start a prune and follow it to verified_empty."""

from __future__ import annotations

import argparse

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import add_wait_timeout, client_from
from engram_client.cli.output import StatusLine, emit
from engram_client.sync_client import EngramClient


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `prune` and `prune-job`."""
    prune = commands.add_parser(
        "prune",
        help="prune records (and everything derived from them)",
        description="Start a prune job and print its id. With --follow, wait until the job "
        "completes and exit 0 only if verified_empty is true (5 if it completed without it).",
    )
    selection = prune.add_mutually_exclusive_group(required=True)
    selection.add_argument(
        "--older-than-days", type=int, metavar="N", help="records not updated for N days"
    )
    selection.add_argument(
        "--record-id",
        dest="record_ids",
        action="extend",
        nargs="+",
        metavar="ID",
        help="record ids (several after one flag, or the flag repeated)",
    )
    selection.add_argument(
        "--document-id", metavar="ID", help="every record from one document (filter)"
    )
    prune.add_argument("--follow", action="store_true", help="follow the job to the end")
    add_wait_timeout(prune, 300)
    prune.set_defaults(handler=start_prune)

    job = commands.add_parser(
        "prune-job",
        help="show a prune job",
        description="Show a prune job's counts, acknowledgements and verified_empty.",
    )
    job.add_argument("job_id", metavar="JOB_ID")
    job.add_argument("--follow", action="store_true", help="follow the job to the end")
    job.add_argument(
        "--full-selector",
        action="store_true",
        help="list every selected record id (by default the first 20 of each list and the sizes)",
    )
    add_wait_timeout(job, 300)
    job.set_defaults(handler=prune_job)


def start_prune(args: argparse.Namespace) -> int:
    """Start the job; print its id, or follow it and report verification."""
    with client_from(args) as client:
        accepted = client.start_prune(
            older_than_days=args.older_than_days,
            record_ids=args.record_ids,
            filter={"document_id": args.document_id} if args.document_id else None,
        )
        if not args.follow:
            emit(accepted, args.json, lambda a: a.prune_job_id)
            return exit_codes.OK
        job = follow_job(client, accepted.prune_job_id, args.timeout)
    emit(job, args.json, show_job)
    return job_exit_code(job)


def prune_job(args: argparse.Namespace) -> int:
    """Show (or follow) a job; the exit code reflects verified_empty once it has completed."""
    with client_from(args) as client:
        if args.follow:
            job = follow_job(client, args.job_id, args.timeout)
        else:
            job = client.get_prune_job(args.job_id, full_selector=args.full_selector)
    emit(job, args.json, show_job)
    return job_exit_code(job) if job.status != "running" else exit_codes.OK


def follow_job(client: EngramClient, job_id: str, timeout: float) -> models.PruneJob:
    """Wait for completion, redrawing a line with the acknowledgements still missing."""
    line = StatusLine()
    try:
        return client.wait_for_prune_job(
            job_id, timeout, on_progress=lambda j: line.show(_progress(j))
        )
    finally:
        line.close()


def _progress(job: models.PruneJob) -> str:
    waiting = sum(a.pending for a in job.acknowledgements.values())
    return f"{job.prune_job_id}: {job.status}, {waiting} acknowledgement(s) pending"


def job_exit_code(job: models.PruneJob) -> int:
    """0 only when the job completed and everything derived is verified gone."""
    if job.status == "completed" and job.verified_empty is True:
        return exit_codes.OK
    return exit_codes.NOT_VERIFIED


def show_job(job: models.PruneJob) -> str:
    """Status, counts per stage and what could not be verified."""
    counts = ", ".join(f"{k}={v}" for k, v in sorted(job.counts.items())) or "none"
    lines = [
        f"{job.prune_job_id}  {job.status}  verified_empty={job.verified_empty}",
        f"counts: {counts}",
    ]
    for service, ack in sorted(job.acknowledgements.items()):
        lines.append(f"  {service}: {ack.expected - ack.pending}/{ack.expected} acknowledged")
    unverified = (job.verification or {}).get("unverified") or []
    if unverified:
        lines.append(f"unverified: {', '.join(unverified)}")
    return "\n".join(lines)
