"""The lesson (core.lesson): every step's numbers, computed with the real tokenizers and trainers,
equal what the lecture's notebooks printed wherever the step works on a text tokexplorer ships; on
the lecture's own texts (read from the notebooks in ../shared/seeds, never shipped) the steps that
ask for the user's text agree too; and every value shown as "the lecture printed" is in its
notebook's output."""

from __future__ import annotations

import ast
import re

import pytest

from tokexplorer.core.lesson.chapters import CHAPTERS, FIZZBUZZ, all_steps, step_by_key
from tokexplorer.core.lesson.check import check_step, step_text
from tokexplorer.core.lesson.step import VIEWS, render
from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.core.tokenizer import TokexplorerError

STEPS = all_steps()


def _between(text: str, start: str, end: str, after: str = "") -> str:
    i = text.index(start, text.index(after) if after else 0) + len(start)
    return text[i:text.index(end, i)]


@pytest.fixture(scope="session")
def lecture_texts(seeds) -> dict[str, str]:
    """The texts the lecture trained on, as its notebook 000 spells them (test data only)."""
    notebook = seeds["000"]
    article = ast.literal_eval('"""' + _between(notebook, 'text = """', '"""', "Full tokenizer training text") + '"""')
    opening = ast.literal_eval('"' + _between(notebook, 'text = "', '"\n', "In [11]:") + '"')
    # subtle: the notebook's copy of the opening lost the zero-width non-joiners between the
    # regional indicators, which its printed counts (533 characters; (226, 128) 12 times) include;
    # the article's copy spells them \u200c.
    flags = "🇺🇳🇮🇨🇴🇩🇪"
    opening = opening.replace(flags, "\u200c".join(flags))
    readme = _between(notebook, 'f.write("', '")\n')
    return {"article": article, "opening": opening, "readme": readme}


def test_steps_are_well_formed():
    keys = [s.key for s in STEPS]
    assert len(keys) == len(set(keys))
    assert len(CHAPTERS) == 9 and len(STEPS) >= 30
    for step in STEPS:
        assert step.view in VIEWS, step.key
        assert step.tokenizer is None or step.tokenizer in builtin_names(), step.key
        assert step.policy in (None, "refuse", "all", "none"), step.key
        assert 1 <= step.explanation.count(". ") + 1 <= 5, step.key
        assert step.numbers, step.key
        assert step_text(step), step.key  # every step has a text to work on, shipped or stand-in


@pytest.mark.parametrize("step", [s for s in STEPS if s.source.kind != "yours"], ids=lambda s: s.key)
def test_shipped_steps_agree_with_the_lecture(step):
    """On the step's own text, every number the lecture printed comes out the same in the app."""
    checked = check_step(step, step_text(step), get_builtin)
    for number, c in zip(step.numbers, checked):
        assert c.app, (step.key, c.label, c.note)
        if number.lecture is not None:
            assert c.agrees is True, (step.key, c.label, c.lecture, c.app)
            assert c.value == number.lecture and c.note == ""
        else:
            assert c.agrees is None and c.lecture == ""


@pytest.mark.parametrize("key, text", [
    ("bpe/pair-counts", "opening"), ("bpe/twenty-merges", "article"), ("decoding/vocab", "article"),
    ("decoding/encode", "article"), ("sentencepiece/train", "readme"), ("sentencepiece/no-fallback", "readme"),
])
def test_steps_on_your_text_agree_on_the_lectures_text(key, text, lecture_texts):
    """Given the text the lecture used (pasted by the user), the step reproduces its numbers:
    24,597 bytes -> 19,438 tokens (1.27X) and the 20 merges; the SentencePiece ids."""
    step = step_by_key(key)
    checked = check_step(step, step_text(step, lecture_texts[text]), get_builtin)
    for number, c in zip(step.numbers, checked):
        if number.lecture is not None:
            assert c.agrees is True, (key, c.label, c.lecture, c.app)


def test_steps_on_your_text_say_why_the_stand_in_differs():
    step = step_by_key("bpe/twenty-merges")
    checked = check_step(step, step_text(step), get_builtin)
    assert [c.agrees for c in checked] == [False, False, False, False]
    assert all("does not ship: paste or open it to compare" in c.note for c in checked)
    eng = step_text(step)
    assert checked[0].app == str(len(eng.encode("utf-8")))  # the stand-in's own bytes, counted
    assert "lesson/unicode_notes.txt" in step.source.describe()


WORDS = {"`.DefaultCellStyle` turned out to be a single individual token": "single"}  # 1, in words


def test_seeds_print_every_lecture_value(seeds):
    """Each value shown as "the lecture printed" appears in its notebook's output, as printed
    there (lines re-joined: some notebooks print one list item per line)."""
    def flat(text: str) -> str:
        return re.sub(r"\s*\n\s*", " ", text).replace("[ ", "[").replace(" ]", "]")

    notebooks = {k: flat(v) for k, v in seeds.items()}
    seen = 0
    for step in STEPS:
        for number in step.numbers:
            if number.lecture is None:
                continue
            printed = number.printed_text()
            assert number.notebook in notebooks, (step.key, number.label)
            assert flat(printed) in notebooks[number.notebook], (step.key, number.label, printed[:80])
            forms = (str(number.lecture), repr(number.lecture), repr(number.lecture)[:-1],  # a list's start
                     WORDS.get(printed, "\0"))
            assert any(form in printed for form in forms), (step.key, number.label)
            seen += 1
    assert seen >= 60


