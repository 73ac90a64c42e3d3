"""The lesson's chapters, in the lecture's order, as data: each step's explanation (our words),
its text, tokenizer, policy and view, and the numbers the notebooks printed (`lecture`, with the
notebook that printed it) beside the function that computes the app's value.

The printed values are facts read from the lecture's notebooks (../shared/seeds: 000 is the
lecture's own notebook, 001 to 004 are students' notes of it); a test checks each one appears in
its notebook's output. Texts the lecture took from a blog article or Wikipedia are not shipped:
those steps work on the user's text (`yours`), with a shipped stand-in until one is given.
It runs past 400 lines because it is the whole lesson, one entry per step; there is no logic in it.
"""

from __future__ import annotations

from tokexplorer.core.analysis.quirks import quirk, sample_text
from tokexplorer.core.lesson import numbers as n
from tokexplorer.core.lesson.step import Chapter, Number, Step, inline, resource, yours
from tokexplorer.core.tokenizer import TokexplorerError

ARTICLE = "the blog article “A Programmer’s Introduction to Unicode” (Nathan Reed, reedbeta.com)"
ARTICLE_OPENING = "the opening paragraph of " + ARTICLE
SP_README = "the opening paragraph of sentencepiece's README (github.com/google/sentencepiece)"
KOHLI = "the English Wikipedia biography of Virat Kohli"
STAND_IN = "udhr/udhr_eng.txt"
NOTES = "lesson/unicode_notes.txt"  # our own text with what the article steps look at: emoji, quotes, scripts

FIZZBUZZ = ('\nfor i in range(1, 101):\n    if i % 3 == 0 and i % 5 == 0:\n        print("FizzBuzz")\n'
            '    elif i % 3 == 0:\n        print("Fizz")\n    elif i % 5 == 0:\n        print("Buzz")\n'
            '    else:\n        print(i)\n')
FIZZBUZZ_CHUNKS = [
    '\n', 'for', ' i', ' in', ' range', '(', '1', ',', ' 101', '):', '\n   ', ' if', ' i', ' %', ' 3', ' ==', ' 0',
    ' and', ' i', ' %', ' 5', ' ==', ' 0', ':', '\n       ', ' print', '("', 'FizzBuzz', '")', '\n   ', ' elif',
    ' i', ' %', ' 3', ' ==', ' 0', ':', '\n       ', ' print', '("', 'Fizz', '")', '\n   ', ' elif', ' i', ' %',
    ' 5', ' ==', ' 0', ':', '\n       ', ' print', '("', 'Buzz', '")', '\n   ', ' else', ':', '\n       ',
    ' print', '(', 'i', ')', '\n']

ARTICLE_MERGES = {(101, 32): 256, (105, 110): 257, (115, 32): 258, (116, 104): 259, (101, 114): 260,
                  (99, 111): 261, (116, 32): 262, (226, 128): 263, (44, 32): 264, (97, 110): 265,
                  (111, 114): 266, (100, 32): 267, (97, 114): 268, (101, 110): 269, (257, 103): 270,
                  (261, 100): 271, (121, 32): 272, (46, 32): 273, (97, 108): 274, (259, 256): 275}

HELLO_KOREAN_SP = [362, 378, 361, 372, 358, 362, 239, 152, 139, 238, 136, 152, 240, 152, 155, 239, 135, 187,
                   239, 157, 151]
HELLO_KOREAN_PIECES = ['▁', 'h', 'e', 'l', 'lo', '▁', '<0xEC>', '<0x95>', '<0x88>', '<0xEB>', '<0x85>', '<0x95>',
                       '<0xED>', '<0x95>', '<0x98>', '<0xEC>', '<0x84>', '<0xB8>', '<0xEC>', '<0x9A>', '<0x94>']


def _first_code_point(part):
    return lambda given: ord(part(given)[0])


def _sample(name: str) -> str:
    return sample_text(quirk(name))


