"""Figures: one function per published figure or table, one shared style.

Every figure is saved through :func:`save`, which first moves each legend off
the data it covers (:func:`place_legends`): to a free corner of its axes, else
beside the axes. A legend that still covers data stops the save with
:class:`FigureError`, so no figure reaches a report with its data hidden.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import Collection, LineCollection, PathCollection
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.path import Path as MplPath
from matplotlib.transforms import Bbox

from netnoise.atomic import atomic_path
from netnoise.jobs import logged

STYLE = Path(__file__).resolve().parent / "netnoise.mplstyle"
#: The gid of an artist that marks a region rather than draws data (a shaded
#: quadrant, say): a legend may lie over it.
GUIDE = "guide"
#: Where a legend that covers data is tried inside its axes, in turn, before
#: it goes beside them (right, then below).
INSIDE = (
    "upper right",
    "upper left",
    "lower right",
    "lower left",
    "center right",
    "center left",
    "upper center",
    "lower center",
)
BESIDE = (("upper left", (1.02, 1.0)), ("upper center", (0.5, -0.16)))


class FigureError(RuntimeError):
    """A figure that would hide its own data."""


def _in_data(artist: Artist, ax: Axes) -> bool:
    """Whether ``artist`` is drawn in ``ax``'s data coordinates (a line at a fixed
    y across the axes, ``axhline``, is drawn in axes coordinates: a guide)."""
    if artist.get_gid() == GUIDE or not artist.get_visible():
        return False
    transform = (
        artist.get_offset_transform()
        if isinstance(artist, PathCollection)
        else artist.get_transform()
    )
    return transform.contains_branch(ax.transData)


def data_artists(ax: Axes) -> list[Artist]:
    """What ``ax`` draws of its data: lines, patches, collections and images in
    data coordinates, legends' own handles and guides left out."""
    found = [*ax.lines, *ax.patches, *ax.collections, *ax.images]
    return [a for a in found if _in_data(a, ax)]


def _points(xy: np.ndarray) -> np.ndarray:
    xy = np.asarray(xy, float).reshape(-1, 2)
    return xy[np.isfinite(xy).all(axis=1)]


def covers(box: Bbox, artist: Artist, renderer: Any) -> bool:
    """Whether the display-space ``box`` lies over any part of ``artist``."""
    if isinstance(artist, Line2D):
        points = _points(artist.get_transform().transform(artist.get_xydata()))
        if artist.get_marker() not in (None, "None", "", " ", "none"):
            margin = artist.get_markersize() * renderer.points_to_pixels(1) / 2
            if box.expanded(1, 1).padded(margin).count_contains(points):
                return True
        if box.count_contains(points):
            return True
        drawn = artist.get_linestyle() not in ("None", "", " ", "none") and len(points) > 1
        return drawn and bool(MplPath(points).intersects_bbox(box, filled=False))
    if isinstance(artist, Patch):
        path = artist.get_transform().transform_path(artist.get_path())
        return bool(path.intersects_bbox(box, filled=artist.get_fill()))
    if isinstance(artist, PathCollection):
        points = _points(artist.get_offset_transform().transform(artist.get_offsets()))
        sizes = artist.get_sizes()
        margin = np.sqrt(sizes.max() if len(sizes) else 36.0) * renderer.points_to_pixels(1) / 2
        return bool(box.padded(margin).count_contains(points))
    if isinstance(artist, Collection):
        filled = not isinstance(artist, LineCollection) and len(artist.get_facecolor()) > 0
        transform = artist.get_transform()
        return any(
            transform.transform_path(path).intersects_bbox(box, filled=filled)
            for path in artist.get_paths()
        )
    if isinstance(artist, AxesImage):
        return artist.get_window_extent(renderer).overlaps(box)
    return False


def _legends(fig: matplotlib.figure.Figure) -> Iterator[tuple[Legend, Axes | None]]:
    for ax in fig.axes:
        if ax.get_legend() is not None:
            yield ax.get_legend(), ax
    for legend in fig.legends:
        yield legend, None


def covered_by(legend: Legend, fig: matplotlib.figure.Figure, renderer: Any) -> list[str]:
    """The data artists of any axes of ``fig`` that ``legend`` lies over, by label."""
    box = legend.get_window_extent(renderer)
    return [
        f"{ax.get_title() or 'axes'}: {artist.get_label() or type(artist).__name__}"
        for ax in fig.axes
        for artist in data_artists(ax)
        if covers(box, artist, renderer)
    ]


def place_legends(fig: matplotlib.figure.Figure) -> None:
    """Move every axes legend that covers data to the first free place of
    :data:`INSIDE`, else beside its axes (:data:`BESIDE`)."""
    # Axes limits and "best" legend places are settled by a draw.
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    for legend, ax in _legends(fig):
        if ax is None or not covered_by(legend, fig, renderer):
            continue
        for loc in INSIDE:
            legend.set_bbox_to_anchor(None)
            legend.set_loc(loc)
            if not covered_by(legend, fig, renderer):
                break
        else:
            for loc, anchor in BESIDE:
                legend.set_loc(loc)
                legend.set_bbox_to_anchor(anchor, transform=ax.transAxes)
                if not covered_by(legend, fig, renderer):
                    break


def legend_problems(fig: matplotlib.figure.Figure) -> list[str]:
    """Every data artist a legend of ``fig`` covers (none, for a figure to save)."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    return [hidden for legend, _ in _legends(fig) for hidden in covered_by(legend, fig, renderer)]


def use_style(style: str | os.PathLike[str] = STYLE) -> None:
    plt.style.use(str(style))


def save(fig: matplotlib.figure.Figure, outputs: Iterable[str | os.PathLike[str]]) -> None:
    """Save ``fig`` to each output (format from the suffix), atomically, then close
    it; its legends first moved off its data (FigureError where one cannot be)."""
    outputs = list(outputs)
    place_legends(fig)
    hidden = legend_problems(fig)
    if hidden:
        plt.close(fig)
        names = ", ".join(Path(o).name for o in outputs)
        raise FigureError(f"{names}: a legend covers data ({'; '.join(hidden[:4])})")
    for output in outputs:
        suffix = Path(output).suffix.lstrip(".")
        with atomic_path(output) as tmp:
            fig.savefig(tmp, format=suffix)
    plt.close(fig)


def save_named(figures: dict[str, matplotlib.figure.Figure], outputs: Iterable[str]) -> None:
    """Save each named figure to the outputs whose file name is that name (any suffix)."""
    outputs = [str(o) for o in outputs]
    for name, fig in figures.items():
        save(fig, [path for path in outputs if Path(path).stem == name])


class Tables:
    """A plot job's CSV inputs, read by their input name (``read_csv`` options
    passed through)."""

    def __init__(self, inputs: Any):
        self.inputs = inputs

    def __call__(self, name: str, **read_csv: Any) -> pd.DataFrame:
        return pd.read_csv(getattr(self.inputs, name), **read_csv)


def plot_job(job: Any, draw: Callable[[Tables], dict[str, matplotlib.figure.Figure]]) -> None:
    """A plot rule's script: into the job's log, in the figure style (input
    ``style``), every figure ``draw`` makes from the job's tables, saved to the
    outputs (``svg`` and ``png``) named after it."""
    with logged(job.log[0]):
        use_style(job.input.style)
        save_named(draw(Tables(job.input)), [*job.output.svg, *job.output.png])
