"""dashboard.figures.publication: the MapView contract, the view of today's map, and the renderer's real output."""

from __future__ import annotations

import io
import re
import subprocess
import warnings
from datetime import date

import numpy as np
import pandas as pd
import pytest

from dashboard.display import OUTLIER_COLOUR, topic_colour
from dashboard.export import publication_images
from dashboard.figures import publication, publication_layout
from tests.conftest import needs_program


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


def test_label_anchors_are_each_groups_densest_spot_largest_first_without_unlabelled():
    rng = np.random.default_rng(1)
    lobe, far = rng.normal(0.0, 0.1, size=(40, 2)), rng.normal(10.0, 0.1, size=(10, 2))
    points = pd.DataFrame(
        {
            "x": np.concatenate([lobe[:, 0], far[:, 0], [10.0, 5.0]]),
            "y": np.concatenate([lobe[:, 1], far[:, 1], [10.0, 5.0]]),
            "colour": ["#111111"] * 50 + ["#222222", "#999999"],
            "label": ["a"] * 50 + ["b", ""],
            "highlight": False,
        }
    )
    anchors = publication_layout.label_anchors(points)
    assert anchors["label"].tolist() == ["a", "b"]
    # on the larger lobe of "a", not at its mean (about 1.7, 1.7: empty space between the lobes)
    assert np.abs(anchors.loc[0, ["x", "y"]].to_numpy(dtype=float)).max() < 0.5
    assert anchors["size"].tolist() == [50, 1] and anchors["colour"].tolist() == ["#111111", "#222222"]


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


# --- the layout both renderers draw ---


def boxes(layout, measure) -> np.ndarray:
    """(n, 4) x0, x1, y0, y1 in points of each placed label (its inner edge at text_x, middle at text_y)."""
    scale = 1.0 / layout_scale(layout)
    rows = []
    for row in layout.labels.itertuples(index=False):
        width, height = measure(row.lines, row.font_pt)
        x, y = row.text_x / scale, row.text_y / scale
        x0, x1 = (x - width, x) if row.side < 0 else (x, x + width)
        rows.append((x0, x1, y - height / 2, y + height / 2))
    return np.asarray(rows, dtype=float).reshape(-1, 4)


def layout_scale(layout) -> float:
    return PLOT_PT[0] / (layout.x_range[1] - layout.x_range[0])


# the plot area of the figure the page draws: title, two caption lines, no legend
PLOT_PT = tuple(72 * side for side in publication.frame_geometry(publication.FIGURE_SIZE_IN, True, 2, 0.0).plot[2:])


def many_groups_view(n_groups: int, per_group: int = 30) -> publication.MapView:
    """``n_groups`` clusters on a grid, named like real topics (some long enough for two lines)."""
    rng = np.random.default_rng(2)
    names = [f"Topic {index}" + (" of graph neural networks" if index % 3 == 0 else "") for index in range(n_groups)]
    rows = []
    side = int(np.ceil(np.sqrt(n_groups)))
    for index, name in enumerate(names):
        centre = (index % side * 3.0, index // side * 3.0)
        for x, y in rng.normal(centre, 0.4, size=(per_group + index, 2)):
            rows.append({"x": x, "y": y, "colour": topic_colour(index), "label": name, "highlight": False})
    return publication.MapView(points=pd.DataFrame(rows), title="T", caption="C")


@pytest.mark.parametrize("n_groups", [1, 3, 18, 55])
def test_labels_never_overlap_each_other_or_the_points_and_stay_in_the_plot(n_groups):
    view = many_groups_view(n_groups)
    measure = publication.font_measure(publication.matplotlib_font_families())
    layout = publication.layout_labels(view.points, *PLOT_PT, measure)
    assert len(layout.labels) == n_groups == layout.n_groups  # they all fit at this size
    placed = boxes(layout, measure)
    scale = layout_scale(layout)
    x, y = view.points["x"].to_numpy() * scale, view.points["y"].to_numpy() * scale
    for index, (x0, x1, y0, y1) in enumerate(placed):
        assert not ((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)).any(), "a label over points"
        for other in placed[index + 1 :]:
            assert x1 <= other[0] or other[1] <= x0 or y1 <= other[2] or other[3] <= y0, "labels overlap"
    low_x, low_y = layout.x_range[0] * scale, layout.y_range[0] * scale
    assert (placed[:, 0] >= low_x - 0.5).all() and (placed[:, 1] <= low_x + PLOT_PT[0] + 0.5).all()
    assert (placed[:, 2] >= low_y - 0.5).all() and (placed[:, 3] <= low_y + PLOT_PT[1] + 0.5).all()
    # and the leader lines point at the clusters' points, not between them
    for row in layout.labels.itertuples(index=False):
        members = view.points[view.points["label"] == row.label]
        nearest = np.hypot(members["x"] - row.anchor_x, members["y"] - row.anchor_y).min()
        assert nearest < 0.2


def test_labels_that_do_not_fit_are_left_out_smallest_first_and_the_caption_says_so():
    view = many_groups_view(120, per_group=5)
    measure = publication.font_measure(publication.matplotlib_font_families())
    layout = publication.layout_labels(view.points, 400.0, 300.0, measure)
    assert 0 < len(layout.labels) < 120 and layout.n_unlabelled == 120 - len(layout.labels)
    sizes = view.points.groupby("label").size()
    assert sizes[layout.labels["label"]].min() >= sizes.drop(layout.labels["label"]).max()
    note = f"the {layout.n_unlabelled} smallest of 120 groups are not labelled"
    assert note in publication.caption_lines(view, layout)


def test_few_leader_lines_cross():
    from dashboard.figures.label_layout import crossing_pairs

    view = many_groups_view(55)
    layout = publication.layout_labels(view.points, *PLOT_PT, publication.font_measure(["DejaVu Sans"]))
    starts = layout.labels[["text_x", "text_y"]].to_numpy(dtype=float)
    ends = layout.labels[["anchor_x", "anchor_y"]].to_numpy(dtype=float)
    assert len(crossing_pairs(starts, ends)) <= 5


# --- the renderer ---


def test_matplotlib_legend_and_labels_lie_outside_each_other_and_the_plot_area():
    """The legend sits right of the plot area; no label's text box meets another label, the legend or the title."""
    view = clustered_view(40, legend=[("Oral", "#1B7837"), ("Poster", "#A6DBA0"), ("Reject", "#D6604D")])
    figure = publication.matplotlib_figure(view)
    renderer = figure.canvas.get_renderer()
    figure.draw(renderer)
    axes = figure.axes[0]
    legend = figure.legends[0].get_window_extent(renderer)
    assert legend.x0 >= axes.get_window_extent(renderer).x1
    labels = [text.get_window_extent(renderer) for text in axes.texts]
    assert len(labels) == 3
    title = figure.texts[0].get_window_extent(renderer)
    for index, box in enumerate(labels):
        assert not box.overlaps(legend) and not box.overlaps(title)
        assert all(not box.overlaps(other) for other in labels[index + 1 :])


@pytest.fixture(scope="module")
def matplotlib_images() -> dict[str, bytes]:
    """The clustered view drawn once by matplotlib in all three formats."""
    return publication_images.render_all(clustered_view(), publication.FORMATS)


def test_matplotlib_png_is_300_dpi_with_content(matplotlib_images):
    from PIL import Image

    png = matplotlib_images["png"]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(png))
    assert image.width >= 3000 and round(image.info["dpi"][0]) == publication.POINT_DPI
    assert pixel_spread(png) > 10


