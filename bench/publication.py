"""Publication figures of a cache's map as the page draws them: time and size per view and format.

    .venv/bin/python -m bench.publication --cache ATLAS --out /tmp/publication [--views themes,topics,drilled,filtered]

The views: the whole map coloured and labelled by theme (the page's first view), the whole map by topic, the
largest theme drilled into (coloured by topic, the rest of the map grey) and the largest topic filtered (the rest
grey). matplotlib draws PNG, SVG and PDF of a view in one job, the way the Downloads view does (a child of the
render server, with the export timeout). Prints one line per view with the job's wall time and the files' sizes,
writes the files to --out and a PNG of each PDF (pdftoppm, when installed) so the PDF can be looked at.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd

from dashboard.export import download_bytes, render_process
from dashboard.figures import publication, topic_map
from dashboard.tables import paper_table
from pipeline.cache import TopicCache, read_cache

VIEWS = ("themes", "topics", "drilled", "filtered")


def page_views(atlas: TopicCache) -> dict[str, publication.MapView]:
    """{view name: MapView} of VIEWS, built as the page builds them (publication.view_of_map)."""
    corpus = paper_table.corpus_name(atlas.manifest)
    topics = topic_map.themed_topics(atlas.topics, atlas.hierarchy)
    documents = topic_map.with_themes(atlas.documents, topics)
    real = topics[topics["topic"] >= 0]
    theme = int(real.groupby("theme")["size"].sum().idxmax())
    theme_name = str(real.loc[real["theme"] == theme, "theme_label"].iloc[0])
    topic = int(real.sort_values("size", ascending=False)["topic"].iloc[0])
    topic_name = str(real.loc[real["topic"] == topic, "label"].iloc[0])
    cases = {
        "themes": (topic_map.MapState("theme", "themes"), documents, "", "no filters"),
        "topics": (topic_map.MapState("topic", "topics"), documents, "", "no filters"),
        "drilled": (
            topic_map.MapState("topic", "themes", theme),
            documents[documents["theme"] == theme],
            theme_name,
            f"theme: {theme_name}",
        ),
        "filtered": (
            topic_map.MapState("theme", "topics"),
            documents[documents["topic"] == topic],
            "",
            f"topic: {topic_name}",
        ),
    }
    return {
        name: publication.view_of_map(
            documents,
            matching,
            topics,
            state,
            title=publication.map_title(corpus, state, drilled),
            caption=publication.caption_text(atlas.manifest, corpus, len(matching), note),
        )
        for name, (state, matching, drilled, note) in cases.items()
    }


def pdf_preview(pdf: Path) -> None:
    """PAGE-pdf.png beside ``pdf``: its first page at 80 dpi."""
    if shutil.which("pdftoppm"):
        stem = pdf.with_name(pdf.stem + "-pdf")
        subprocess.run(["pdftoppm", "-png", "-r", "80", "-singlefile", str(pdf), str(stem)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--views", default=",".join(VIEWS))
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    atlas = read_cache(args.cache)
    views = page_views(atlas)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    ready = render_process.wait_until_ready(args.timeout)
    elapsed = time.perf_counter() - started
    print(f"render server ready: {ready} after {elapsed:.1f} s (imports plotly, kaleido, matplotlib)")
    rows = []
    for name in args.views.split(","):
        view = views[name]
        started = time.perf_counter()
        images = download_bytes.publication_images(view, publication.FORMATS, timeout_s=args.timeout)
        elapsed = time.perf_counter() - started
        for image_format, data in images.items():
            (args.out / f"{name}.{image_format}").write_bytes(data)
        pdf_preview(args.out / f"{name}.pdf")
        labelled = view.points[view.points["label"] != ""]["label"].nunique()
        rows.append(
            {
                "view": name,
                "points": len(view.points),
                "label groups": labelled,
                "legend": len(view.legend),
                "PNG+SVG+PDF s": round(elapsed, 1),
                **{f"{fmt} MB": round(len(images[fmt]) / 1e6, 2) for fmt in publication.FORMATS},
            }
        )
        print(f"{name:9s} {elapsed:5.1f} s  -> {args.out}/{name}.*", flush=True)
    print()
    table = pd.DataFrame(rows)
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for row in table.itertuples(index=False):
        print("| " + " | ".join(f"{value:,}" if isinstance(value, int) else str(value) for value in row) + " |")


if __name__ == "__main__":
    main()
