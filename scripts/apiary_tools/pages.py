"""The tools' HTML page: one self-contained file (figures embedded as PNG or SVG images,
nothing loaded from anywhere, no script) of headings, rendered Markdown and figures. report-html
writes one for each kind of result, rc-tune one of its tuning and `history trend` one of the
trends, so that they all look alike.

Floor: results. Thread safety: a Page is built by one thread.
"""

from __future__ import annotations

import base64
import datetime
import html
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import markdown as markdown_lib

from .common import ToolError
from .inputs import read_bytes

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1400px;
       padding: 0 1rem; color: #1d1d1f; background: #fff; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
.meta { color: #666; font-size: 0.9rem; }
table { border-collapse: collapse; margin: 0.8rem 0 1.2rem; font-size: 0.85rem; }
th, td { border: 1px solid #d0d0d0; padding: 0.25rem 0.55rem; }
th { background: #f3f4f6; } tr:nth-child(even) td { background: #fafafa; }
td:not(:first-child) { font-variant-numeric: tabular-nums; }
code { font-size: 0.85em; color: #555; } blockquote { color: #555; margin-left: 0; padding-left: 1rem;
                                                   border-left: 3px solid #ccc; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #666; font-size: 0.85rem; }
"""
# The largest flame graph a page embeds (inferno's of a long profile is a few MB).
MAX_SVG_BYTES = 64 << 20


@dataclass
class Page:
    """The page's sections in order: headings, rendered Markdown and embedded figures."""
    title: str
    subtitle: str
    parts: list[str] = field(default_factory=list)
    tool: str = "report-html"   # the tool that writes the page, named at its top

    def heading(self, text: str) -> None:
        self.parts.append(f"<h2>{html.escape(text)}</h2>")

    def markdown(self, text: str) -> None:
        self.parts.append(markdown_lib.markdown(text, extensions=["tables"]))

    def figure(self, draw: Callable[[Path], Any], caption: str) -> None:
        """Draws with one of the tools' own figure functions into a file, and embeds it."""
        with tempfile.TemporaryDirectory(prefix="apiary-html-") as tmp:
            path = Path(tmp) / "figure.png"
            drawn = draw(path)
            images = [base64.b64encode(Path(p).read_bytes()).decode("ascii")
                      for p in (drawn if isinstance(drawn, list) else [path])]
        for data in images:
            self.parts.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                              f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def svg(self, path: Path, caption: str) -> None:
        """Embeds an SVG file (a flame graph) as an image, or says why it cannot."""
        try:
            data = read_bytes(path, "an SVG image", MAX_SVG_BYTES)
        except ToolError as e:
            self.parts.append(f"<p>{html.escape(caption)}: not shown ({html.escape(str(e))})</p>")
            return
        if b"<svg" not in data[:4096]:
            self.parts.append(f"<p>{html.escape(caption)}: not shown ({html.escape(path.name)} is not SVG)</p>")
            return
        encoded = base64.b64encode(data).decode("ascii")
        self.parts.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/svg+xml;base64,{encoded}">'
                          f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def render(self) -> str:
        created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return "\n".join([
            "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1>",
            f'<p class="meta">{html.escape(self.subtitle)}; written {created} by scripts/{self.tool}</p>',
            *self.parts, "</body></html>", ""])