def test_matplotlib_svg_keeps_text_as_text_and_rasterises_the_points(matplotlib_images):
    svg = matplotlib_images["svg"].decode("utf-8")
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    for text in ("Test map: three clusters", "310 papers of test/corpus.csv", "diffusion", "LLM agents &lt;&amp;&gt;"):
        assert text in svg, text
    assert "<image" in svg  # the 310 points are one raster image, not 310 vector markers
    assert len(re.findall(r"<path", svg)) < 200


def test_matplotlib_pdf_renders_to_a_page_with_content(matplotlib_images, tmp_path):
    pdf = matplotlib_images["pdf"]
    assert pdf.startswith(b"%PDF")
    pdftoppm = needs_program("pdftoppm", "poppler-utils")
    (tmp_path / "figure.pdf").write_bytes(pdf)
    subprocess.run(
        [pdftoppm, "-png", "-r", "50", "-singlefile", str(tmp_path / "figure.pdf"), str(tmp_path / "page")],
        check=True,
    )
    assert pixel_spread((tmp_path / "page.png").read_bytes()) > 10


@pytest.mark.parametrize("labels", [[""], ["", ""], ["one topic"], ["one topic", "one topic", ""], ["a", "b", "c"]])
def test_matplotlib_draws_tiny_unlabelled_and_one_label_maps(labels):
    """Maps of a filtered view: one point, points on a line, one label group, no label (DataMapPlot 0.7.3 failed on
    one label group and on none); all of these must draw."""
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


def test_matplotlib_draws_cjk_labels_with_their_glyphs():
    """Case 06: Chinese and Japanese labels drew as missing-glyph boxes with DejaVu Sans alone."""
    if not any(path.is_file() for path in publication.CJK_FONT_FILES):
        pytest.fail(
            "fonts-noto-cjk is not installed: apt-get install fonts-noto-cjk (.ci/run installs it)", pytrace=False
        )
    import matplotlib.pyplot as plt

    view = clustered_view(40)
    points = view.points.replace({"label": {"diffusion models": "图神经网络", "graph neural networks": "拡散モデル"}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure = publication.matplotlib_figure(publication.MapView(points=points, title="地図 · map", caption="x"))
        figure.savefig(io.BytesIO(), format="png", dpi=50)
        plt.close(figure)
    missing = [str(warning.message) for warning in caught if "missing from font" in str(warning.message)]
    assert publication.matplotlib_font_families()[-1] == publication.CJK_FAMILY
    assert not missing, missing[:3]


def test_unknown_format():
    with pytest.raises(ValueError, match="format"):
        publication_images.render_all(clustered_view(5), ["gif"])
