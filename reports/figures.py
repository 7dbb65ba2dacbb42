"""Charts as image files for slides: PNG and SVG of each chart spec, rendered by vl-convert (no browser)."""

from __future__ import annotations

from pathlib import Path

from tierscope.atomic import write_bytes_atomic
from tierscope.reports.charts import Spec, fixed_width

#: PNG pixels per SVG pixel: sharp on slides and high-density screens.
PNG_SCALE = 2.0


def write_figures(specs: dict[str, Spec], directory: Path) -> list[Path]:
    """Write ``<name>.svg`` and ``<name>.png`` for each spec into ``directory`` (created if missing).

    Returns the paths written, SVG then PNG per chart, in ``specs``' order. Text is drawn with
    the system's fonts: Japanese labels need a Japanese font installed (e.g. Debian's
    ``fonts-noto-cjk``). Raises ValueError if vl-convert cannot render a spec.
    """
    import vl_convert

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, page_spec in specs.items():
        spec = fixed_width(page_spec)  # an image has no page for the chart to follow
        svg = directory / f"{name}.svg"
        write_bytes_atomic(svg, vl_convert.vegalite_to_svg(spec).encode("utf-8"))
        png = directory / f"{name}.png"
        write_bytes_atomic(png, vl_convert.vegalite_to_png(spec, scale=PNG_SCALE))
        written += [svg, png]
    return written
