"""The lexical encoder: identifiers kept whole with their parts, words folded, BM25 weights."""

from __future__ import annotations

import itertools

import pytest

from engram_vectors.lexical import (
    BM25_B,
    BM25_K1,
    ENCODERS,
    LEXICAL_ENCODER,
    MAX_TERM_CHARS,
    MAX_TERMS,
    V1,
    V2,
    Encoder,
    Term,
    document_vector,
    encoded_terms,
    encoder_of,
    fold_plural,
    identifiers,
    may_hold_identifier,
    query_vector,
    term_index,
    terms,
)

pytestmark = pytest.mark.unit


def texts(text: str) -> list[str]:
    """The term texts of a text, in order."""
    return [term.text for term in terms(text)]


def ids(text: str) -> list[str]:
    """The identifier term texts of a text, in order."""
    return [term.text for term in terms(text) if term.identifier]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ORD-48213", [Term("ord-48213", True), Term("ord", False), Term("48213", True)]),
        (
            "SKU_AB12-9",
            [
                Term("sku_ab12-9", True),
                Term("sku", False),
                Term("ab12", True),
                Term("ab", False),
                Term("12", False),
                Term("9", False),
            ],
        ),
        ("A1B2", [Term("a1b2", True)]),
        (
            "INV/2026/0042",
            [
                Term("inv/2026/0042", True),
                Term("inv", False),
                Term("2026", True),
                Term("0042", True),
            ],
        ),
        ("ORD48213", [Term("ord48213", True), Term("ord", False), Term("48213", True)]),
        ("48213", [Term("48213", True)]),
        ("12", [Term("12", False)]),
        ("7", [Term("7", False)]),
    ],
)
def test_codes_are_kept_whole_and_yield_their_parts(text: str, expected: list[Term]) -> None:
    """Codes mixing letters and digits, with or without separators, and long numbers."""
    assert terms(text) == expected


def test_an_email_yields_the_address_local_part_domain_and_their_pieces() -> None:
    """The whole address is the identifier; its pieces are ordinary terms."""
    assert terms("jane.doe@example.com") == [
        Term("jane.doe@example.com", True),
        Term("jane.doe", False),
        Term("jane", False),
        Term("doe", False),
        Term("example.com", False),
        Term("example", False),
        Term("com", False),
    ]


def test_a_url_yields_itself_its_host_path_segments_and_query_values() -> None:
    """A trailing slash and the sentence's punctuation are not part of the URL."""
    assert terms("(https://x.example/orders/ORD-48213?c=777/).") == [
        Term("https://x.example/orders/ord-48213?c=777", True),
        Term("x.example", False),
        Term("example", False),
        Term("order", False),
        Term("ord-48213", True),
        Term("ord", False),
        Term("48213", True),
        Term("777", True),
    ]
    assert texts("https://x.example/a/")[0] == texts("https://x.example/a")[0]


def test_a_url_host_drops_credentials_and_port() -> None:
    """The host term is what a person would write, and www. with a path is a URL too."""
    assert "10.0.0.1" in texts("http://user:pw@10.0.0.1:8080/api")
    assert texts("www.example.org/pricing") == [
        "www.example.org/pricing",
        "www.example.org",
        "www",
        "example",
        "org",
        "pricing",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1.2.3", [Term("v1.2.3", True), Term("1.2.3", True)]),
        ("1.2.3", [Term("1.2.3", True)]),
        ("99.9%", [Term("99.9", True)]),
        ("12kg", [Term("12kg", True), Term("12", False), Term("kg", False)]),
        ("3.5mm", [Term("3.5mm", True), Term("3.5", True), Term("mm", False)]),
        ("250ml", [Term("250ml", True), Term("250", True), Term("ml", False)]),
        ("$1,200", [Term("1200", True)]),
        ("1,200,000.50", [Term("1200000.50", True)]),
    ],
)
def test_versions_decimals_amounts_and_units(text: str, expected: list[Term]) -> None:
    """Versions and decimals stay whole; grouped amounts lose their commas; units split off."""
    assert terms(text) == expected


