"""What an experiment produced, :class:`ExperimentResult`, and how it is written to a folder."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from cocoviz.core.atomic import atomic_folder
from cocoviz.experiments.figures import write_pngs

__all__ = ["ExperimentResult"]


@dataclass
class ExperimentResult:
    """What an experiment produced: CSV frames, figures, a markdown report and its parameters."""

    name: str
    frames: dict[str, pd.DataFrame]
    figures: dict[str, object]
    markdown: str
    config: dict
    seconds: float = 0.0

    def write(self, out: str | os.PathLike, *, png: bool | None = None) -> dict[str, list[Path]]:
        """Write ``<out>/<name>/``: every frame as CSV, ``table.md``, ``figures.html``,
        ``config.json`` and (when kaleido works, or ``png=True``) one PNG per figure.

        ``png=None`` tries PNG export and skips it quietly if it is not available.
        Returns the paths written, by kind.
        """
        # Written into a folder beside the target and swapped in whole: a kill or a full disk leaves the
        # previous results complete, never new trials beside an old summary and config.
        final = Path(out) / self.name
        with atomic_folder(final) as folder:
            written = self._write_files(folder, png)
        return {kind: [final / p.relative_to(folder) for p in paths] for kind, paths in written.items()}

    def _write_files(self, folder: Path, png: bool | None) -> dict[str, list[Path]]:
        written: dict[str, list[Path]] = {"csv": [], "md": [], "html": [], "png": [], "json": []}
        for key, frame in self.frames.items():
            path = folder / f"{key}.csv"
            frame.to_csv(path, index=False)
            written["csv"].append(path)
        path = folder / "table.md"
        path.write_text(self.markdown + "\n", encoding="utf-8")
        written["md"].append(path)
        html = [f"<h1>{self.config.get('title', self.name)}</h1>"]
        for k, fig in enumerate(self.figures.values()):
            # plotly.js embedded once, so the page works offline.
            html.append(fig.to_html(full_html=False, include_plotlyjs=k == 0))
        path = folder / "figures.html"
        path.write_text(
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
            + self.name
            + "</title></head><body>"
            + "\n".join(html)
            + "</body></html>",
            encoding="utf-8",
        )
        written["html"].append(path)
        if png is not False and self.figures:
            written["png"] = write_pngs(self.figures, folder, required=bool(png))
        config = dict(
            self.config,
            seconds=round(self.seconds, 1),
            written=sorted(str(p.relative_to(folder)) for paths in written.values() for p in paths),
        )
        path = folder / "config.json"
        path.write_text(json.dumps(config, indent=2, default=str) + "\n", encoding="utf-8")
        written["json"].append(path)
        return written