UNICODE = Chapter("unicode", "Unicode and UTF-8", (
    Step("unicode/code-points", "Characters are numbers",
         "Every character of a Python string is a Unicode code point, a number: ord gives it and chr "
         "turns it back into the character. Point at a letter of the text and read its code point in "
         "the inspector (U+0068 is 104 written in hexadecimal).",
         inline("hello"), "inspector", numbers=(
             Number('[ord(x) for x in "hello"]', n.code_points(), [104, 101, 108, 108, 111], "000"),
             Number("chr(104)", n.from_code_point(104), "h", "000"),
         )),
    Step("unicode/utf", "UTF-8, UTF-16 and UTF-32",
         "A code point becomes bytes through an encoding. UTF-8 spends one byte on ASCII and up to four "
         "on the rest; Python's UTF-16 and UTF-32 start with a byte order mark (255, 254) and spend two "
         "or four bytes per character, mostly zeros for English. Select a line and compare the "
         "inspector's three byte columns.",
         inline("h\nhello"), "inspector", numbers=(
             Number('list("h".encode("utf-8"))', n.encoded("utf-8", n.line(0)), [104], "000"),
             Number('list("h".encode("utf-16"))', n.encoded("utf-16", n.line(0)), [255, 254, 104, 0], "000"),
             Number('list("h".encode("utf-32"))', n.encoded("utf-32", n.line(0)),
                    [255, 254, 0, 0, 104, 0, 0, 0], "000"),
             Number('list("hello".encode("utf-8"))', n.encoded("utf-8", n.line(1)), [104, 101, 108, 108, 111], "000"),
             Number('list("hello".encode("utf-16"))', n.encoded("utf-16", n.line(1)),
                    [255, 254, 104, 0, 101, 0, 108, 0, 108, 0, 111, 0], "000"),
             Number('list("hello".encode("utf-32"))', n.encoded("utf-32", n.line(1)),
                    [255, 254, 0, 0, 104, 0, 0, 0, 101, 0, 0, 0, 108, 0, 0, 0, 108, 0, 0, 0, 111, 0, 0, 0], "000"),
         )),
    Step("unicode/emoji", "An emoji is one character and four bytes",
         "The string has 7 characters but 10 UTF-8 bytes: the emoji alone takes four, all of them 128 or "
         "more, which is how UTF-8 marks the bytes of a character outside ASCII. The inspector shows "
         "which bytes belong to which character.",
         inline("😄 hello"), "inspector", numbers=(
             Number("len(text)", n.length(), 7, "000", printed="length: 7"),
             Number('list(text.encode("utf-8"))', n.encoded("utf-8"),
                    [240, 159, 152, 132, 32, 104, 101, 108, 108, 111], "000"),
             Number("its length", n.length(lambda given: given.text.encode("utf-8")), 10, "000",
                    printed="length: 10"),
         )),
    Step("unicode/scripts", "Japanese, Korean, Hindi and Chinese",
         "Outside the Latin alphabet the numbers grow: Japanese kana and kanji take three UTF-8 bytes "
         "each, and so do the Hangul syllables and each Devanagari letter and vowel sign (है is two code "
         "points, a letter and a sign). In UTF-16 the emoji 👋 needs two units, a surrogate pair (61, 216, 75, "
         "220). Step through the lines in the inspector.",
         inline("Hello in japanese. 👋 日本語でこんにちは。\n안녕하세요 👋 (hello in Korean!)\nहैलो\n你好，世界hello word"),
         "inspector", numbers=(
             Number("code points of line 1", n.code_points(n.line(0)),
                    [72, 101, 108, 108, 111, 32, 105, 110, 32, 106, 97, 112, 97, 110, 101, 115, 101, 46, 32, 128075,
                     32, 26085, 26412, 35486, 12391, 12371, 12435, 12395, 12385, 12399, 12290], "002"),
             Number("UTF-8 of line 1", n.encoded("utf-8", n.line(0)),
                    [72, 101, 108, 108, 111, 32, 105, 110, 32, 106, 97, 112, 97, 110, 101, 115, 101, 46, 32, 240, 159,
                     145, 139, 32, 230, 151, 165, 230, 156, 172, 232, 170, 158, 227, 129, 167, 227, 129, 147, 227, 130,
                     147, 227, 129, 171, 227, 129, 161, 227, 129, 175, 227, 128, 130], "002"),
             Number("UTF-16 of line 1", n.encoded("utf-16", n.line(0)),
                    [255, 254, 72, 0, 101, 0, 108, 0, 108, 0, 111, 0, 32, 0, 105, 0, 110, 0, 32, 0, 106, 0, 97, 0,
                     112, 0, 97, 0, 110, 0, 101, 0, 115, 0, 101, 0, 46, 0, 32, 0, 61, 216, 75, 220, 32, 0, 229, 101,
                     44, 103, 158, 138, 103, 48, 83, 48, 147, 48, 107, 48, 97, 48, 111, 48, 2, 48], "002"),
             Number("code points of line 2", n.code_points(n.line(1)),
                    [50504, 45397, 54616, 49464, 50836, 32, 128075, 32, 40, 104, 101, 108, 108, 111, 32, 105, 110, 32,
                     75, 111, 114, 101, 97, 110, 33, 41], "003"),
             Number("UTF-8 of line 2", n.encoded("utf-8", n.line(1)),
                    [236, 149, 136, 235, 133, 149, 237, 149, 152, 236, 132, 184, 236, 154, 148, 32, 240, 159, 145,
                     139, 32, 40, 104, 101, 108, 108, 111, 32, 105, 110, 32, 75, 111, 114, 101, 97, 110, 33, 41],
                    "003"),
             Number("ord('ह')", _first_code_point(n.line(2)), 2361, "004"),
             Number("UTF-8 of line 3", n.encoded("utf-8", n.line(2)),
                    [224, 164, 185, 224, 165, 136, 224, 164, 178, 224, 165, 139], "004"),
             Number("UTF-8 of line 4", n.encoded("utf-8", n.line(3)),
                    [228, 189, 160, 229, 165, 189, 239, 188, 140, 228, 184, 150, 231, 149, 140, 104, 101, 108, 108,
                     111, 32, 119, 111, 114, 100], "001"),
         )),
))

