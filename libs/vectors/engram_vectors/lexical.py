"""The lexical encoder: terms that keep identifiers whole, hashed into BM25-weighted sparse vectors.

Dense vectors lose exact identifiers (ORD-48213 among 500 order memories), so each memory also
gets a sparse vector of its terms; the engine applies IDF at query time.

How a text becomes terms:

- At most MAX_TEXT_CHARS characters and MAX_TOKENS tokens are read; control characters become
  spaces, format characters (zero-width, bidi, soft hyphen) and lone surrogates are removed,
  then NFKC and casefold; the typographic apostrophe becomes ASCII.
- Tokens are split on whitespace; tokens longer than MAX_TOKEN_CHARS are skipped (blobs, not
  words); surrounding punctuation and symbols (quotes, brackets, currency signs, emoji, a URL's
  trailing slash, a sentence's full stop) are stripped, then a possessive 's.
- URLs (scheme://, or www. with a path) yield the URL, its host, its path segments and its
  query values; emails yield the address, the local part and the domain, each split further
  like any token.
- Versions (v1.2.3, 1.2.3) yield themselves and, with a v, the bare number; numbers grouped by
  thousands ($1,200, 1,200) become one number without commas (1200); decimals (99.9) stay one
  term; a number with a unit glued on (12kg, 3.5mm) yields itself, the number and the unit.
- Any other token is split at punctuation (SEPARATORS; an apostrophe inside a word is not one):
  the whole, when it has parts, and each part. A part of exactly one letter run and one digit
  run (ord48213, 12kg, 1960s) also yields both runs.
- A term is an identifier when it contains a digit beside letters or punctuation, or an
  underscore or @, or is a number of three or more digits; URLs and emails are identifiers.
- Other terms are words: English STOPWORDS are dropped, plurals are folded (fold_plural), and
  one-letter words are dropped; numbers of one or two digits are kept (Android 12, gate 5).
  Encoder v2 then stems each word of letters only with the English Snowball stemmer
  (regulates, regulation, regulated all become regul); identifiers are never stemmed.
- Terms longer than MAX_TERM_CHARS are dropped (a long URL is still found by its host and path
  segments), and a text yields at most MAX_TERMS terms.

Scripts written without spaces (Chinese, Japanese, Thai) get one term per run between spaces
or punctuation: they are matched only as whole runs.

How terms become weights (BM25, k1 1.2, b 0.75, the IDF applied by the engine at query time):
an encoder is stateless, so the average length BM25 divides by is a constant of the encoder.
v1 used 7.3 terms (the short memories of tests/fixtures/retrieval), which treats a 200-word
abstract as 30 times too long; v2 uses 100 and stems words: on BEIR SciFact nDCG@10 goes from
0.622 to 0.696 (docs/performance.md, 2026-12-05), short memories rank as before.

A collection stores the id of the encoder it was built with; every encoder stays here, so a
service encodes documents and queries with the one its collection holds.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass

import snowballstemmer

from engram_vectors.models import SparseVector

MAX_TEXT_CHARS = 32_768
"""Memory content is at most 32,000 characters (the memory service's ceiling); more is ignored."""
MAX_TOKENS = 2048
"""Tokens read per text: a 32,000-character memory reaches MAX_TERMS well before that."""
MAX_TOKEN_CHARS = 256
"""Longer runs without a space are blobs (base64, minified code), not words or identifiers."""
MAX_TERM_CHARS = 64
"""Longer terms are dropped: their parts still match, and a hostile text stays cheap."""
MAX_TERMS = 1024
"""Terms per text; a 200-character memory yields about 20 to 35."""

TOKEN_CACHE_SIZE = 16_384
TERM_CACHE_SIZE = 65_536
"""Tokens and terms remembered (a few MB at most): a memory's common words then cost little."""

STEM_CACHE_SIZE = 65_536
"""Words whose stems are remembered: stemming a new word costs a few microseconds."""

BM25_K1 = 1.2
BM25_B = 0.75


@dataclass(frozen=True)
class Encoder:
    """What an encoder id stands for: the average length BM25 divides by, and stemming or not."""

    id: str
    avg_terms: float
    stems: bool


V1 = Encoder("engram-lexical-v1", avg_terms=7.3, stems=False)
"""The first encoder: 7.3 terms on average (the 60 memories of tests/fixtures/retrieval)."""
V2 = Encoder("engram-lexical-v2", avg_terms=100.0, stems=True)
"""Stemmed words and 100 terms on average: SciFact nDCG@10 0.689 to 0.700 from 64 to 165 terms,
the short memories' hit@1 unchanged from 32 up; 100 sits between memories and abstracts."""
ENCODERS = {encoder.id: encoder for encoder in (V1, V2)}
"""Every encoder a stored collection may name; never remove one (collections hold its vectors)."""
LEXICAL_ENCODER = V2.id
"""The encoder of new collections; add an Encoder whenever tokens or weights change."""

STOPWORDS = frozenset(
    """a an the of to in on at for from by with about as into than then and or but not no
    is are was were be been being am do does did has have had will would can could should
    shall may might must what which who whom whose when where why how this that these those
    there here it its i me my mine we us our you your he him his she her they them their
    so if any some all each every""".split()
)
"""English function words (negations too: matching terms cannot use them); content words stay."""

SEPARATORS = re.compile(
    r"""[!"#$%&()*+,\-./:;<=>?@\[\\\]^_`{|}~\u2010-\u2015\u2026\u00ab\u00bb\u201c\u201d\u2018\u3001\u3002\u300c-\u300f]+"""
)
"""ASCII punctuation but the apostrophe, plus common Unicode dashes, quotes and CJK commas."""

_EDGE = (
    """!"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"""
    "\u2010\u2011\u2012\u2013\u2014\u2015\u2026"
    "\u00ab\u00bb\u201c\u201d\u2018\u2019\u00a1\u00bf\u00a7\u00b6\u00b7\u20ac\u00a3\u00a5\u00a2\u00b0"
)
"""Stripped from both ends of a token; _strip_categories catches other punctuation and symbols."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_INVISIBLE = re.compile(
    r"[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff]"
)
_PLAIN = re.compile(r"[^\W\d_]+")
_WORD = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^/?#]|www\.[^/?#]+/")
_EMAIL = re.compile(r"([^@/:]+)@([^@/:]+\.[^@/:.]+)")
_VERSION = re.compile(r"(v?)(\d+(?:\.\d+){2,})")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_DECIMAL = re.compile(r"\d+\.\d+")
_NUMBER_UNIT = re.compile(r"(\d+(?:\.\d+)?)([^\W\d_]+)")
_RUNS = re.compile(r"([^\W\d_]+)(\d+)|(\d+)([^\W\d_]+)")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class Term:
    """One term of a text; identifiers are the exact codes, numbers and addresses worth matching."""

    text: str
    identifier: bool


def terms(text: str) -> list[Term]:
    """The terms of a text in order, repeats kept (they are its term frequencies)."""
    found: list[Term] = []
    for token in _normalise(text).split(maxsplit=MAX_TOKENS)[:MAX_TOKENS]:
        if len(token) <= MAX_TOKEN_CHARS:
            found.extend(_token_terms(token))
            if len(found) >= MAX_TERMS:
                return found[:MAX_TERMS]
    return found


def identifiers(text: str) -> frozenset[str]:
    """The identifier terms of a text: a hit sharing one with the query matched it exactly."""
    return frozenset(term.text for term in terms(text) if term.identifier)


def may_hold_identifier(text: str, wanted: frozenset[str]) -> bool:
    """False only when no identifier term of `text` can be one of `wanted`: each identifier
    term is a substring of the normalised text, or of it without commas (1,200 gives 1200), so
    ranking can skip tokenizing the candidates that cannot match."""
    normal = _normalise(text)
    bare = normal.replace(",", "")
    return any(term in normal or term in bare for term in wanted)


@functools.lru_cache(maxsize=TERM_CACHE_SIZE)
def term_index(term: str) -> int:
    """A stable unsigned 32-bit index: the first 4 bytes of the term's blake2b, big-endian.

    A term has one index whether it came as a whole identifier or as a part of one, so a query
    for 48213 meets ORD-48213."""
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "big")


def encoder_of(encoder_id: str) -> Encoder:
    """The encoder a collection names; ValueError for an id this code does not know."""
    found = ENCODERS.get(encoder_id)
    if found is None:
        raise ValueError(f"unknown lexical encoder {encoder_id!r}; known: {sorted(ENCODERS)}")
    return found


def encoded_terms(text: str, encoder_id: str = LEXICAL_ENCODER) -> list[str]:
    """The terms an encoder indexes: those of terms(), words stemmed when the encoder stems."""
    if not encoder_of(encoder_id).stems:
        return [term.text for term in terms(text)]
    found: list[str] = []
    for token in _normalise(text).split(maxsplit=MAX_TOKENS)[:MAX_TOKENS]:
        if len(token) <= MAX_TOKEN_CHARS:
            found.extend(_token_stems(token))
            if len(found) >= MAX_TERMS:
                return found[:MAX_TERMS]
    return found


def document_vector(text: str, encoder_id: str = LEXICAL_ENCODER) -> SparseVector:
    """BM25 term-frequency weights (k1 1.2, b 0.75) normalised by length; IDF is the engine's."""
    found = encoded_terms(text, encoder_id)
    counts = Counter(term_index(term) for term in found)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * len(found) / encoder_of(encoder_id).avg_terms)
    indices = tuple(sorted(counts))
    values = tuple(counts[i] * (BM25_K1 + 1) / (counts[i] + norm) for i in indices)
    return SparseVector(indices=indices, values=values)


