"""`engram docs upload | upload-dir | status | delete | passages`: documents through the
gateway."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes, knowledge
from engram_client.cli.common import UsageError, add_wait_timeout, client_from
from engram_client.cli.output import ProgressBar, StatusLine, emit, fail, note
from engram_client.cli.prune import follow_job, job_exit_code, show_job
from engram_client.errors import EngramError
from engram_client.sync_client import EngramClient
from engram_client.uploads import MIME_BY_SUFFIX, files_in, guess_mime


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `docs` commands."""
    docs = commands.add_parser("docs", help="upload documents and check their extraction")
    actions = docs.add_subparsers(dest="action", required=True, metavar="ACTION")

    upload = actions.add_parser(
        "upload",
        help="upload one or more files",
        description="Upload files (multipart). Prints `DOCUMENT_ID  NAME` per file. Re-uploading "
        "the same name makes a new version of the same document.",
    )
    upload.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files to upload")
    _upload_options(upload)
    upload.set_defaults(handler=upload_files)

    folder = actions.add_parser(
        "upload-dir",
        help="upload every supported file in a folder",
        description="Upload the files of a folder (recursively; dot-files skipped). Only types "
        f"the gateway reads ({', '.join(sorted(MIME_BY_SUFFIX))}) unless --all.",
    )
    folder.add_argument("folder", type=Path, metavar="DIR", help="the folder to upload")
    folder.add_argument("--no-recursive", action="store_true", help="only the top level")
    folder.add_argument("--all", action="store_true", help="send every file, whatever its type")
    _upload_options(folder)
    folder.set_defaults(handler=upload_folder)

    status = actions.add_parser(
        "status",
        help="show a document's status",
        description="Show status (pending, extracted, failed, deleted), versions and counts. "
        "With --wait, exit 1 if extraction failed.",
    )
    status.add_argument("document_id", metavar="ID", help="the id `docs upload` printed")
    status.add_argument("--wait", action="store_true", help="wait until extracted/failed/deleted")
    add_wait_timeout(status, 120)
    status.set_defaults(handler=document_status)

    delete = actions.add_parser(
        "delete",
        help="delete a document and everything derived from it",
        description="Start the document's prune job and print its id; --follow waits for "
        "verified_empty (exit 0 only if true).",
    )
    delete.add_argument("document_id", metavar="ID")
    delete.add_argument("--follow", action="store_true", help="follow the prune job to the end")
    add_wait_timeout(delete, 300)
    delete.set_defaults(handler=delete_document)
    knowledge.register_passages(actions)


def _upload_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mime", help="override the mime type guessed from the file name")
    parser.add_argument(
        "--as-json", action="store_true", help="send JSON (text/base64) instead of multipart"
    )
    parser.add_argument("--wait", action="store_true", help="wait until each file is extracted")
    add_wait_timeout(parser, 120)


def upload_files(args: argparse.Namespace) -> int:
    """Upload each PATH; unreadable paths are a usage error before anything is sent."""
    for path in args.paths:
        if not path.is_file():
            raise UsageError(f"{path} is not a readable file")
    return _upload_all(args, list(args.paths))


def upload_folder(args: argparse.Namespace) -> int:
    """Upload the folder's files, skipping types the gateway would refuse unless --all."""
    if not args.folder.is_dir():
        raise UsageError(f"{args.folder} is not a folder")
    found = list(files_in(args.folder, recursive=not args.no_recursive))
    chosen = [p for p in found if args.all or args.mime or p.suffix.lower() in MIME_BY_SUFFIX]
    if len(chosen) < len(found):
        note(f"skipping {len(found) - len(chosen)} file(s) of unsupported types (use --all)")
    if not chosen:
        fail(f"no files to upload in {args.folder}", "check the folder or pass --all")
        return exit_codes.USAGE
    return _upload_all(args, chosen)


def _upload_all(args: argparse.Namespace, paths: list[Path]) -> int:
    """Upload in order with a progress bar; keep going past failures and report them."""
    results: list[dict[str, Any]] = []
    worst = exit_codes.OK
    bar = ProgressBar(len(paths), "uploading")
    bar.draw()
    with client_from(args) as client:
        for path in paths:
            outcome = _upload_one(client, path, args)
            results.append(outcome)
            if outcome.get("exit_code", 0) and worst == exit_codes.OK:
                worst = outcome["exit_code"]
            bar.advance(path.name)
        bar.close()
    for item in results:
        item.pop("exit_code", None)
    emit(results, args.json, _uploads_text)
    failed = sum(1 for r in results if r.get("error"))
    if failed:
        fail(f"{failed} of {len(results)} upload(s) failed", "see the lines above; fix and re-run")
    return worst


def _upload_one(client: EngramClient, path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One file's outcome: its id (and status with --wait), or the error, never its content."""
    try:
        accepted = client.upload_file(
            path, mime=args.mime or guess_mime(path), multipart=not args.as_json
        )
        item: dict[str, Any] = {
            "path": str(path),
            "document_id": accepted.document_id,
            "version": accepted.version,
            "status": accepted.status,
        }
        if args.wait:
            done = client.wait_for_document(accepted.document_id, args.timeout)
            item["status"] = done.status
            if done.status == "failed":
                item["error"] = done.error or "extraction failed"
                item["exit_code"] = exit_codes.API_ERROR
        return item
    except OSError as exc:
        return {
            "path": str(path),
            "error": f"cannot read: {exc.strerror}",
            "exit_code": exit_codes.USAGE,
        }
    except EngramError as exc:
        return {"path": str(path), "error": str(exc), "exit_code": exit_codes.for_error(exc)}


def _uploads_text(results: list[dict[str, Any]]) -> str:
    lines = []
    for r in results:
        if r.get("error"):
            lines.append(f"FAILED  {r['path']}  {r['error']}")
        else:
            lines.append(f"{r['document_id']}  {r['status']}  {r['path']}")
    return "\n".join(lines)


def document_status(args: argparse.Namespace) -> int:
    """Print the document's status; with --wait, poll until it is final."""
    with client_from(args) as client:
        if args.wait:
            line = StatusLine()
            try:
                document = client.wait_for_document(
                    args.document_id,
                    args.timeout,
                    on_progress=lambda d: line.show(f"{d.document_id}: {d.status}"),
                )
            finally:
                line.close()
        else:
            document = client.get_document(args.document_id)
    emit(document, args.json, _document_text)
    if args.wait and document.status == "failed":
        return exit_codes.API_ERROR
    return exit_codes.OK


def _document_text(d: models.Document) -> str:
    version = d.latest_version or d.version or "-"
    text = (
        f"{d.document_id}  {d.status}  version={version}  records={d.record_count}"
        f"  rejected={d.rejected_count}"
    )
    return text + (f"\nerror: {d.error}" if d.error else "")


def delete_document(args: argparse.Namespace) -> int:
    """Start the document's prune job; optionally follow it to verified_empty."""
    with client_from(args) as client:
        accepted = client.delete_document(args.document_id)
        if not args.follow:
            emit(accepted, args.json, lambda a: a.prune_job_id)
            return exit_codes.OK
        job = follow_job(client, accepted.prune_job_id, args.timeout)
    emit(job, args.json, show_job)
    return job_exit_code(job)