BPE = Chapter("bpe", "BPE by hand", (
    Step("bpe/merge-list", "Merge one pair in a list of integers",
         "BPE's one operation: replace every occurrence of a pair of neighbours, left to right, by a new "
         "number. In the list 5, 6, 6, 7, 9, 1 the pair (6, 7) occurs once and becomes 99; the first 6 "
         "stays, because it is followed by another 6.",
         inline("5, 6, 6, 7, 9, 1\n5, 6, 6, 9, 7, 1"), "bpe", numbers=(
             Number("merge([5, 6, 6, 7, 9, 1], (6, 7), 99)", n.merged_list((6, 7), 99, n.line(0)),
                    [5, 6, 99, 9, 1], "000"),
             Number("merge([5, 6, 6, 9, 7, 1], (6, 9), 69)", n.merged_list((6, 9), 69, n.line(1)),
                    [5, 6, 69, 7, 1], "002"),
         )),
    Step("bpe/wikipedia", "The textbook example: aaabdaaabac",
         "Three merges shrink 11 symbols to 5. After the first merge two pairs tie with two occurrences "
         "each; the textbook takes ab, minbpe takes the pair it meets first (Za, here 256 and 97), so the "
         "merges differ but the length does not. Watch the tie in the BPE by hand view.",
         inline("aaabdaaabac"), "bpe", numbers=(
             Number("length after 3 merges", n.trained_length(3), 5, "002",
                    printed="the encoded text length is now `5`"),
             Number("minbpe's 3 merges", n.merges(3)),
         )),
    Step("bpe/pair-counts", "Count the pairs of bytes",
         "Training starts from the text's UTF-8 bytes and counts every pair of neighbours. On English "
         "text 'e' followed by a space (101, 32) wins; the pairs (240, 159) and (226, 128) are the first "
         "two bytes of emoji and of typographic quotes. Merging the top pair shortens the text by its count.",
         yours(ARTICLE_OPENING, NOTES), "bpe", numbers=(
             Number("len(text)", n.length(), 533, "000", printed="length: 533"),
             Number("the five most frequent pairs", n.top_pairs(5),
                    [(20, (101, 32)), (15, (240, 159)), (12, (226, 128)), (12, (105, 110)), (10, (115, 32))], "000",
                    printed="[(20, (101, 32)), (15, (240, 159)), (12, (226, 128)), (12, (105, 110)), (10, (115, 32)),"),
             Number("top_pair", n.top_pair, (101, 32), "000"),
             Number("length after one merge", n.length_after_one_merge, 596, "001",
                    printed="length after one round pair merge: 596"),
         )),
    Step("bpe/twenty-merges", "Twenty merges on the whole article",
         "Twenty merges, each the most frequent pair of the moment, turn 24,597 bytes into 19,438 tokens: "
         "1.27 times shorter, for a vocabulary of 276. Later merges build on earlier ones: 270 is 257 "
         "('in') plus 'g', and 275 is 'th' plus 'e '.",
         yours(ARTICLE, NOTES), "bpe", numbers=(
             Number("tokens length (bytes)", n.byte_count, 24597, "000", printed="tokens length: 24597"),
             Number("ids length after 20 merges", n.trained_length(20), 19438, "000", printed="ids length: 19438"),
             Number("compression ratio", n.compression(20), 1.27, "000", printed="compression ratio: 1.27X"),
             Number("merges", n.merges(20), ARTICLE_MERGES, "000"),
         )),
))

