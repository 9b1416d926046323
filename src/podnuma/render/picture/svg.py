"""The picture as SVG (:func:`render_svg`)."""

from __future__ import annotations

import html

from podnuma.machine.topology import Machine
from podnuma.render.picture.layout import FONT, LINE, NUMA_BAR, PAD, _cpus_text, _ink, build_picture
from podnuma.render.picture.ownership import Ownership


def _f(v: float) -> str:
    return f"{v:g}"


def escape(text: str) -> str:
    """XML character data: ``&``, ``<`` and ``>`` escaped. (``html`` rather
    than ``xml.sax.saxutils``, whose import pulls in ``urllib.request`` and
    with it http, email and ssl: a cost every command start would pay.)"""
    return html.escape(text, quote=False)


def quoteattr(text: str) -> str:
    """An XML attribute value, quotes included."""
    return '"' + html.escape(text, quote=True) + '"'


def render_svg(machine: Machine, own: Ownership) -> str:
    """A stand-alone SVG document. PU ``<rect>`` elements carry ``data-cpu``
    and ``data-owner``; legend entries (``<g class="legend-entry">`` and
    their swatch) carry ``data-owner``."""
    pic = build_picture(machine, own)
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(pic.width)}" height="{_f(pic.height)}" '
        f'viewBox="0 0 {_f(pic.width)} {_f(pic.height)}" '
        f'font-family="DejaVu Sans, Verdana, Helvetica, Arial, sans-serif" font-size="{FONT}">',
        f"<title>{escape(pic.title)}</title>",
        f'<rect x="0" y="0" width="{_f(pic.width)}" height="{_f(pic.height)}" fill="#ffffff"/>',
    ]
    for b in pic.boxes:
        geo = f'x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.w)}" height="{_f(b.h)}"'
        if b.kind == "pu":
            assert b.owner is not None and b.cpu is not None
            ink = _ink(b.fill)
            out.append(
                f'<rect class="pu" data-cpu="{b.cpu}" data-owner={quoteattr(b.owner)} {geo} '
                f'fill="{b.fill}" stroke="#000000" stroke-width="1">'
                f"<title>CPU {b.cpu}: {escape(b.owner)}</title></rect>"
            )
            cx = b.x + b.w / 2
            out.append(
                f'<text x="{_f(cx)}" y="{_f(b.y + 15)}" text-anchor="middle" fill="{ink}" '
                f'font-weight="bold">{escape(b.lines[0])}</text>'
            )
            out.append(
                f'<text x="{_f(cx)}" y="{_f(b.y + 30)}" text-anchor="middle" fill="{ink}" '
                f'font-size="{FONT - 1}">{escape(b.lines[1])}</text>'
            )
            continue
        out.append(
            f'<rect class="{b.kind}" {geo} fill="{b.fill}" stroke="#000000" stroke-width="1"/>'
        )
        if b.bar_h:
            out.append(
                f'<rect class="numa-bar" x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.w)}" '
                f'height="{_f(b.bar_h)}" fill="{NUMA_BAR}" stroke="#000000" stroke-width="1"/>'
            )
        for i, line in enumerate(b.lines):
            size = FONT + 2 if b.kind == "machine" and i == 0 else FONT
            weight = ' font-weight="bold"' if i == 0 else ""
            out.append(
                f'<text x="{_f(b.x + PAD)}" y="{_f(b.y + 13 + i * LINE)}" font-size="{size}"{weight}>'
                f"{escape(line)}</text>"
            )
    tx, ty = pic.legend_title
    out.append(
        f'<text x="{_f(tx)}" y="{_f(ty)}" font-weight="bold">'
        f"CPU owners, {escape(own.caption())}</text>"
    )
    sw, sh = pic.swatch_w, pic.swatch
    for item in pic.legend:
        out.append(f'<g class="legend-entry" data-owner={quoteattr(item.owner)}>')
        out.append(
            f'<rect class="swatch" data-owner={quoteattr(item.owner)} x="{_f(item.x)}" '
            f'y="{_f(item.y)}" width="{_f(sw)}" height="{_f(sh)}" fill="{item.color}" '
            f'stroke="#000000" stroke-width="1"/>'
        )
        out.append(
            f'<text x="{_f(item.x + sw / 2)}" y="{_f(item.y + 12)}" text-anchor="middle" '
            f'fill="{_ink(item.color)}" font-size="{FONT - 1}">{escape(item.key)}</text>'
        )
        out.append(
            f'<text x="{_f(item.x + sw + 8)}" y="{_f(item.y + 12)}">{escape(item.owner)}</text>'
        )
        out.append(
            f'<text x="{_f(pic.cpus_x)}" y="{_f(item.y + 12)}">{escape(_cpus_text(item.cpus))}</text>'
        )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
