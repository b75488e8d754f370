"""Bad documents: seconds and peak memory extraction's reader spends refusing each one.

Run: python bench/bad_documents.py

Each input (the e2e test's, from tests/support/documents.py, plus a long Word file that is read)
is written to a file, then read by `engram_extraction.domain.reading.read` in a fresh process,
so one case's memory never counts towards another's and building the input is not measured.
The child reports its peak RSS after imports (the baseline) and after reading, and the reading's
wall time. Needs no broker or database. Writes bench-results/bad_documents.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.documents import (  # noqa: E402
    docx_bytes,
    encrypted_pdf,
    flate_bomb_pdf,
    many_parts_docx,
    nested_html,
    zip_bomb_docx,
)

RESULTS = ROOT / "bench-results"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
CHILD = """
import json, resource, sys, time
from engram_extraction.domain.candidates import ExtractionFailed, Limits
from engram_extraction.domain.reading import read
content = open(sys.argv[1], "rb").read()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    reading = read(content, sys.argv[2], sys.argv[3], Limits())
    outcome = f"read: {len(reading.passages)} passages"
except ExtractionFailed as failed:
    outcome = f"failed: {failed}"
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps([outcome, seconds, base // 1024, peak // 1024]))
"""


def cases() -> list[tuple[str, str, bytes]]:
    """(name, mime, content) of each input measured."""
    long_word = docx_bytes([("Normal", f"Paragraph {n} of a long file.") for n in range(50_000)])
    return [
        ("secret.pdf", "application/pdf", encrypted_pdf()),
        ("bomb.pdf", "application/pdf", flate_bomb_pdf()),
        ("bomb.docx", DOCX, zip_bomb_docx()),
        ("bomb64.docx", DOCX, zip_bomb_docx(64 * 1024 * 1024)),
        ("parts.docx", DOCX, many_parts_docx()),
        ("deep.html", "text/html", nested_html(200_000)),
        ("huge.html", "text/html", b"<div>" * 2_000_000),
        ("flat.html", "text/html", b"<p>a</p>" * 600_000),
        ("long.docx", DOCX, long_word),
    ]


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, mime, content in cases():
            path = Path(folder) / name
            path.write_bytes(content)
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(path), mime, name],
                capture_output=True,
                text=True,
                check=True,
            )
            outcome, seconds, base_mb, peak_mb = json.loads(done.stdout)
            rows.append(
                {
                    "name": name,
                    "bytes": len(content),
                    "outcome": outcome,
                    "seconds": round(seconds, 2),
                    "baseline_rss_mb": base_mb,
                    "peak_rss_mb": peak_mb,
                }
            )
            print(f"{name:12} {len(content):>10} B  {seconds:6.2f} s  {peak_mb:5} MB  {outcome}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bad_documents.json").write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
