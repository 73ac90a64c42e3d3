"""Token colours: neighbours never share one (every built-in, the shared corpora), the palettes keep
text readable and their colours apart (also as seen with protanopia and deuteranopia), and the
View > Token Colours choice is painted and kept in the settings."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QColor, QPalette

from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.core.token_colours import N_COLOURS, colour_indices, drawn_colour
from tokexplorer.gui.widgets.colours import SCHEMES, TokenPalette, application_palette

from .helpers import wait_settled
from .test_shaping import CORPORA


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPORA.rglob("*") if p.is_file() and p.name != "README.md")


def drawn(colours: np.ndarray) -> np.ndarray:
    return np.array([drawn_colour(int(c)) for c in range(2 * N_COLOURS)])[colours]


@pytest.mark.parametrize("name", builtin_names())
def test_neighbours_never_share_a_colour(name):
    tok = get_builtin(name)
    checked = 0
    for path in corpus_files():
        text = path.read_bytes()[:200_000].decode("utf-8", errors="replace")
        colours = drawn(colour_indices(tok.encode(text, allowed_special="none").id_array))
        assert (colours[1:] != colours[:-1]).all(), path.name
        checked += len(colours)
    assert checked > 100_000


def test_a_run_of_one_token_alternates():
    colours = drawn(colour_indices(np.array([7] * 9 + [8, 8])))
    assert (colours[1:] != colours[:-1]).all() and len(set(colours[:9].tolist())) == 2


def slow_colour_indices(ids) -> list[int]:
    """The rule read plainly: a token whose colour is the one its left neighbour is drawn in takes
    the opposite one."""
    out, before = [], None
    for i in ids:
        c = ((int(i) * 2654435761) & 0xFFFFFFFF) >> 16 & 0xFFFF
        c %= N_COLOURS
        out.append(c + N_COLOURS if c == before else c)
        before = drawn_colour(out[-1])
    return out


@pytest.mark.parametrize("block", [1, 2, 3, 64, 1 << 20])
def test_colours_computed_in_blocks_follow_the_rule(monkeypatch, block):
    import tokexplorer.core.token_colours as colours

    monkeypatch.setattr(colours, "COLOUR_BLOCK", block)
    rng = np.random.default_rng(7)
    runs = np.repeat(rng.integers(0, 40, 600), rng.integers(1, 6, 600))  # long same-colour chains
    for ids in [np.array([], dtype=np.int64), np.array([9]), rng.integers(0, 3, 500), runs,
                rng.integers(0, 200_000, 3000)]:
        assert colour_indices(ids).tolist() == slow_colour_indices(ids.tolist())


# Machado, Oliveira and Fernandes (2009), severity 1.0, applied to linear RGB.
VISION = {
    "normal": np.eye(3),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
}


def linear(c: QColor) -> np.ndarray:
    v = np.array([c.redF(), c.greenF(), c.blueF()])
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def lab(rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb
    f = np.where(xyz / [0.95047, 1, 1.08883] > 0.008856, np.cbrt(xyz / [0.95047, 1, 1.08883]),
                 7.787 * xyz / [0.95047, 1, 1.08883] + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def contrast(a: QColor, b: QColor) -> float:
    la, lb = (float(linear(c) @ [0.2126, 0.7152, 0.0722]) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


@pytest.mark.parametrize("dark", [False, True])
@pytest.mark.parametrize("scheme", [s for s in SCHEMES if s != "boundaries"])
def test_palettes_keep_text_readable_and_colours_apart(scheme, dark):
    palette = TokenPalette(dark, scheme)
    text = application_palette(dark).color(QPalette.ColorRole.Text) if dark else QColor("black")
    colours = [palette.background(i) for i in range(N_COLOURS)]
    assert min(contrast(c, text) for c in colours) >= 4.5  # WCAG AA for normal text
    for vision, matrix in VISION.items():
        points = [lab(np.clip(matrix @ linear(c), 0, 1)) for c in colours]
        # A token whose id hashes to its neighbour's colour takes the opposite one: always far.
        opposite = min(np.linalg.norm(points[i] - points[drawn_colour(i + N_COLOURS)]) for i in range(N_COLOURS))
        assert opposite >= 20, (vision, opposite)
        if vision == "normal":
            closest = min(np.linalg.norm(a - b) for a, b in itertools.combinations(points, 2))
            assert closest >= 12  # CIE76: clearly different colours


def test_token_colours_are_painted_and_kept(qtbot, make_window):
    window = make_window()
    window.documents.set_text("hello world, tokens everywhere")
    wait_settled(qtbot, window)
    editor = window.editor
    menu = window.findChild(type(window.menuBar().actions()[0].menu()), "token_colours_menu")
    labels = {a.data(): a for a in menu.actions()}
    assert set(labels) == set(SCHEMES) and labels["soft"].isChecked()
    soft = editor.viewport().grab().toImage()
    labels["boundaries"].trigger()
    assert window.state.token_colours == "boundaries" and labels["boundaries"].isChecked()
    image = editor.viewport().grab().toImage()
    assert image != soft
    first = editor.drawn_tokens()[0]
    soft_colour = TokenPalette(False, "soft").background(first[2])
    pixels = {image.pixelColor(x, y).name() for x in range(0, image.width(), 2) for y in range(0, 40)}
    assert soft_colour.name() not in pixels  # no backgrounds
    assert TokenPalette(False, "boundaries").boundary.name() in pixels  # but a line at each boundary
    window.window_settings.save()
    again = make_window()
    assert again.state.token_colours == "boundaries"


def indicator_contrast(style_name: str, checked: bool, qtbot) -> tuple[int, int]:
    """A check box drawn in the dark theme: (the largest difference in lightness between the
    indicator's pixels and the window behind it, the lightest pixel inside the indicator)."""
    from PySide6.QtWidgets import QCheckBox, QStyle, QStyleFactory, QStyleOptionButton

    from tokexplorer.gui.widgets.theme_style import ThemeStyle

    box = QCheckBox("Show whitespace")
    qtbot.addWidget(box)
    box.setStyle(ThemeStyle() if style_name == "theme" else QStyleFactory.create("Fusion"))
    box.setPalette(application_palette(True))
    box.setChecked(checked)
    box.resize(box.sizeHint())
    image = box.grab().toImage()
    option = QStyleOptionButton()
    box.initStyleOption(option)
    rect = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    window = application_palette(True).color(QPalette.ColorRole.Window).lightness()
    ratio = image.width() / box.width()  # device pixels per pixel
    lightness = [image.pixelColor(int(x * ratio), int(y * ratio)).lightness()
                 for x in range(rect.left(), rect.right() + 1) for y in range(rect.top(), rect.bottom() + 1)]
    return max(abs(v - window) for v in lightness), max(lightness)


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked", "checked"])
def test_check_boxes_are_visible_in_the_dark_theme(qtbot, checked):
    """Fusion's dark check box differs from the window by a few steps of lightness (its edge is the
    window darkened); the theme's style gives it a light edge, and a white tick on an accent."""
    fusion, _ = indicator_contrast("fusion", checked, qtbot)
    contrast, lightest = indicator_contrast("theme", checked, qtbot)
    if not checked:
        assert fusion < 40  # what a user could hardly see (Fusion's tick, once checked, is light)
    assert contrast > 100
    if checked:
        assert lightest > 240  # the white tick