DECODING = Chapter("decoding", "Decoding and encoding", (
    Step("decoding/replace", "Not every byte sequence is UTF-8",
         "A byte of 128 or more alone is the middle of a character, not a character: strict decoding "
         "fails on it, and errors=\"replace\" writes � instead. In GPT-2 the lone byte 0x80 is token 222: "
         "type 222 in the inspector's decode box.",
         inline("€"), "inspector", tokenizer="gpt2", numbers=(
             Number('bytes([128]).decode("utf-8")', n.strict_decode_error(bytes([128])),
                    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte",
                    "002", printed="UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 0: "
                                   "invalid start byte"),
             Number('decode([128]) with errors="replace"', n.replaced(bytes([128])), "\ufffd", "001",
                    printed="\ufffd"),
             Number("GPT-2's token for the lone byte 0x80", n.token_with_bytes("gpt2", bytes([128]))),
         )),
    Step("decoding/vocab", "Decoding with the merges learned",
         "The vocabulary is the 256 bytes plus one entry per merge, each the two parts' bytes joined; "
         "decoding joins the tokens' bytes and decodes them once. With the article's merges 269 is 'en' "
         "and 265 is 'an'.",
         yours(ARTICLE, NOTES), "vocab", numbers=(
             Number("decode([269, 265])", n.trained_decode(20, [269, 265]), "enan", "000", printed="enan"),
             Number("decode([128])", n.trained_decode(20, [128]), "\ufffd", "001", printed="\ufffd"),
         )),
    Step("decoding/encode", "Encoding applies the merges in the order learned",
         "Encoding starts from the bytes again and, while some neighbouring pair is a merge, applies the "
         "one learned first (the lowest new id). With the article's merges 'y ' is 272, so 'hey hey hey' "
         "keeps 'he' apart. The Encode Trace view steps through one chunk's merges.",
         yours(ARTICLE, NOTES), "trace", numbers=(
             Number('encode("hey hey hey")', n.trained_ids(20, "hey hey hey"),
                    [104, 101, 272, 104, 101, 272, 104, 101, 121], "002"),
             Number('encode("h")', n.trained_ids(20, "h"), [104], "002"),
             Number('encode("")', n.trained_ids(20, ""), [], "002"),
             Number("decode(encode(text)) == text", n.trained_round_trip(20), True, "000"),
             Number('decode(encode("ये हिंदी है")) == "ये हिंदी है"',
                    n.trained_round_trip(20, n.literal("ये हिंदी है")), True, "002"),
             Number("merge rules applied encoding the text", n.rules_applied(20)),
         )),
))

