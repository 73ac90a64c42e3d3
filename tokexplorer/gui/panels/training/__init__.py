"""The training workbench, one idea a module:

- `corpus`: the corpus chooser (files or the current text, its size and a preview);
- `form`: the settings (algorithm, split pattern with its live preview, SentencePiece options,
  vocab size, special tokens, the buttons) and the `TrainingRequest` they make;
- `progress`: a run's progress bar, rate line and live compression curve;
- `merge_log`: the merges learned so far, as a table model and its view;
- `panel`: `TrainingPanel`, the form with a run, its result, saving and the questions on closing.

It holds no training code (the core's runner does that, in a child process) and no tokenizer
(the tokenizing server builds and saves the result).
"""

from tokexplorer.gui.panels.training.panel import TrainingPanel

__all__ = ["TrainingPanel"]