def query_vector(text: str, encoder_id: str = LEXICAL_ENCODER) -> SparseVector:
    """Each distinct term weighs 1.0, so a match scores the IDF of the terms shared."""
    indices = tuple(sorted({term_index(term) for term in encoded_terms(text, encoder_id)}))
    return SparseVector(indices=indices, values=(1.0,) * len(indices))


_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()
"""A Snowball stemmer keeps its state between calls: one thread at a time uses it."""


@functools.lru_cache(maxsize=STEM_CACHE_SIZE)
def stem(word: str) -> str:
    """The English Snowball (Porter 2) stem of a word, so inflections of one word match."""
    with _STEMMER_LOCK:
        stemmed: str = _STEMMER.stemWord(word)
    return stemmed


def fold_plural(word: str) -> str:
    """A light English plural folding of words of four letters or more, nothing else.

    -ies becomes -y (deliveries); -sses, -xes, -ches, -shes and -zzes lose -es (classes, boxes,
    matches); any other final s is dropped (orders, releases) unless the word ends in ss, us or
    is (glass, status, analysis). Words not ending in s are untouched."""
    if len(word) < 4 or not word.endswith("s"):
        return word
    if word.endswith("ies") and len(word) > 4 and word[-4] not in "ae":
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def _normalise(text: str) -> str:
    """Bounded, visible, compatibility-normalised and casefolded text."""
    text = _CONTROL.sub(" ", text[:MAX_TEXT_CHARS])
    text = _INVISIBLE.sub("", text)
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