REGEX = Chapter("regex", "The regex pre-split", (
    Step("regex/categories", "Letters, numbers and punctuation apart",
         "GPT-2 first cuts the text into chunks with a regex and merges only inside a chunk: letters, "
         "numbers and punctuation never share a token, and a space sticks to the word after it. The Chunks "
         "view lists the chunks of each line.",
         inline("Hello've world123 how's are you!!!?\nThis is the year2024\nWhat!!!?"), "chunks",
         tokenizer="gpt2", numbers=(
             Number("chunks of line 1", n.chunks("gpt2", n.line(0)),
                    ['Hello', "'ve", ' world', '123', ' how', "'s", ' are', ' you', '!!!?'], "000"),
             Number("chunks of line 2", n.chunks("gpt2", n.line(1)), ['This', ' is', ' the', ' year', '2024'], "002"),
             Number("chunks of line 3", n.chunks("gpt2", n.line(2)), ['What', '!!!?'], "002"),
         )),
    Step("regex/contractions", "Contractions, and the case they miss",
         "The pattern lists 's 't 're 've 'm 'll 'd with a straight apostrophe and in lower case only: a "
         "typographic ’ is punctuation, and WHO'S splits as ' and S. GPT-4's pattern matches them in any "
         "case: switch to cl100k_base and compare.",
         inline("who's don't you're you've I'm she'll he'd\nwho’s don’t\nwho's WHO'S"), "chunks", tokenizer="gpt2",
         numbers=(
             Number("chunks of line 1", n.chunks("gpt2", n.line(0)),
                    ['who', "'s", ' don', "'t", ' you', "'re", ' you', "'ve", ' I', "'m", ' she', "'ll", ' he', "'d"],
                    "002"),
             Number("chunks of line 2", n.chunks("gpt2", n.line(1)), ['who', '’', 's', ' don', '’', 't'], "002"),
             Number("chunks of line 3", n.chunks("gpt2", n.line(2)), ['who', "'s", ' WHO', "'", 'S'], "002"),
             Number("line 3 in GPT-4's pattern", n.chunks("cl100k_base", n.line(2))),
         )),
    Step("regex/spaces", "Runs of spaces",
         "A run of spaces is one chunk except its last space, which goes with the next word, so ' away' "
         "is the same chunk however many spaces come before it; spaces at the end stay together. Turn on "
         "View › Show Whitespace to see them.",
         inline("Far           away\nFar   away.     \nHello world how've are.     you!!!?   \n"
                "Hello world 123, 你好啊  ！ what's up? "), "chunks", tokenizer="gpt2", numbers=(
             Number("chunks of line 1", n.chunks("gpt2", n.line(0)), ['Far', '          ', ' away'], "002"),
             Number("chunks of line 2", n.chunks("gpt2", n.line(1)), ['Far', '  ', ' away', '.', '     '], "002"),
             Number("chunks of line 3", n.chunks("gpt2", n.line(2)),
                    ['Hello', ' world', ' how', "'ve", ' are', '.', '    ', ' you', '!!!?', '   '], "003"),
             Number("chunks of line 4", n.chunks("gpt2", n.line(3)),
                    ['Hello', ' world', ' 123', ',', ' 你好啊', ' ', ' ！', ' what', "'s", ' up', '?', ' '], "001"),
         )),
    Step("regex/python", "Python code in GPT-2's chunks",
         "Indentation becomes chunks of spaces after each newline ('\\n   ' then ' if'), and GPT-2 has no "
         "merged tokens for long runs of spaces, so each space costs a token. Compare the token counts "
         "of GPT-2 and GPT-4 in the next chapter.",
         inline(FIZZBUZZ), "chunks", tokenizer="gpt2", numbers=(
             Number("chunks", n.chunks("gpt2"), FIZZBUZZ_CHUNKS, "000"),
         )),
))

