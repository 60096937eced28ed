"""Figures: one function per published figure or table, one shared style."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from netnoise.atomic import atomic_path

STYLE = Path(__file__).resolve().parent / "netnoise.mplstyle"


def use_style(style: str | os.PathLike[str] = STYLE) -> None:
    plt.style.use(str(style))


def save(fig: matplotlib.figure.Figure, outputs: Iterable[str | os.PathLike[str]]) -> None:
    """Save ``fig`` to each output (format from the suffix), atomically, then close it."""
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