def _strip(token: str) -> str:
    """The token without surrounding punctuation and symbols, nor a possessive 's."""
    token = token.strip(_EDGE)
    if not token.isascii():
        token = _strip_categories(token)
    if token.endswith("'s") and len(token) > 3:
        token = token[:-2].strip(_EDGE)
    return token


def _strip_categories(token: str) -> str:
    """Strip any other punctuation or symbol (emoji, rare quotes) at either end."""
    start, end = 0, len(token)
    while start < end and unicodedata.category(token[start])[0] in "PS":
        start += 1
    while end > start and unicodedata.category(token[end - 1])[0] in "PS":
        end -= 1
    return token[start:end]


@functools.lru_cache(maxsize=TOKEN_CACHE_SIZE)
def _token_terms(raw: str) -> tuple[Term, ...]:
    """The terms of one raw token, remembered: most tokens of memories are common words."""
    out: list[Term] = []
    _token(_strip(raw), out)
    return tuple(out)


@functools.lru_cache(maxsize=TOKEN_CACHE_SIZE)
def _token_stems(raw: str) -> tuple[str, ...]:
    """The terms of one raw token with its words stemmed, remembered like _token_terms."""
    return tuple(
        term.text if term.identifier or not _PLAIN.fullmatch(term.text) else stem(term.text)
        for term in _token_terms(raw)
    )


