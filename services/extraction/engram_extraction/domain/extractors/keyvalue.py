"""`key: value` text: consecutive lines form one record; a blank line starts the next."""

from __future__ import annotations

import re

from engram_events.ids import Scalar
from engram_extraction.domain.candidates import Candidate, Extraction, Limits, check_values

_PAIR = re.compile(r"^\s*([^:#\s][^:]{0,199}?)\s*:\s*(.*?)\s*$")


def extract_key_values(text: str, limits: Limits) -> Extraction:
    """One candidate per block of `key: value` lines; other lines are ignored."""
    candidates: list[Candidate] = []
    block: dict[str, Scalar] = {}
    start = 0
    for number, line in enumerate([*text.splitlines(), ""], start=1):
        match = _PAIR.match(line)
        if match and match.group(2):
            if not block:
                start = number
            block[match.group(1)] = match.group(2)
        elif not line.strip() and block:
            candidates.append(check_values(Candidate(f"line {start}", block), limits))
            block = {}
    return Extraction("key_value", candidates)