TIKTOKEN = Chapter("tiktoken", "GPT-2 vs GPT-4 in tiktoken", (
    Step("tiktoken/spaces", "Four spaces, then hello world!!!",
         "GPT-2 spends one token (220) per leading space; GPT-4 has a token for a run of spaces (262 is "
         "three of them) and for '!!!' (12340). The Compare view shows both side by side.",
         inline("    hello world!!!"), "compare", numbers=(
             Number("gpt2", n.ids("gpt2"), [220, 220, 220, 23748, 995, 10185], "000"),
             Number("cl100k_base", n.ids("cl100k_base"), [262, 24748, 1917, 12340], "000"),
         )),
    Step("tiktoken/more-spaces", "No spaces, five spaces, two spaces",
         "With no space in front 'hello' is one token in both (31373 in GPT-2, 15339 in GPT-4). With five "
         "spaces GPT-2 still spends four 220s while GPT-4 takes a four-space token (257); with two, both "
         "keep one space apart.",
         inline("hello world!!!\n     hello world!!!\n  hello world!!!"), "compare", numbers=(
             Number("gpt2, line 1", n.ids("gpt2", n.line(0)), [31373, 995, 10185], "001"),
             Number("cl100k_base, line 1", n.ids("cl100k_base", n.line(0)), [15339, 1917, 12340], "001"),
             Number("gpt2, line 2", n.ids("gpt2", n.line(1)), [220, 220, 220, 220, 23748, 995, 10185], "001"),
             Number("cl100k_base, line 2", n.ids("cl100k_base", n.line(1)), [257, 24748, 1917, 12340], "001"),
             Number("gpt2, line 3", n.ids("gpt2", n.line(2)), [220, 23748, 995, 10185], "003"),
             Number("cl100k_base, line 3", n.ids("cl100k_base", n.line(2)), [220, 24748, 1917, 12340], "003"),
         )),
    Step("tiktoken/python", "Python indentation: GPT-2 against GPT-4",
         "The same code costs GPT-2 far more tokens than GPT-4, mostly spaces: GPT-4's pattern and "
         "vocabulary keep indentation in a few tokens, one reason GPT-4 handles code better. The lecture "
         "showed this in a web page; here the counts come from the real vocabularies.",
         inline(FIZZBUZZ), "compare", numbers=(
             Number("gpt2 tokens", n.count("gpt2")),
             Number("cl100k_base tokens", n.count("cl100k_base")),
         )),
    Step("tiktoken/korean", "Korean and an emoji in GPT-4",
         "안 and 녕 take two tokens each and 하세요 only one; the emoji 👋 is two tokens (62904, 233), "
         "neither a whole character, so decoding just one of them gives �. The whole sequence decodes "
         "back to the text exactly.",
         inline("안녕하세요 👋 (hello in Korean!)"), "ids", tokenizer="cl100k_base", numbers=(
             Number("ids", n.ids("cl100k_base"),
                    [31495, 230, 75265, 243, 92245, 62904, 233, 320, 15339, 304, 16526, 16715], "000"),
             Number("decode(encode(text)) == text", n.round_trip("cl100k_base"), True, "000"),
         )),
))

SPECIAL = Chapter("special", "Special tokens and extending a vocabulary", (
    Step("special/endoftext", "GPT-2's one special token",
         "GPT-2's 50,257 tokens are the 256 bytes, 50,000 merges and <|endoftext|>, which separates "
         "documents in training. It is not made by merges: the encoder cuts it out of the text before "
         "BPE, and only when the policy allows it (this step sets 'all').",
         inline("The end of one document.<|endoftext|>The start of the next."), "ids", tokenizer="gpt2",
         policy="all", numbers=(
             Number("len(encoder)", n.n_vocab("gpt2"), 50257, "000"),
             Number("encoder['<|endoftext|>']", n.special_id("gpt2", "<|endoftext|>"), 50256, "000"),
             Number("the first ten tokens", n.first_tokens("gpt2", 10),
                    ['!', '"', '#', '$', '%', '&', "'", '(', ')', '*'], "003"),
             Number("ids of the text", n.ids("gpt2", allowed_special="all")),
         )),
    Step("special/cl100k", "GPT-4's special tokens",
         "cl100k_base adds fill-in-the-middle tokens (a model sees the prefix and suffix and writes the "
         "middle) and <|endofprompt|>. The 100,256 merged tokens end at 100255; ids 100256 and 100261 "
         "to 100275 are unused, and the vocabulary counts 100,277.",
         inline("<|fim_prefix|>def add(a, b):<|fim_suffix|>    return total<|fim_middle|>"), "ids",
         tokenizer="cl100k_base", policy="all", numbers=(
             Number("ENDOFTEXT", n.special_id("cl100k_base", "<|endoftext|>"), 100257, "001",
                    printed="ENDOFTEXT: 100257"),
             Number("FIM_PREFIX", n.special_id("cl100k_base", "<|fim_prefix|>"), 100258, "001",
                    printed="FIM_PREFIX: 100258"),
             Number("FIM_MIDDLE", n.special_id("cl100k_base", "<|fim_middle|>"), 100259, "001",
                    printed="FIM_MIDDLE: 100259"),
             Number("FIM_SUFFIX", n.special_id("cl100k_base", "<|fim_suffix|>"), 100260, "001",
                    printed="FIM_SUFFIX: 100260"),
             Number("ENDOFPROMPT", n.special_id("cl100k_base", "<|endofprompt|>"), 100276, "001",
                    printed="ENDOFPROMPT: 100276"),
             Number("len(enc)", n.n_vocab("cl100k_base")),
         )),
    Step("special/policy", "Special text in user text",
         "Text that merely spells <|endoftext|> is a problem: encoded as the special token it would end "
         "the document. tiktoken refuses it by default; 'none' encodes it as seven plain tokens. Switch "
         "the tool bar's Special tokens policy and watch the ids change.",
         inline(_sample("endoftext")), "editor", tokenizer="gpt2", policy="refuse", numbers=(
             Number("ids with 'all'", n.ids("gpt2", allowed_special="all")),
             Number("ids with 'none'", n.ids("gpt2", allowed_special="none")),
         )),
    Step("special/extend", "Adding <|im_start|> and <|im_end|>",
         "A chat model needs new special tokens: tiktoken builds a new encoding with the same ranks and "
         "more special tokens (and the model needs new embedding rows). The window cannot add them to a "
         "built-in yet; the command line can: tokexplorer encode -t cl100k_base --add-special "
         "'<|im_start|>=100264' --add-special '<|im_end|>=100265' --allowed-special all.",
         inline("<|im_start|>user hello<|im_end|>"), "ids", tokenizer="cl100k_base", numbers=(
             Number("ids with the two tokens added",
                    n.with_specials("cl100k_base", {"<|im_start|>": 100264, "<|im_end|>": 100265})),
         )),
))

