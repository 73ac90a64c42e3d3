"""A stand-in for a window that dies without warning: starts the trainer's child on a corpus that
never arrives (a named pipe nobody writes to: the child waits in silence, as it does while it
splits a big corpus or SentencePiece trains), prints the child's pid, then waits to be killed
(test_training.py kills it with SIGKILL). Usage: orphan_parent.py FIFO_PATH"""

import multiprocessing
import sys
import time

from tokexplorer.core.training.child import main
from tokexplorer.core.training.runner import TrainingRequest

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    parent_end, child_end = ctx.Pipe()
    request = TrainingRequest("orphan", "bpe", 32768, paths=(sys.argv[1],))
    child = ctx.Process(target=main, args=(request, child_end), daemon=True)
    child.start()
    parent_end.recv()  # "reading FIFO_PATH": the child now waits for its corpus
    print(child.pid, flush=True)
    time.sleep(600)