def test_names_with_a_digit_underscore_or_at_are_identifiers() -> None:
    """snake_case, dotted, slashed and hyphenated names count when they carry _, @ or a digit."""
    assert ids("snake_case_name foo.bar2 a/b/c3 user@host covid-19") == [
        "snake_case_name",
        "foo.bar2",
        "bar2",
        "a/b/c3",
        "c3",
        "user@host",
        "covid-19",
    ]
    assert "snake" in texts("snake_case_name")
    assert ids("node.js example.com and/or follow-up") == []


def test_hyphenated_words_yield_the_whole_and_parts_none_identifiers() -> None:
    """A follow-up is also a follow and an up; the whole folds like a word."""
    assert terms("follow-up drop-offs") == [
        Term("follow-up", False),
        Term("follow", False),
        Term("up", False),
        Term("drop-off", False),
        Term("drop", False),
        Term("off", False),
    ]


def test_words_of_any_script_are_kept() -> None:
    """Letters are Unicode letters, combining marks included."""
    assert texts("हिन्दी русский العربية Ελληνικά") == ["हिन्दी", "русский", "العربية", "ελληνικά"]


def test_surrounding_punctuation_quotes_and_possessives_are_stripped() -> None:
    """Quotes, brackets, trailing sentence punctuation, emoji and 's never reach a term."""
    assert texts(
        '"Quoted" (bracketed) [boxed], «fr» “curly” \u2018single\u2019 end. what?! 😀ok😀'
    ) == [
        "quoted",
        "bracketed",
        "boxed",
        "fr",
        "curly",
        "single",
        "end",
        "ok",
    ]
    assert texts("The user's ORD-48213's jane\u2019s") == [
        "user",
        "ord-48213",
        "ord",
        "48213",
        "jane",
    ]


def test_case_and_compatibility_forms_are_normalised() -> None:
    """NFKC and casefold: full-width codes and ligatures match their plain forms."""
    assert texts("\uff2f\uff32\uff24\uff0d\uff14\uff18\uff12\uff11\uff13") == texts("ord-48213")
    assert texts("ﬁle Straße") == ["file", "strasse"]


def test_stopwords_and_single_letters_are_dropped_single_digits_kept() -> None:
    """Function words carry nothing to match; a lone digit may (gate 5)."""
    assert texts("What is the status of my order at gate 5, and did I pay a fee?") == [
        "status",
        "order",
        "gate",
        "5",
        "pay",
        "fee",
    ]


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("deliveries", "delivery"),
        ("orders", "order"),
        ("boxes", "box"),
        ("classes", "class"),
        ("matches", "match"),
        ("wishes", "wish"),
        ("releases", "release"),
        ("glass", "glass"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("days", "day"),
        ("bus", "bus"),
        ("its", "its"),
        ("order", "order"),
    ],
)
def test_plural_folding_is_light(word: str, folded: str) -> None:
    """Plurals fold to their singular; short words and -ss/-us/-is endings are left."""
    assert fold_plural(word) == folded


def test_folding_leaves_identifiers_alone() -> None:
    """Identifiers keep their letters exactly; only their word parts fold."""
    assert terms("ITEMS_V2 1960s") == [
        Term("items_v2", True),
        Term("item", False),
        Term("v2", True),
        Term("2", False),
        Term("1960s", True),
        Term("1960", True),
    ]


def test_term_index_is_a_stable_unsigned_32_bit_value() -> None:
    """blake2b, not hash(): the same in every process and Python version."""
    assert term_index("ord-48213") == 650922782
    assert all(0 <= term_index(text) < 2**32 for text in ["", "a", "ü", "😀", "\ud800"])


def test_a_term_has_one_index_whether_whole_or_a_part() -> None:
    """A query for 48213 meets the memory about ORD-48213."""
    memory = set(document_vector("Order ORD-48213 was delayed").indices)
    assert term_index("48213") in memory
    assert set(query_vector("48213").indices) <= memory


def test_document_indices_are_sorted_unique_and_collisions_add_up() -> None:
    """114403 and 114657 share an index; their frequencies count together."""
    assert term_index("114403") == term_index("114657")
    vector = document_vector("114403 114657 order order 114403")
    assert list(vector.indices) == sorted(set(vector.indices))
    assert len(vector.indices) == len(vector.values) == 2
    weights = dict(zip(vector.indices, vector.values, strict=True))
    assert weights[term_index("114403")] > weights[term_index("order")]