SENTENCEPIECE = Chapter("sentencepiece", "SentencePiece with the Llama 2 options", (
    Step("sentencepiece/train", "Train with the Llama 2 options",
         "SentencePiece merges code points, not bytes, and falls back to UTF-8 bytes (<0xEC>) for "
         "characters it never saw. Trained on an English paragraph with a vocabulary of 400, it spells "
         "Korean as bytes, and ▁ stands for the space, with one added in front (add_dummy_prefix). "
         "Train it in the Training view with the SentencePiece preset.",
         yours(SP_README, STAND_IN), "training", numbers=(
             Number('sp.encode("hello 안녕하세요")', n.sp_ids(400, "hello 안녕하세요"), HELLO_KOREAN_SP, "000"),
             Number("its pieces", n.sp_pieces(400, "hello 안녕하세요"), HELLO_KOREAN_PIECES, "000"),
             Number("the first five pieces", n.sp_first_pieces(400, 5)),
         )),
    Step("sentencepiece/no-fallback", "Byte fallback off",
         "Without byte fallback the 256 byte pieces are gone, so more merges fit in 400, and every unseen "
         "character becomes <unk> (id 0): the whole Korean word is one unknown token, information the "
         "model can never get back.",
         yours(SP_README, STAND_IN), "training", numbers=(
             Number('sp.encode("hello 안녕하세요")', n.sp_ids(400, "hello 안녕하세요", byte_fallback=False),
                    [362, 378, 252, 102, 362, 0], "002"),
         )),
    Step("sentencepiece/llama", "A Llama-style model's pieces",
         "The built-in llama-sp is a 32,000-piece SentencePiece BPE with byte fallback. Its pieces are "
         "named as sentencepiece names them; the editor writes ▁ as a visible space and byte pieces as "
         "\\xNN.",
         inline("hello 안녕하세요"), "ids", tokenizer="llama-sp", numbers=(
             Number("pieces", n.pieces("llama-sp")),
             Number("vocab size", n.n_vocab("llama-sp")),
         )),
))

VOCAB_SIZE = Chapter("vocab-size", "Vocab size", (
    Step("vocab-size/three", "Three vocabularies, one text",
         "A bigger vocabulary makes sequences shorter, at the price of a bigger embedding table and "
         "output layer and of rarer tokens that train less. The Plots view draws sequence length "
         "against vocab size for your own training runs.",
         resource("udhr/udhr_eng.txt"), "plots", tokenizer="gpt2", numbers=(
             Number("gpt2 (50,257) tokens", n.count("gpt2")),
             Number("cl100k_base (100,277) tokens", n.count("cl100k_base")),
             Number("o200k_base (200,019) tokens", n.count("o200k_base")),
         )),
    Step("vocab-size/hindi", "The same declaration in Hindi",
         "Devanagari letters take three bytes each and were rare in GPT-2's training text, so the Hindi "
         "text costs several times the English one; GPT-4o's larger vocabulary narrows the gap.",
         resource("udhr/udhr_hin.txt"), "compare", tokenizer="gpt2", numbers=(
             Number("gpt2 tokens", n.count("gpt2")),
             Number("cl100k_base tokens", n.count("cl100k_base")),
             Number("o200k_base tokens", n.count("o200k_base")),
         )),
    Step("vocab-size/biography", "A vocabulary of 1,000 from one biography",
         "744 merges learned on one English biography give the subject's name a token of its own: "
         "what a tokenizer's training text is about shows in its vocabulary. Text in a script it never "
         "saw still decodes exactly, byte by byte.",
         yours(KOHLI, STAND_IN), "training", numbers=(
             Number('encode("Kohli")', n.trained_ids(744, "Kohli"), [285], "004"),
             Number('encode("Virat Kohli scored a hundred")', n.trained_ids(744, "Virat Kohli scored a hundred"),
                    [957, 355, 300, 341, 489, 104, 509, 114, 280], "004"),
             Number('decode(encode("科利得分一百"))', n.trained_again(744, "科利得分一百"), "科利得分一百", "004",
                    printed="科利得分一百"),
         )),
))