def test_app_only_numbers_are_the_libraries_own():
    """Where the lecture printed no number, the app's value is the library's own encode."""
    gpt2, cl100k = get_builtin("gpt2"), get_builtin("cl100k_base")
    checked = check_step(step_by_key("tiktoken/python"), FIZZBUZZ, get_builtin)
    gpt2_encode, library = gpt2.library_encoder()
    assert library == "tiktoken"
    assert [c.value for c in checked] == [len(gpt2_encode(FIZZBUZZ)), len(cl100k.library_encoder()[0](FIZZBUZZ))]
    assert checked[0].value > checked[1].value  # GPT-2 pays for every space of the indentation
    special = check_step(step_by_key("special/cl100k"), "", get_builtin)
    assert special[-1].value == 100277  # len(enc) of cl100k: 100,256 ranks, a gap, <|endofprompt|> 100276
    extended = check_step(step_by_key("special/extend"), "<|im_start|>user hello<|im_end|>", get_builtin)
    assert extended[0].value[0] == 100264 and extended[0].value[-1] == 100265
    policy = check_step(step_by_key("special/policy"), "<|endoftext|>", get_builtin)
    assert policy[0].value == [50256] and policy[1].value == [27, 91, 437, 1659, 5239, 91, 29]
    assert check_step(step_by_key("quirks/solidgoldmagikarp"), " SolidGoldMagikarp", get_builtin)[0].value == [43453]
    llama = check_step(step_by_key("sentencepiece/llama"), "hello 안녕하세요", get_builtin)
    assert llama[0].value[0].startswith("▁") and llama[1].value == 32000


def test_minbpe_tie_rule_on_the_textbook_example():
    """aaabdaaabac: after aa -> Z, the pairs Za and ab tie at 2; minbpe takes Za (seen first)."""
    checked = check_step(step_by_key("bpe/wikipedia"), "aaabdaaabac", get_builtin)
    assert checked[0].value == 5
    assert checked[1].value == {(97, 97): 256, (256, 97): 257, (257, 98): 258}


def test_a_number_that_cannot_be_computed_says_why():
    checked = check_step(step_by_key("sentencepiece/no-fallback"), "tiny", get_builtin)
    assert checked[0].agrees is None and checked[0].app == ""
    assert checked[0].note.startswith("cannot compute it here: SentencePiece cannot train")


def test_unknown_step():
    with pytest.raises(TokexplorerError, match="no lesson step"):
        step_by_key("nope")


def test_render_matches_python():
    assert render([(20, (101, 32))]) == "[(20, (101, 32))]" and render(1.266) == "1.27"


def test_the_other_notebooks_measurements_in_docs_lecture_md(seeds):
    """docs/lecture.md's experiments 12, 14 and 39, on the texts the students' notebooks hold."""
    from tokexplorer.core.analysis.bpe_by_hand import merge, pair_counts, sorted_counts
    from tokexplorer.core.training.bpe import train
    from tokexplorer.core.training.sentencepiece import llama2_options, train_sentencepiece

    # 12: 001's copy of the article lost characters (24,592 bytes, not 24,613), yet ends with 001's merges.
    article = _between(seeds["001"], 'text = """', '"""', "In [9]:")
    tok = train(article, 276)
    assert len(article.encode("utf-8")) == 24592 and len(tok.encode(article).ids) == 19475
    assert list(tok.merges.items())[-3:] == [((97, 108), 273), ((259, 256), 274), ((111, 110), 275)]
    # 14: 002's English-and-Japanese paragraph.
    data = list(_between(seeds["002"], 'unicodetext = "', '"\n', "### Gathering text sequence").encode("utf-8"))
    top = sorted_counts(pair_counts(data))[0]
    assert (len(data), top, len(merge(data, top[1], 256))) == (1110, (81, (227, 129)), 1029)
    # 39: 003's three sentences, trained with the Llama 2 options.
    toy = ("SentencePiece is an unsupervised text tokenizer and detokenizer mainly for Neural Network-based "
           "text generation systems.\nIt supports subword units such as BPE and unigram language models.")
    assert toy.replace("\n", "") in re.sub(r'"\s*\n\s*"', "", seeds["003"]).replace("\\n", "")
    ids = list(train_sentencepiece(toy, llama2_options(400)).encode("hello 안녕하세요").ids)
    assert ids[:8] == [367, 398, 368, 379, 379, 376, 367, 239] and "[367, 398, 368, 379, 379, 376, 367, 239" in seeds["003"]


@pytest.mark.parametrize("text", ["", "a", "\x00", "a\ud800b", "<|endoftext|>", "ab" * 3], ids=repr)
def test_any_text_gets_numbers_or_a_reason(text):
    """Whatever the user pastes, every number is computed or says why not; nothing raises."""
    for step in STEPS:
        for c in check_step(step, text, get_builtin):
            assert c.app or c.note.startswith("cannot compute it here: "), (step.key, c.label)
    too_short = check_step(step_by_key("bpe/pair-counts"), "a", get_builtin)[2]
    assert too_short.note == "cannot compute it here: the text has fewer than two bytes: there is no pair to count"
