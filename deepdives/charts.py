"""SVG charts of a reference program's main series, drawn with matplotlib."""

from __future__ import annotations

import io

from deepdives.registry import Chart, resolve


def _pyplot():
    """matplotlib's pyplot on the Agg backend, imported on the first chart drawn: it takes
    most of a second, which every process importing the app would pay otherwise."""
    import matplotlib

    matplotlib.use("Agg")  # no display; must precede pyplot
    import matplotlib.pyplot as plt

    return plt


def render_chart_svg(chart: Chart, measurements: dict) -> str | None:
    """The chart as an SVG document, or None when the measurements lack its series."""
    try:
        ys = [
            (
                s.label,
                [float("nan") if v is None else float(v) for v in resolve(measurements, s.path)],
            )
            for s in chart.series
        ]
        xs = (
            [float(v) for v in resolve(measurements, chart.x_path)]
            if chart.x_path
            else list(range(len(ys[0][1])))
        )
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 3.6), dpi=100)
    try:
        for label, values in ys:
            ax.plot(
                xs[: len(values)],
                values,
                marker="o" if len(values) <= 12 else None,
                markersize=3.5,
                linewidth=1.6,
                label=label,
            )
        ax.set_title(chart.title, fontsize=11)
        ax.set_xlabel(chart.x_label)
        ax.set_ylabel(chart.y_label)
        if chart.log_x:
            ax.set_xscale("log")
        if chart.log_y:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(frameon=False, fontsize=9)
        fig.tight_layout()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
        return buffer.getvalue()
    finally:
        plt.close(fig)
