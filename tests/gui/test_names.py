"""Names a user meets: opened tokenizer files say which folder they came from, and the trained
tokenizer's Save dialog starts where tokenizers were saved before, not in the corpus's folder.
(A training run stopped early is named by what it holds: tests/gui/test_training.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import QStandardPaths

from tokexplorer.gui import settings as keys

from ..core.family_peers import train_byte_level_bpe
from .helpers import wait_settled
from .test_training import picker_names, run_training


def test_opened_tokenizer_files_say_which_folder(qtbot, window, corpora, tmp_path):
    """Two models' tokenizer.json: "tokenizer.json (Qwen2.5-7B)" and "tokenizer.json (Llama-3-8B)",
    not two bare "tokenizer.json" in the picker; a telling file name stays as it is."""
    (tmp_path / "a" / "Qwen2.5-7B").mkdir(parents=True)
    first = train_byte_level_bpe(corpora, tmp_path / "a" / "Qwen2.5-7B" / "tokenizer.json")
    second = tmp_path / "b" / "Llama-3-8B" / "tokenizer.json"
    second.parent.mkdir(parents=True)
    shutil.copy(first, second)
    same_folder_name = tmp_path / "c" / "Qwen2.5-7B" / "tokenizer.json"
    same_folder_name.parent.mkdir(parents=True)
    shutil.copy(first, same_folder_name)
    telling = tmp_path / "my-shakespeare.json"
    shutil.copy(first, telling)
    for path in (first, second, same_folder_name, telling):
        window.documents.open_tokenizer(path)
        qtbot.waitUntil(lambda: window.state.catalog.path_of(window.state.tokenizer) == path, timeout=20_000)
        wait_settled(qtbot, window)
    names = picker_names(window)
    assert names[-4:] == ["tokenizer.json (Qwen2.5-7B)", "tokenizer.json (Llama-3-8B)",
                          "tokenizer.json (c/Qwen2.5-7B)", "my-shakespeare.json"]
    assert window.state.catalog.path_of("tokenizer.json (Llama-3-8B)") == second


def test_the_save_dialog_starts_in_documents_then_where_saved_last(qtbot, window, corpora, tmp_path):
    corpus_folder = tmp_path / "corpus"
    corpus_folder.mkdir()
    corpus = corpus_folder / "swift.txt"
    corpus.write_text((corpora / "en/taylorswift.txt").read_text("utf-8")[:5_000], "utf-8")
    panel = window.training_panel
    panel.set_paths([corpus])
    panel.vocab_spin.setValue(300)
    run_training(qtbot, panel)
    asked = window.dialogs.asked
    panel.save()  # cancelled: FakeDialogs answers None
    suggested = Path(asked[-1][1])
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    assert suggested.parent == (Path(documents) if Path(documents).is_dir() else Path.home())
    assert suggested.parent != corpus_folder and suggested.name == "BPE_gpt4_300__swift"
    # Saved into a folder of the user's choosing: the next Save starts there, in this window and the next.
    target = tmp_path / "tokenizers"
    target.mkdir()
    window.dialogs.paths["save_tokenizer"] = (str(target / "mine"), "minbpe")
    panel.save()
    qtbot.waitUntil(lambda: panel.message.text().startswith("saved "), timeout=20_000)
    assert keys.open_settings().value(keys.SAVE_FOLDER) == str(target)
    panel.save()
    assert Path(asked[-1][1]).parent == target