def bm25(tf: int, length: int, encoder: Encoder) -> float:
    """The documented weight, written out."""
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / encoder.avg_terms)
    return tf * (BM25_K1 + 1) / (tf + norm)


@pytest.mark.parametrize("encoder", [V1, V2], ids=lambda e: e.id)
def test_document_weights_are_bm25_term_frequencies(encoder: Encoder) -> None:
    """k1 1.2, b 0.75, length in terms over the encoder's average; no IDF."""
    vector = document_vector("parcel parcel customs", encoder.id)
    weights = dict(zip(vector.indices, vector.values, strict=True))
    assert weights[term_index("parcel")] == pytest.approx(bm25(2, 3, encoder))
    assert weights[term_index("custom")] == pytest.approx(bm25(1, 3, encoder))


def test_v2_normalises_by_an_abstracts_length_and_v1_by_a_short_memorys() -> None:
    """A long text's length is measured against each encoder's own average length."""
    text = " ".join(f"word{n}" for n in range(199)) + " parcel"
    for encoder in (V1, V2):
        length = len(encoded_terms(text, encoder.id))
        vector = document_vector(text, encoder.id)
        weights = dict(zip(vector.indices, vector.values, strict=True))
        assert weights[term_index("parcel")] == pytest.approx(bm25(1, length, encoder))
    assert V2.avg_terms == 100 and V1.avg_terms == 7.3


def test_v2_stems_words_so_inflections_match() -> None:
    """regulates, regulation and regulated are one term; the query meets the document."""
    assert encoded_terms("regulates regulation regulated regulating") == ["regul"] * 4
    assert set(query_vector("regulating").indices) <= set(document_vector("it regulates").indices)
    assert encoded_terms("studies running cells", V2.id) == ["studi", "run", "cell"]


def test_v2_keeps_identifiers_whole_and_stems_only_words() -> None:
    """Codes, versions, numbers and addresses are never stemmed; their word parts are."""
    text = "ORD-48213 shipped v1.2.3 to ops@acme.example; 12kg of proteins, SKU-4471-B running"
    found = encoded_terms(text, V2.id)
    for code in ("ord-48213", "48213", "v1.2.3", "ops@acme.example", "12kg", "sku-4471-b", "4471"):
        assert code in found
    assert "protein" in found and "run" in found and "running" not in found
    assert identifiers(text) == {t.text for t in terms(text) if t.identifier}
    assert set(query_vector("ORD-48213").indices) <= set(document_vector(text).indices)
    assert term_index("48213") in document_vector(text).indices


def test_v1_stays_as_it_was_without_stemming() -> None:
    """Collections built with v1 keep meeting their queries: v1's terms are terms() unchanged."""
    text = "Deliveries were regulated; orders ORD-48213 running"
    assert encoded_terms(text, V1.id) == [term.text for term in terms(text)]
    assert "regulated" in encoded_terms(text, V1.id) and "delivery" in encoded_terms(text, V1.id)
    assert document_vector(text, V1.id) != document_vector(text, V2.id)


def test_encoders_are_known_by_id_and_new_collections_get_v2() -> None:
    assert LEXICAL_ENCODER == V2.id and ENCODERS == {V1.id: V1, V2.id: V2}
    assert encoder_of(V1.id) is V1
    with pytest.raises(ValueError, match="unknown lexical encoder"):
        encoder_of("engram-lexical-v0")


def test_document_weights_fall_with_length() -> None:
    """The same single occurrence weighs less in a longer memory."""
    short = document_vector("parcel delayed")
    long = document_vector("parcel delayed customs rotterdam harbour strike weekend backlog")
    index = term_index("parcel")
    assert (
        dict(zip(long.indices, long.values, strict=True))[index]
        < dict(zip(short.indices, short.values, strict=True))[index]
    )


def test_document_weights_saturate_with_term_frequency() -> None:
    """More repeats weigh more, each less than the last, never beyond k1 + 1."""
    index = term_index("parcel")
    weights = []
    for tf in (1, 2, 4, 8, 16):
        vector = document_vector(" ".join(["parcel"] * tf))
        weights.append(dict(zip(vector.indices, vector.values, strict=True))[index])
    gains = [b - a for a, b in itertools.pairwise(weights)]
    assert all(gain > 0 for gain in gains)
    assert gains == sorted(gains, reverse=True)
    assert weights[-1] < BM25_K1 + 1


