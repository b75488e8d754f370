"""Prose split into passages: heading paths, exact spans, the budget, sentence-safe cuts,
overlap and deterministic ids."""

from __future__ import annotations

import itertools

import pytest

from engram_extraction.domain.layouts import markdown_layout, plain_layout
from engram_extraction.domain.passages import (
    Budget,
    Layout,
    Passage,
    TooManyPassages,
    estimate_pieces,
    passage_id,
    sentence_spans,
    split,
)

pytestmark = pytest.mark.unit

RETURNS = """# Returns policy

You may return most items within 30 days of delivery for a full refund. Items must be unused
and in their original packaging.

Opened electronics can be returned within 14 days of delivery. A restocking fee of 15% applies.

## Damaged goods

If an item arrives damaged, contact us within 48 hours with a photo.
We will send a replacement or refund you in full, including shipping.
"""


def exact(layout: Layout, passages: list[Passage]) -> None:
    """Every passage's text is exactly its span of the extracted text."""
    for passage in passages:
        assert layout.text[passage.start : passage.end] == passage.text


def test_the_returns_policy_becomes_two_passages_under_their_headings() -> None:
    layout = markdown_layout(RETURNS)
    passages = split(layout)
    exact(layout, passages)
    assert [p.heading_path for p in passages] == [
        ("Returns policy",),
        ("Returns policy", "Damaged goods"),
    ]
    assert passages[0].text.startswith("You may return most items")
    assert passages[0].text.endswith("A restocking fee of 15% applies.")
    assert "Opened electronics can be returned within 14 days" in passages[0].text
    assert passages[1].text.startswith("If an item arrives damaged")
    assert [p.ordinal for p in passages] == [0, 1]
    assert passages[1].embedded_text.startswith("Returns policy > Damaged goods\n\n")


def test_a_sibling_heading_replaces_its_level_and_a_higher_one_resets_the_path() -> None:
    text = "# A\n\none.\n\n## B\n\ntwo.\n\n### C\n\nthree.\n\n## D\n\nfour.\n\n# E\n\nfive.\n"
    paths = [p.heading_path for p in split(markdown_layout(text))]
    assert paths == [("A",), ("A", "B"), ("A", "B", "C"), ("A", "D"), ("E",)]


def test_setext_headings_and_closing_hashes_are_headings() -> None:
    text = "Policy\n======\n\nBody one.\n\nPart two ##\n---\n\nBody two.\n\n## Third ##\n\nBody three.\n"
    passages = split(markdown_layout(text))
    assert [p.heading_path for p in passages] == [
        ("Policy",),
        ("Policy", "Part two ##"),
        ("Policy", "Third"),
    ]


def test_a_long_section_is_cut_between_sentences_within_the_budget_with_overlap() -> None:
    sentences = [
        f"Clause {i} says the carrier pays for lost parcels in region {i}." for i in range(60)
    ]
    text = "# Terms\n\n" + " ".join(sentences) + "\n"
    layout = markdown_layout(text)
    budget = Budget(max_pieces=80, overlap_pieces=20)
    passages = split(layout, budget)
    exact(layout, passages)
    assert len(passages) > 5
    head = estimate_pieces("Terms\n\n")
    for passage in passages:
        assert estimate_pieces(passage.embedded_text) <= budget.max_pieces + head
        assert passage.text.startswith("Clause ") and passage.text.endswith(".")
    covered = " ".join(p.text for p in passages)
    assert all(s in covered for s in sentences)
    for before, after in itertools.pairwise(passages):
        assert after.start < before.end, "consecutive passages share their edge sentence"
        assert after.end > before.end


def test_whole_paragraphs_are_kept_together_when_the_next_one_would_not_fit() -> None:
    para = "This paragraph holds several words. It has two sentences about shipping."
    text = "\n\n".join([para] * 6) + "\n"
    layout = plain_layout(text)
    passages = split(layout, Budget(max_pieces=60, overlap_pieces=0))
    exact(layout, passages)
    for passage in passages:
        assert passage.text.count(para) * len(para) + passage.text.count("\n\n") * 2 == len(
            passage.text
        ), "a passage is whole paragraphs"


def test_list_items_are_blocks_and_continuation_lines_stay_with_their_item() -> None:
    text = "## Steps\n\n- Pack the item\n  in its box.\n- Print the label.\n1. Drop it off.\n"
    layout = markdown_layout(text)
    items = [b for b in layout.blocks if b.kind == "item"]
    assert [text[b.start : b.end] for b in items] == [
        "- Pack the item\n  in its box.",
        "- Print the label.",
        "1. Drop it off.",
    ]
    [passage] = split(layout)
    assert passage.heading_path == ("Steps",)
    assert passage.text == text[text.index("- Pack") : text.rindex(".") + 1]


