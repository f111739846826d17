"""Publication figures of a cache's whole map, drawn by both renderers side by side: time and size per format.

    .venv/bin/python bench/publication.py --cache /tmp/atlas-full-static --out /tmp/publication

Each renderer draws PNG, SVG and PDF in one job, the way the Downloads view does (a child of the render server,
with the export timeout). Prints one line per renderer and format, writes the files to --out, and a PNG of page 1
of each PDF (pdftoppm, when installed) so the PDF can be looked at too.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from dashboard.export import download_bytes, render_process  # noqa: E402
from dashboard.figures import publication  # noqa: E402
from dashboard.tables import paper_table  # noqa: E402
from pipeline.cache import read_cache  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--renderers", default=",".join(publication.RENDERERS))
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    atlas = read_cache(args.cache)
    corpus = paper_table.corpus_name(atlas.manifest)
    caption = publication.caption_text(atlas.manifest, corpus, len(atlas.documents), "no filters")
    view = publication.map_view_from_documents(
        atlas.documents, atlas.topics, title=f"Topic map of {corpus}", caption=caption
    )
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    ready = render_process.wait_until_ready(args.timeout)
    print(
        f"render server ready: {ready} after {time.perf_counter() - started:.1f} "
        "s (imports plotly, kaleido, DataMapPlot once)"
    )
    print(f"{len(view.points):,} points, {publication.label_anchors(view.points).shape[0]} labels")
    for renderer in args.renderers.split(","):
        started = time.perf_counter()
        images = download_bytes.publication_images(view, publication.FORMATS, renderer, timeout_s=args.timeout)
        elapsed = time.perf_counter() - started
        for image_format, data in images.items():
            path = args.out / f"{renderer}.{image_format}"
            path.write_bytes(data)
            print(f"{renderer:12s} {image_format}  {len(data) / 1e6:6.2f} MB  -> {path}")
        print(f"{renderer:12s} all three formats in {elapsed:.1f} s (one job)")
        if shutil.which("pdftoppm"):
            subprocess.run(
                [
                    "pdftoppm",
                    "-png",
                    "-r",
                    "80",
                    "-singlefile",
                    str(args.out / f"{renderer}.pdf"),
                    str(args.out / f"{renderer}-pdf"),
                ],
                check=True,
            )


if __name__ == "__main__":
    main()
