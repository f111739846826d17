"""dashboard.figures.publication: the MapView contract, the view of today's map, and both renderers' real output."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import warnings
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.display import OUTLIER_COLOUR, topic_colour
from dashboard.export import publication_images
from dashboard.figures import publication

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.is_file(), reason="/usr/bin/chromium is not installed (apt-get install chromium)"
)


def clustered_view(n_per_cluster: int = 100, legend: list[tuple[str, str]] | None = None) -> publication.MapView:
    """Three labelled clusters, a few unlabelled points and two highlighted ones, seeded."""
    rng = np.random.default_rng(0)
    centres = {"diffusion models": (0.0, 0.0), "graph neural networks": (6.0, 1.0), "LLM agents <&>": (3.0, 6.0)}
    rows = []
    for index, (label, (cx, cy)) in enumerate(centres.items()):
        for x, y in rng.normal((cx, cy), 0.6, size=(n_per_cluster, 2)):
            rows.append({"x": x, "y": y, "colour": topic_colour(index), "label": label, "highlight": False})
    for x, y in rng.uniform(-2, 8, size=(10, 2)):
        rows.append({"x": x, "y": y, "colour": OUTLIER_COLOUR, "label": "", "highlight": False})
    points = pd.DataFrame(rows)
    points.loc[[0, n_per_cluster + 1], "highlight"] = True
    return publication.MapView(
        points=points,
        legend=legend or [],
        title="Test map: three clusters",
        caption="310 papers of test/corpus.csv · filters: no filters",
    )


def pixel_spread(png: bytes) -> float:
    from PIL import Image, ImageStat

    return ImageStat.Stat(Image.open(io.BytesIO(png)).convert("L")).stddev[0]


# --- the contract ---


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda points: points.drop(columns="highlight"), "lacks columns"),
        (lambda points: points.assign(colour="red"), "#RRGGBB"),
        (lambda points: points.assign(x=np.where(points.index == 3, np.nan, points["x"])), "non-finite"),
    ],
)
def test_check_view_names_the_problem(change, problem):
    view = clustered_view(5)
    with pytest.raises(ValueError, match=problem):
        publication.check_view(publication.MapView(points=change(view.points.copy())))


def test_check_view_rejects_a_bad_legend():
    with pytest.raises(ValueError, match="legend"):
        publication.check_view(publication.MapView(points=clustered_view(5).points, legend=[("Oral", "green")]))


def test_label_anchors_are_group_means_largest_first_without_unlabelled():
    points = pd.DataFrame(
        {
            "x": [0.0, 2.0, 10.0, 0.0],
            "y": [0.0, 2.0, 10.0, 5.0],
            "colour": ["#111111", "#111111", "#222222", "#999999"],
            "label": ["a", "a", "b", ""],
            "highlight": False,
        }
    )
    anchors = publication.label_anchors(points)
    assert anchors["label"].tolist() == ["a", "b"]
    assert anchors[["x", "y"]].to_numpy().tolist() == [[1.0, 1.0], [10.0, 10.0]]
    assert anchors["size"].tolist() == [2, 1] and anchors["colour"].tolist() == ["#111111", "#222222"]


def test_view_round_trips_through_a_job_folder(tmp_path):
    view = clustered_view(5, legend=[("Oral", "#1B7837")])
    publication.save_view(view, tmp_path)
    back = publication.load_view(tmp_path)
    pd.testing.assert_frame_equal(back.points, view.points[list(publication.POINT_COLUMNS)])
    assert (back.legend, back.title, back.caption) == (view.legend, view.title, view.caption)


# --- the view of today's map ---


@pytest.fixture
def documents() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d"],
            "x": [0.0, 1.0, 2.0, 3.0],
            "y": [0.0, 1.0, 0.0, 1.0],
            "topic": [0, 0, 7, -1],
            "decision": ["Oral", "Reject", None, "Poster"],
        }
    )


@pytest.fixture
def topics() -> pd.DataFrame:
    return pd.DataFrame({"topic": [-1, 0, 7], "label": ["Outliers", "diffusion", "graphs"], "size": [1, 2, 1]})


def test_map_view_by_topic_uses_the_map_palette_and_topic_labels(documents, topics):
    view = publication.map_view_from_documents(documents, topics, title="T", caption="C", highlight_ids=["c"])
    assert view.points["colour"].tolist() == [topic_colour(0), topic_colour(0), topic_colour(7), OUTLIER_COLOUR]
    assert view.points["label"].tolist() == ["diffusion", "diffusion", "graphs", ""]
    assert view.points["highlight"].tolist() == [False, False, True, False]
    assert view.legend == []
    publication.check_view(view)


def test_map_view_by_decision_has_a_legend_of_the_decisions_present(documents, topics):
    colours = {
        "Oral": "#1b7837",
        "Spotlight": "#5aae61",
        "Poster": "#a6dba0",
        "Reject": "#d6604d",
        "Unknown": "#dddddd",
    }
    view = publication.map_view_from_documents(documents, topics, colour_by="Decision", decision_colours=colours)
    assert view.points["colour"].tolist() == ["#1B7837", "#D6604D", "#DDDDDD", "#A6DBA0"]
    assert [name for name, _ in view.legend] == ["Oral", "Poster", "Reject", "Unknown"]
    assert view.points["label"].tolist() == ["diffusion", "diffusion", "graphs", ""]


def test_caption_and_filter_note():
    note = publication.filter_note(["diffusion"], ' "graph" ', ["Oral", "Poster"], 12)
    assert note == 'topic: diffusion; search ""graph""; decisions: Oral, Poster; 12 papers selected on the map'
    assert publication.filter_note() == "no filters"
    caption = publication.caption_text(
        {"created_at": "2026-11-30T10:00:00"}, "iclr2025/papers.parquet", 1, "no filters", today=date(2026, 12, 1)
    )
    assert caption == (
        "1 paper of iclr2025/papers.parquet (built 2026-11-30) · filters: no filters · drawn 2026-12-01 by Topic Atlas"
    )


# --- the renderers ---


def test_plotly_figure_shows_points_labels_title_caption_and_legend():
    view = clustered_view(20, legend=[("Oral", "#1B7837"), ("Reject", "#D6604D")])
    figure = publication.plotly_figure(view)
    assert len(figure.data[0].x) == len(view.points)
    assert len(figure.data[1].x) == 2  # the highlighted points, on top
    assert [trace.name for trace in figure.data[2:]] == ["Oral", "Reject"]
    texts = [annotation.text.replace("<br>", " ") for annotation in figure.layout.annotations]
    assert any("LLM agents &lt;&amp;&gt;" in text for text in texts)  # corpus text is escaped for plotly
    assert sum("310 papers" in text for text in texts) == 1
    assert figure.layout.title.text == "Test map: three clusters"
    # The legend sits right of the plot area, outside it (above it, it printed over the title), in a margin.
    assert figure.layout.legend.x > 1 and figure.layout.legend.xanchor == "left" and figure.layout.margin.r >= 200
    assert "Noto Sans CJK" in figure.layout.font.family  # CJK labels have a font (fonts-noto-cjk)


@pytest.fixture(scope="module")
def datamapplot_images() -> dict[str, bytes]:
    """The clustered view drawn once by DataMapPlot in all three formats (DataMapPlot's import costs 5-15 s)."""
    return publication_images.render_all(clustered_view(), publication.FORMATS, "datamapplot")


def test_datamapplot_png_is_300_dpi_with_content(datamapplot_images):
    from PIL import Image

    png = datamapplot_images["png"]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(png))
    assert image.width >= 3000 and round(image.info["dpi"][0]) == publication.POINT_DPI
    assert pixel_spread(png) > 10


