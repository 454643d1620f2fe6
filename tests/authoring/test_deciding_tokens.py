"""Character spans -> deciding tokens (mrtpo_sdk.credit_page): a fast tokenizer's offsets, decoding prefixes for any
other tokenizer, and the overlap rule."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mrtpo_sdk.credit_page import deciding_token_mask, token_char_spans


class _Pieces:
    """A slow tokenizer: each id is a piece of text; ``decode`` joins them (``strip`` drops a leading space, as
    SentencePiece does), ``bad`` decodes to something else."""

    is_fast = False

    def __init__(self, pieces, strip=False, bad=False):
        self.pieces, self.strip, self.bad = pieces, strip, bad

    def decode(self, ids):
        text = "".join(self.pieces[i] for i in ids)
        if self.bad:
            return text.upper()
        return text.lstrip(" ") if self.strip else text


def test_a_fast_tokenizers_offsets():
    from mrtpo_sdk.policy import build_tokenizer

    tok = build_tokenizer(["hello world, tea is hot 3.5 \u00e9 \u4e2d\u6587"] * 4, vocab_size=300)
    text = "hello tea, \u4e2d\u6587 \u00e9!"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    spans = token_char_spans(tok, ids, text)
    assert [text[s:e] for s, e in spans] == [tok.decode([i]) for i in ids]
    assert spans[0] == (0, 5)


def test_decoding_prefixes_for_a_slow_tokenizer():
    pieces = ["SEL", "ECT", " name", " FROM", " t"]
    text = "SELECT name FROM t"
    assert token_char_spans(_Pieces(pieces), range(5), text) == [(0, 3), (3, 6), (6, 11), (11, 16), (16, 18)]


def test_a_decoding_that_drops_the_leading_space_is_shifted():
    pieces = [" Tea", " is", " hot"]
    assert token_char_spans(_Pieces(pieces, strip=True), [0, 1, 2], " Tea is hot") == [(1, 4), (4, 7), (7, 11)]


def test_ids_that_do_not_decode_to_the_text_cannot_be_placed():
    assert token_char_spans(_Pieces(["a", "b"], bad=True), [0, 1], "ab") is None


def test_a_token_is_deciding_when_it_overlaps_a_span():
    tokens = [(0, 3), (3, 6), (6, 11), (11, 16), (16, 18), (18, 18)]
    assert deciding_token_mask(tokens, [(7, 9)]) == [False, False, True, False, False, False]
    assert deciding_token_mask(tokens, [(5, 12)]) == [False, True, True, True, False, False]
    assert deciding_token_mask(tokens, [(3, 6), (17, 18)]) == [False, True, False, False, True, False]
    assert deciding_token_mask(tokens, [(6, 6)]) == [False] * 6  # an empty span overlaps nothing
    assert deciding_token_mask(tokens, []) == [False] * 6
    assert deciding_token_mask([], [(0, 1)]) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=12), st.data())
def test_the_mask_is_the_plain_overlap_rule(pieces, data):
    text = "".join(pieces)
    tokens = token_char_spans(_Pieces(pieces), range(len(pieces)), text)
    assert [text[s:e] for s, e in tokens] == pieces
    spans = data.draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(sorted)
                               .map(tuple), max_size=4))
    want = [any(max(a, s) < min(b, e) for s, e in spans) for a, b in tokens]
    assert deciding_token_mask(tokens, spans) == want