def _token(token: str, out: list[Term]) -> None:
    """The terms of one stripped token: the special shapes first, then the general split."""
    if not token:
        return
    if _PLAIN.fullmatch(token):
        if len(token) > 1 and token not in STOPWORDS:
            _add(out, fold_plural(token), False)
    elif _WORD.fullmatch(token):
        _compound(token, out)
    elif _URL.match(token):
        _url(token, out)
    elif (email := _EMAIL.fullmatch(token)) is not None:
        _add(out, token, True)
        _token(email.group(1), out)
        _token(email.group(2), out)
    elif (version := _VERSION.fullmatch(token)) is not None:
        _add(out, token, True)
        if version.group(1):
            _add(out, version.group(2), True)
    elif _GROUPED.fullmatch(token):
        _add(out, token.replace(",", ""), True)
    elif _DECIMAL.fullmatch(token):
        _add(out, token, True)
    elif (unit := _NUMBER_UNIT.fullmatch(token)) is not None:
        _add(out, token, True)
        _token(unit.group(1), out)
        _word(unit.group(2), out)
    else:
        _compound(token, out)


def _url(url: str, out: list[Term]) -> None:
    """The URL, its host, its path segments and its query values."""
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    if not path:
        host, _, query = host.partition("?")
    else:
        path, _, query = path.partition("?")
    _add(out, url, True)
    _compound(host.rpartition("@")[2].partition(":")[0].partition("#")[0], out)
    for segment in path.partition("#")[0].split("/"):
        _token(_strip(segment), out)
    for pair in query.partition("#")[0].split("&"):
        _token(_strip(pair.partition("=")[2]), out)


def _compound(token: str, out: list[Term]) -> None:
    """A token split at punctuation: the whole (when it has parts) and each part."""
    parts = [part for part in SEPARATORS.split(token) if part]
    if len(parts) > 1:
        if _is_identifier(token):
            _add(out, token, True)
        else:
            _add(out, fold_plural(token) if _WORD.fullmatch(token) else token, False)
    for part in parts:
        _part(part, out)


def _part(part: str, out: list[Term]) -> None:
    """A part without punctuation; one letter run beside one digit run also yields both runs."""
    if not _DIGIT.search(part):
        _word(part, out)
        return
    _add(out, part, _is_identifier(part))
    runs = _RUNS.fullmatch(part)
    if runs is not None:
        for run in runs.groups():
            if run is None:
                continue
            if run[0].isdigit():
                _add(out, run, _is_identifier(run))
            else:
                _word(run, out)


def _is_identifier(text: str) -> bool:
    """Digits beside letters or punctuation, a number of 3+ digits, or an _ or @ in it."""
    if _DIGIT.search(text):
        return not text.isdigit() or len(text) >= 3
    return "_" in text or "@" in text


def _word(word: str, out: list[Term]) -> None:
    """A word term unless it is a stopword or a single letter; plurals folded."""
    if len(word) > 1 and word not in STOPWORDS and _LETTER.search(word):
        _add(out, fold_plural(word), False)


def _add(out: list[Term], text: str, identifier: bool) -> None:
    """Add the term unless it is too long to be worth matching."""
    if len(text) <= MAX_TERM_CHARS:
        out.append(Term(text, identifier))