QUIRKS = Chapter("quirks", "The quirks", (
    Step("quirks/long-token", "Why spelling is hard",
         "'.DefaultCellStyle' is one token in GPT-4: the model sees one number, not seventeen characters, "
         "so spelling or reversing it means recalling what is inside the token.",
         inline(_sample("long-token")), "ids", tokenizer="cl100k_base", numbers=(
             Number("tokens", n.count("cl100k_base"), 1, "002",
                    printed="`.DefaultCellStyle` turned out to be a single individual token"),
         )),
    Step("quirks/non-english", "Why other languages cost more",
         "The same greeting takes more tokens in Korean than in English, more so in GPT-2: fewer Korean "
         "merges were learned, so each syllable is one or more tokens.",
         inline(_sample("non-english")), "compare", numbers=(
             Number("gpt2 tokens per line", n.count_per_line("gpt2")),
             Number("cl100k_base tokens per line", n.count_per_line("cl100k_base")),
         )),
    Step("quirks/arithmetic", "Why arithmetic is hard",
         "GPT-2 cuts numbers wherever its merges happen to fall; GPT-4 cuts digits in threes from the left "
         "(\\p{N}{1,3}), and Llama splits every digit: column arithmetic sees different pieces of the same "
         "number.",
         inline(_sample("arithmetic")), "compare", numbers=(
             Number("gpt2 chunks", n.chunks("gpt2")),
             Number("cl100k_base chunks", n.chunks("cl100k_base")),
         )),
    Step("quirks/trailing-space", "The trailing whitespace warning",
         "A space at the end of a prompt is a token on its own, while in training text a space almost "
         "always starts the next word: the prompt ends in a place the model rarely saw.",
         inline(_sample("trailing-space")), "ids", tokenizer="cl100k_base", numbers=(
             Number("ids of each line", n.ids_per_line("cl100k_base")),
         )),
    Step("quirks/solidgoldmagikarp", "SolidGoldMagikarp",
         "' SolidGoldMagikarp' is one GPT-2 token, a Reddit user name frequent in the tokenizer's "
         "training text but almost absent from the model's, so its embedding barely trained. The "
         "glitch-token view lists such tokens.",
         inline(_sample("solidgoldmagikarp")), "glitch", tokenizer="gpt2", numbers=(
             Number("ids", n.ids("gpt2")),
         )),
    Step("quirks/json-vs-yaml", "JSON or YAML",
         "The same record costs fewer tokens as YAML than as JSON: quotes, braces and commas are tokens "
         "too.",
         inline(_sample("json-vs-yaml")), "compare", tokenizer="cl100k_base", numbers=(
             Number("cl100k_base tokens", n.count("cl100k_base")),
         )),
))

CHAPTERS: tuple[Chapter, ...] = (UNICODE, BPE, DECODING, REGEX, TIKTOKEN, SPECIAL, SENTENCEPIECE, VOCAB_SIZE, QUIRKS)


def all_steps() -> list[Step]:
    return [step for chapter in CHAPTERS for step in chapter.steps]


def step_by_key(key: str) -> Step:
    """A step by its key.

    >>> step_by_key("unicode/utf").title
    'UTF-8, UTF-16 and UTF-32'
    """
    for step in all_steps():
        if step.key == key:
            return step
    raise TokexplorerError(f"no lesson step {key!r}")
