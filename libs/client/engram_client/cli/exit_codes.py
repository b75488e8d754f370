"""Exit codes scripts can rely on; `engram --help` prints this table."""

from __future__ import annotations

from engram_client.errors import (
    Conflict,
    ConnectionFailed,
    EngramError,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    QuotaExceeded,
    RateLimited,
    ServiceUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
    WaitTimeout,
)

OK = 0
API_ERROR = 1
USAGE = 2
NOT_FOUND = 3
TIMEOUT = 4
NOT_VERIFIED = 5
INTERRUPTED = 130

TABLE = """exit codes:
  0  success (for `prune --follow`: the job completed with verified_empty=true)
  1  the API refused or failed the request, or the gateway could not be reached
  2  usage error: bad arguments, or a local file that cannot be read or parsed
  3  not found: the id does not exist for this API key's tenant
  4  timed out waiting (--wait / --follow); the work may still finish later
  5  a prune job completed but verified_empty is not true, or a reindex failed
  130 interrupted (Ctrl-C)
"""


def for_error(exc: EngramError) -> int:
    """The exit code for an error the client raised."""
    if isinstance(exc, NotFound):
        return NOT_FOUND
    if isinstance(exc, WaitTimeout):
        return TIMEOUT
    return API_ERROR


def hint_for(exc: EngramError) -> str:
    """What the operator can do about it."""
    hints: list[tuple[type[EngramError], str]] = [
        (Unauthorized, "set ENGRAM_API_KEY, or run `make run` so .engram/run.env exists"),
        (NotFound, "check the id and that it belongs to this API key's tenant"),
        (ConnectionFailed, "is the gateway up? point ENGRAM_URL or --url at it"),
        (ServiceUnavailable, "a platform service is down or starting; retry shortly"),
        (RateLimited, "too many requests; retry later"),
        (PayloadTooLarge, "split the input into smaller files or batches"),
        (UnsupportedMediaType, "use .csv .tsv .md .txt .json .ndjson, or pass --mime"),
        (Conflict, "the resource already changed state; check its status"),
        (QuotaExceeded, "the tenant's storage quota is used up; delete data or ask the operator"),
        (
            Forbidden,
            "this key lacks the role: `engram keys` needs the admin role, `engram dlq` the ops role",
        ),
        (WaitTimeout, "raise --timeout, or check the status again later"),
    ]
    if exc.status is None and isinstance(exc, Unauthorized):
        return ""
    for cls, hint in hints:
        if isinstance(exc, cls):
            return hint
    if isinstance(exc, ValidationFailed):
        where = [
            ".".join(str(p) for p in e.get("loc", [])) + ": " + str(e.get("msg", ""))
            for e in exc.errors[:3]
        ]
        return "fix the input" + (": " + "; ".join(where) if where else "")
    return "see the gateway's logs for this request"
