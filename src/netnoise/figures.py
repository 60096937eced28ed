"""Figures: one function per published figure or table, one shared style."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from netnoise.atomic import atomic_path
from netnoise.jobs import logged

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
