"""The picture as PNG, drawn with Pillow (:func:`render_png`)."""

from __future__ import annotations

import io
import math

from podnuma.machine.topology import Machine
from podnuma.render.picture.layout import FONT, LINE, NUMA_BAR, PAD, _cpus_text, _ink, build_picture
from podnuma.render.picture.ownership import Ownership


def _rgb(color: str) -> tuple[int, int, int]:
    return (int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16))


def render_png(machine: Machine, own: Ownership, *, scale: float = 1.5) -> bytes:
    """The same picture as :func:`render_svg`, drawn with Pillow (its own
    bundled font: no system fonts or libraries needed), as PNG bytes."""
    from PIL import Image, ImageDraw, ImageFont

    pic = build_picture(machine, own)
    k = scale
    img = Image.new("RGB", (math.ceil(pic.width * k), math.ceil(pic.height * k)), "#ffffff")
    draw = ImageDraw.Draw(img)
    fonts: dict[int, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}

    def font(size: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        px = round(size * k)
        if px not in fonts:
            fonts[px] = ImageFont.load_default(size=px)
        return fonts[px]

    def rect(x: float, y: float, w: float, h: float, fill: str) -> None:
        draw.rectangle(
            (round(x * k), round(y * k), round((x + w) * k), round((y + h) * k)),
            fill=_rgb(fill), outline=(0, 0, 0), width=max(1, round(k)),
        )

    def text(x: float, y: float, s: str, size: float, ink: str = "#000000",
             anchor: str = "ls") -> None:
        draw.text((x * k, y * k), s, fill=_rgb(ink), font=font(size), anchor=anchor)

    for b in pic.boxes:
        rect(b.x, b.y, b.w, b.h, b.fill)
        if b.kind == "pu":
            ink = _ink(b.fill)
            text(b.x + b.w / 2, b.y + 15, b.lines[0], FONT, ink, "ms")
            text(b.x + b.w / 2, b.y + 30, b.lines[1], FONT - 1, ink, "ms")
            continue
        if b.bar_h:
            rect(b.x, b.y, b.w, b.bar_h, NUMA_BAR)
        for i, line in enumerate(b.lines):
            size = FONT + 2 if b.kind == "machine" and i == 0 else FONT
            text(b.x + PAD, b.y + 13 + i * LINE, line, size)
    tx, ty = pic.legend_title
    text(tx, ty, f"CPU owners, {own.caption()}", FONT)
    sw, sh = pic.swatch_w, pic.swatch
    for item in pic.legend:
        rect(item.x, item.y, sw, sh, item.color)
        text(item.x + sw / 2, item.y + 12, item.key, FONT - 1, _ink(item.color), "ms")
        text(item.x + sw + 8, item.y + 12, item.owner, FONT)
        text(pic.cpus_x, item.y + 12, _cpus_text(item.cpus), FONT)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()
