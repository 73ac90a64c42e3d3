"""Render the SVG icon to the PNG sizes desktops ask for (run after editing the SVG).

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py
"""

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def main() -> None:
    app = QGuiApplication([])  # noqa: F841 (QImage painting needs one)
    renderer = QSvgRenderer(str(ICONS / "tokexplorer.svg"))
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(ICONS / f"tokexplorer-{size}.png"))
        print(ICONS / f"tokexplorer-{size}.png")


if __name__ == "__main__":
    main()
