"""The peer of `tokexplorer train` in `bench --training`: Hugging Face `tokenizers`' BPE trainer as
a user's whole script. Run by path, not as part of the package, so that it imports nothing of
tokexplorer: python hf_train.py OUT_DIR VOCAB_SIZE PATTERN CORPUS...

It trains what `tokexplorer train --pattern gpt4` trains (the same split pattern, byte-level, the
256 bytes as the initial alphabet), fed line by line (its fastest way), and writes vocab.json and
merges.txt into OUT_DIR. It prints the vocab size reached.
"""

import sys

from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers


def main(out_dir: str, vocab_size: str, pattern: str, *corpus: str) -> None:
    text = "".join(open(p, encoding="utf-8", newline="").read() for p in corpus)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=int(vocab_size), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(text.splitlines(keepends=True), trainer)
    tok.model.save(out_dir)
    print(tok.get_vocab_size())


if __name__ == "__main__":
    main(*sys.argv[1:])