def test_query_vector_weighs_each_distinct_term_once() -> None:
    """Repeats in a query do not count twice; the engine's IDF does the weighing."""
    vector = query_vector("order ORD-48213 order orders")
    assert list(vector.indices) == sorted(
        {term_index(t) for t in ("order", "ord-48213", "ord", "48213")}
    )
    assert set(vector.values) == {1.0}


def test_empty_and_blank_texts_give_empty_vectors() -> None:
    """Nothing to match, nothing stored."""
    for text in ("", "   ", "the of and", "?!"):
        assert document_vector(text).indices == ()
        assert query_vector(text).values == ()


def test_identifiers_of_a_query_meet_those_of_its_memory_only() -> None:
    """The exact code marks the memory that answers; a neighbouring code does not."""
    query = identifiers("what happened with order ORD-48213?")
    assert query == {"ord-48213", "48213"}
    assert query & identifiers("Order ORD-48213 for Acme was delayed at customs in Rotterdam.")
    assert not query & identifiers("Order ORD-48214 for Acme was delayed at customs in Rotterdam.")
    assert identifiers("Which design tool does the team use now?") == frozenset()


@pytest.mark.parametrize(
    "text",
    [
        "x" * 100_000,
        "lorem ipsum " * 10_000,
        "a-" * 50_000,
        "\x00\x01\x07\x1b\x7f\x9f" * 20_000,
        "😀🏳️‍🌈👩🏽‍💻 " * 20_000,
        "שלום עולם مرحبا بالعالم \u200f\u202e " * 5_000,
        "ord-1 " * 30_000,
        " ".join(f"w{i}x{i}" for i in range(20_000)),
        "\ud800 lone surrogate \udfff",
        "\u0301\u0301\u0301 combining",
    ],
    ids=[
        "one-huge-token",
        "100k-of-words",
        "one-huge-dashed-token",
        "control-chars",
        "emoji",
        "rtl-and-bidi-marks",
        "one-code-repeated",
        "distinct-codes",
        "lone-surrogates",
        "stray-combining-marks",
    ],
)
def test_hostile_input_stays_bounded(text: str) -> None:
    """Huge texts and tokens, control characters, emoji and RTL marks: bounded and no crash."""
    found = terms(text)
    assert len(found) <= MAX_TERMS
    assert all(0 < len(term.text) <= MAX_TERM_CHARS for term in found)
    vector = document_vector(text)
    assert len(vector.indices) <= MAX_TERMS
    assert all(value > 0 for value in vector.values)


def test_many_distinct_terms_are_capped() -> None:
    """A long memory keeps its first MAX_TERMS terms."""
    found = terms(" ".join(f"word{i}" for i in range(5_000)))
    assert len(found) == MAX_TERMS
    assert found[0] == Term("word0", True)


def test_overlong_terms_are_dropped_but_their_parts_kept() -> None:
    """A URL past the length cap is still found by its host and path segments."""
    url = "https://docs.example.com/" + "/".join(["section"] * 10) + "/ORD-48213"
    assert len(url) > MAX_TERM_CHARS
    found = texts(url)
    assert url.lower() not in found
    assert {"docs.example.com", "section", "ord-48213"} <= set(found)


@pytest.mark.parametrize(
    "text",
    [
        "Order ORD-48213 shipped to \uff56\uff12.\uff13.\uff14 on 2026-03-01",
        "paid $1,200.50 for 12kg of 3.5mm cable, ref INV-2026-0042",
        "mail bob.smith+x@Example.COM or see https://docs.example.com/a/b?id=77#top",
        "v1.2.3 build_77 user@@host \u2019quoted\u2019 (note 99-12-12345) 1960s",
    ],
)
def test_the_identifier_precheck_never_rejects_an_identifier_of_the_text(text: str) -> None:
    found = identifiers(text)
    assert found
    for identifier in found:
        assert may_hold_identifier(text, frozenset({identifier}))
    assert not may_hold_identifier(text, frozenset({"zz-99999"}))