def test_datamapplot_svg_keeps_text_as_text_and_rasterises_the_points(datamapplot_images):
    svg = datamapplot_images["svg"].decode("utf-8")
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    for text in ("Test map: three clusters", "310 papers of test/corpus.csv", "diffusion", "LLM agents &lt;&amp;&gt;"):
        assert text in svg, text
    assert "<image" in svg  # the 310 points are one raster image, not 310 vector markers
    assert len(re.findall(r"<path", svg)) < 200


def test_datamapplot_pdf_renders_to_a_page_with_content(datamapplot_images, tmp_path):
    pdf = datamapplot_images["pdf"]
    assert pdf.startswith(b"%PDF")
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    (tmp_path / "figure.pdf").write_bytes(pdf)
    subprocess.run(
        ["pdftoppm", "-png", "-r", "50", "-singlefile", str(tmp_path / "figure.pdf"), str(tmp_path / "page")],
        check=True,
    )
    assert pixel_spread((tmp_path / "page.png").read_bytes()) > 10


@pytest.mark.parametrize("labels", [[""], ["", ""], ["one topic"], ["one topic", "one topic", ""], ["a", "b", "c"]])
def test_datamapplot_draws_tiny_unlabelled_and_one_label_maps(labels):
    """Maps of a filtered view: DataMapPlot 0.7.3 alone fails on one label group (NaN ring placement, 0-d font
    sizes) and on no label at all; all of these must draw."""
    n_points = len(labels)
    points = pd.DataFrame(
        {
            "x": np.arange(n_points, dtype=float) ** 2,
            "y": np.zeros(n_points),
            "colour": OUTLIER_COLOUR,
            "label": labels,
            "highlight": False,
        }
    )
    png = publication_images.render_all(
        publication.MapView(points=points, title="A tiny map", caption=f"{n_points} papers"), ["png"]
    )["png"]
    assert pixel_spread(png) > 3  # title and caption at least, whatever the points


@pytest.mark.skipif(
    not any(path.is_file() for path in publication.CJK_FONT_FILES), reason="fonts-noto-cjk is not installed"
)
def test_datamapplot_draws_cjk_labels_with_their_glyphs():
    """Case 06: Chinese and Japanese labels drew as missing-glyph boxes with DejaVu Sans alone."""
    import matplotlib.pyplot as plt

    view = clustered_view(40)
    points = view.points.replace({"label": {"diffusion models": "图神经网络", "graph neural networks": "拡散モデル"}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure = publication.datamapplot_figure(publication.MapView(points=points, title="地図 · map", caption="x"))
        figure.savefig(io.BytesIO(), format="png", dpi=50)
        plt.close(figure)
    missing = [str(warning.message) for warning in caught if "missing from font" in str(warning.message)]
    assert publication.matplotlib_font_families()[-1] == publication.CJK_FAMILY
    assert not missing, missing[:3]


def test_unknown_renderer_and_format():
    with pytest.raises(ValueError, match="renderer"):
        publication_images.render_all(clustered_view(5), ["png"], renderer="matplotlib")
    with pytest.raises(ValueError, match="format"):
        publication_images.render_all(clustered_view(5), ["gif"])


@needs_chromium
def test_plotly_renderer_draws_all_three_formats():
    images = publication_images.render_all(
        clustered_view(20), publication.FORMATS, "plotly", browser_path=str(CHROMIUM)
    )
    assert images["png"].startswith(b"\x89PNG") and pixel_spread(images["png"]) > 3
    assert b"</svg>" in images["svg"] and images["pdf"].startswith(b"%PDF")
