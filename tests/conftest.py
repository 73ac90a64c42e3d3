"""Shared test fixtures: where the corpora are, the built-in tokenizers loaded once, and the one
hypothesis budget of the whole suite (profiles below, chosen by TOKEXPLORER_HYPOTHESIS)."""

from __future__ import annotations

import ast
import json
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The budget of every property test, in one place. "ci" (the default): few examples, always the
# same ones (a failure in CI fails every run, not one in ten), nothing written to .hypothesis/.
# "long": thousands of random examples, for a run by hand (the README gives the command); a failure
# prints the @reproduce_failure line to replay it. No deadlines: the machine is shared and loaded.
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=3000, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("TOKEXPLORER_HYPOTHESIS", "ci"))


def _find_corpora() -> Path | None:
    if os.environ.get("TOKEXPLORER_CORPORA"):
        return Path(os.environ["TOKEXPLORER_CORPORA"])
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "corpora"
        if candidate.is_dir():
            return candidate
    return None


def _ctrl_c_state() -> tuple[bool, bool]:
    """(Ctrl-C ignored, Ctrl-C blocked in this thread): what a child started now would inherit."""
    blocked = hasattr(signal, "pthread_sigmask") and signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN, blocked


@pytest.fixture(autouse=True)
def _ctrl_c_left_as_found():
    """Every test leaves Ctrl-C as it found it: a worker left ignoring or blocking it makes every
    child a later test starts ignore it too (three Ctrl-C tests timed out that way in CI)."""
    before = _ctrl_c_state()
    yield
    after = _ctrl_c_state()
    assert after == before, f"this test left Ctrl-C (ignored, blocked) {after}, found {before}"


CORPORA = _find_corpora()
SEEDS = next((p / "shared" / "seeds" for p in Path(__file__).resolve().parents
              if (p / "shared" / "seeds").is_dir()), None)
BUILTINS = ["gpt2", "cl100k_base", "o200k_base", "llama-sp"]


@pytest.fixture(scope="session")
def corpora() -> Path:
    """The shared corpora folder; CI sets TOKEXPLORER_REQUIRE_CORPORA so a missing one fails."""
    if CORPORA is None or not CORPORA.is_dir():
        if os.environ.get("TOKEXPLORER_REQUIRE_CORPORA"):
            pytest.fail("the corpora folder ../shared/corpora is missing (set TOKEXPLORER_CORPORA)")
        pytest.skip("the corpora folder ../shared/corpora is missing")
    return CORPORA


@pytest.fixture(scope="session")
def seeds() -> dict[str, str]:
    """The lecture's five notebooks (../shared/seeds) by their prefix, "000" to "004": test data
    holding texts tokexplorer may not ship. Like the corpora, CI requires them."""
    if SEEDS is None:
        if os.environ.get("TOKEXPLORER_REQUIRE_CORPORA"):
            pytest.fail("the lecture notes ../shared/seeds are missing")
        pytest.skip("the lecture notes ../shared/seeds are missing")
    return {path.name[:3]: path.read_text(encoding="utf-8") for path in sorted(SEEDS.glob("*.txt"))}


@pytest.fixture(scope="session")
def lecture_article(seeds) -> str:
    """The blog article the lecture trains its 20 merges on, as notebook 000 spells it."""
    notebook = seeds["000"]
    start = notebook.index('text = """A Programmer')
    end = notebook.index('"""', start + len('text = """')) + 3
    return ast.literal_eval(notebook[start + len("text = "):end])


@pytest.fixture(scope="session")
def tricky_strings(corpora) -> list[tuple[str, str]]:
    """(name, text) of the hand-made hard cases and of the big list of naughty strings."""
    items = [(d["name"], d["text"]) for d in json.loads((corpora / "unicode/tricky_handmade.json").read_text("utf-8"))]
    naughty = json.loads((corpora / "unicode/blns.json").read_text("utf-8"))
    items += [(f"blns_{i}", s) for i, s in enumerate(naughty)]
    return items


@pytest.fixture(scope="session", params=BUILTINS)
def builtin(request):
    """Each built-in tokenizer, loaded once per session."""
    from tokexplorer.core.registry import get_builtin

    return get_builtin(request.param)


@pytest.fixture(scope="session", autouse=True)
def process_settings_dir(tmp_path_factory):
    """A settings folder of this test process's own, named in TOKEXPLORER_SETTINGS_DIR for the
    whole session (and a cache folder, TOKEXPLORER_CACHE), so that nothing a test runs (a window, a command, a child process that inherits
    the environment) reads or writes the developer's settings or another xdist worker's. Each GUI
    test narrows this further to a folder of its own (tests/gui/conftest.py)."""
    folder = tmp_path_factory.mktemp("settings")  # under this worker's own base temp folder
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOKEXPLORER_SETTINGS_DIR", str(folder))
        # The built-ins' compact copies (core/files/vocab_cache) too: never the developer's cache.
        mp.setenv("TOKEXPLORER_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield folder


def pytest_collection_modifyitems(config, items):
    """Mark every hypothesis test `property`, so `-m property` runs exactly those. Under xdist,
    hand out the `slow` tests first: a minute-long test started last would keep one worker busy
    after the others have finished (every worker collects in this same order)."""
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)
    if hasattr(config, "workerinput"):  # an xdist worker: its order is the scheduler's
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable


@pytest.fixture
def umask_022():
    """The usual umask (group and others may read), whatever the test process's own is."""
    old = os.umask(0o022)
    yield
    os.umask(old)