def test_a_document_without_headings_has_an_empty_path() -> None:
    text = "Plain words about refunds.\n\nAnother paragraph.\n"
    for layout in (markdown_layout(text), plain_layout(text)):
        [passage] = split(layout)
        assert passage.heading_path == ()
        assert passage.embedded_text == passage.text
        exact(layout, [passage])


def test_plain_text_has_no_headings_even_with_hashes() -> None:
    layout = plain_layout("# not a heading\nstill the same paragraph.\n")
    assert [b.kind for b in layout.blocks] == ["paragraph"]


def test_crlf_spans_index_the_original_text() -> None:
    text = RETURNS.replace("\n", "\r\n")
    layout = markdown_layout(text)
    passages = split(layout)
    exact(layout, passages)
    assert [p.heading_path for p in passages] == [
        ("Returns policy",),
        ("Returns policy", "Damaged goods"),
    ]
    assert not passages[1].text.endswith("\r")


def test_unicode_headings_and_text_keep_exact_spans() -> None:
    text = "# Rücksendungen 返品\n\nGeöffnete Elektronik: 14 Tage. 開封済みの電子機器は14日以内です。\n"
    layout = markdown_layout(text)
    [passage] = split(layout)
    exact(layout, [passage])
    assert passage.heading_path == ("Rücksendungen 返品",)
    assert passage.text.endswith("14日以内です。")


def test_cjk_sentences_are_cut_at_their_own_full_stops() -> None:
    text = "東京は日本の首都です。大阪も大きな都市です。"
    spans = sentence_spans(text, 0, len(text))
    assert [text[s:e] for s, e in spans] == ["東京は日本の首都です。", "大阪も大きな都市です。"]


def test_abbreviations_and_initials_do_not_end_a_sentence() -> None:
    text = "Send it to Dr. Smith, e.g. by post. Then wait for J. Doe to answer."
    spans = sentence_spans(text, 0, len(text))
    assert [text[s:e] for s, e in spans] == [
        "Send it to Dr. Smith, e.g. by post.",
        "Then wait for J. Doe to answer.",
    ]


def test_a_sentence_longer_than_the_budget_is_cut_between_words() -> None:
    words = " ".join(f"word{i}" for i in range(300))
    layout = plain_layout(words)
    passages = split(layout, Budget(max_pieces=60, overlap_pieces=0))
    exact(layout, passages)
    assert len(passages) > 3
    for passage in passages:
        assert estimate_pieces(passage.text) <= 60
        assert passage.text.startswith("word") and not passage.text.endswith(" ")


def test_fenced_code_with_blank_lines_and_hashes_stays_one_block() -> None:
    text = "# Setup\n\n```\n# not a heading\n\nrun it\n```\n\nAfter.\n"
    layout = markdown_layout(text)
    assert [b.kind for b in layout.blocks] == ["heading", "paragraph", "paragraph"]
    code = layout.blocks[1]
    assert text[code.start : code.end] == "```\n# not a heading\n\nrun it\n```"


def test_headings_without_body_make_no_passage() -> None:
    assert split(markdown_layout("# Only\n\n## Headings\n")) == []


def test_ids_are_deterministic_from_document_version_and_span() -> None:
    first = passage_id("t1", "doc_1", "v1", 10, 90)
    assert first == passage_id("t1", "doc_1", "v1", 10, 90)
    assert first.startswith("psg_")
    others = {
        passage_id("t1", "doc_1", "v2", 10, 90),
        passage_id("t1", "doc_2", "v1", 10, 90),
        passage_id("t1", "doc_1", "v1", 10, 91),
        passage_id("t2", "doc_1", "v1", 10, 90),
    }
    assert first not in others and len(others) == 4


def test_splitting_twice_gives_the_same_passages() -> None:
    assert split(markdown_layout(RETURNS)) == split(markdown_layout(RETURNS))


def test_too_many_passages_is_refused() -> None:
    text = "\n\n".join(f"Paragraph {i}." for i in range(50))
    with pytest.raises(TooManyPassages):
        split(plain_layout(text), Budget(max_pieces=4, overlap_pieces=0, max_passages=10))


def test_the_estimate_counts_rare_words_and_numbers_as_several_pieces() -> None:
    assert estimate_pieces("the cat") == 2
    assert estimate_pieces("electronics") == 3
    assert estimate_pieces("ORD-48213") == 1 + 1 + 3
    assert estimate_pieces("返品") == 2


def test_a_span_stays_within_the_character_bound_even_across_long_blank_runs() -> None:
    text = "First words." + " " * 20_000 + "second words." + "\n" * 30_000 + "Third."
    layout = plain_layout(text)
    passages = split(layout, Budget(max_chars=1000))
    exact(layout, passages)
    assert all(p.end - p.start <= 1000 for p in passages)
    assert "".join(p.text for p in passages).replace(" ", "") == "Firstwords.secondwords.Third."
