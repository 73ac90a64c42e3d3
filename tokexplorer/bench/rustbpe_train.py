"""The second peer of `tokexplorer train` in `bench --training`: rustbpe (the Rust trainer behind
nanochat) as a user's whole script. Run by path, so that it imports nothing of tokexplorer:
python rustbpe_train.py VOCAB_SIZE PATTERN CORPUS...

It trains with the same split pattern and vocab size, fed the files' lines (rustbpe splits and
counts a buffer of them at a time on every core), and prints the vocab size reached. rustbpe breaks
ties between equally frequent pairs its own way, so its merges are not minbpe's; the bench compares
time and memory only. It writes nothing: rustbpe saves no files of its own.
"""

import sys


def lines(paths):
    for path in paths:
        with open(path, encoding="utf-8", newline="") as f:
            yield from f


def main(vocab_size: str, pattern: str, *corpus: str) -> None:
    import rustbpe  # (here: the module is importable, and collected, where the optional peer is not installed)

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(lines(corpus), int(vocab_size), pattern=pattern)
    print(tok.vocab_size)


if __name__ == "__main__":
    main(*sys.argv[1:])
