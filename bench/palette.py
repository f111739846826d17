"""How distinct the theme palette's colours are, for normal and colour-deficient vision, and the search that chose it.

    .venv/bin/python -m bench.palette [--search]

Prints, for the palette in use (``dashboard.figures.topic_map.THEME_PALETTE``) and the one it replaced, the smallest
colour difference between two of its colours (CAM02-UCS distance, the CIECAM02-based uniform colour space of Luo,
Cui and Li 2006, through colorspacious) as seen with normal vision and with full deuteranopia, protanopia and
tritanopia (Machado, Oliveira and Fernandes 2009's simulation at severity 100), the pair that is closest, and the
smallest difference to the greys of outliers and context; for its first 10 and all 20 colours (themes are coloured
largest first, so the first ones are the ones people see most).

``--search`` runs the search that made the palette: Okabe and Ito's six colours for colour-blind readers (2008,
"Color Universal Design"; their yellow left out, too light on white), then, from an 18-level sRGB grid with CAM02-UCS
lightness J' 35-80, colourfulness M' 15-80 and at least 18 from both greys, the candidate farthest from every colour
chosen in the worst of the four visions, until there are 20; then the colour in the closest pair is replaced by the
candidate farthest from the others, while that helps. Deterministic; prints the palette it finds.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

GREYS = ("#9E9E9E", "#D5D5D5")  # outliers, and the context of a drilled or filtered map
VISIONS: list[tuple[str, str | None]] = [
    ("normal", None),
    ("deuteranopia", "deuteranomaly"),
    ("protanopia", "protanomaly"),
    ("tritanopia", "tritanomaly"),
]
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
BEFORE = (  # the palette of commit c79cad1: Paul Tol's bright and muted schemes, then lighter and darker ones
    "#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#332288", "#EE8866", "#44AA99", "#882255",
    "#BBCC33", "#FFAABB", "#77AADD", "#999933", "#117733", "#DDCC77", "#AA4499", "#994F00", "#0072B2", "#E69F00",
)  # fmt: skip


def to_rgb(colours) -> np.ndarray:
    """(n, 3) sRGB in [0, 1] of '#RRGGBB' strings."""
    return np.asarray([[int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)] for colour in colours], dtype=float)


def ucs(rgb: np.ndarray, deficiency: str | None) -> np.ndarray:
    """(n, 3) CAM02-UCS coordinates of ``rgb`` as seen with ``deficiency`` (colorspacious' cvd_type) or normally."""
    from colorspacious import cspace_convert

    if deficiency:
        simulated = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
        rgb = np.clip(cspace_convert(rgb, simulated, "sRGB1"), 0, 1)
    return cspace_convert(rgb, "sRGB1", "CAM02-UCS")


def closest_pair(colours) -> dict[str, tuple[float, str]]:
    """{vision: (smallest distance between two of ``colours``, "a~b")}."""
    rgb = to_rgb(colours)
    found = {}
    for name, deficiency in VISIONS:
        points = ucs(rgb, deficiency)
        distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
        np.fill_diagonal(distances, np.inf)
        i, j = np.unravel_index(distances.argmin(), distances.shape)
        found[name] = (float(distances[i, j]), f"{colours[i]}~{colours[j]}")
    return found


def to_greys(colours) -> float:
    """Smallest distance (normal vision) from a colour of ``colours`` to the greys."""
    points, greys = ucs(to_rgb(colours), None), ucs(to_rgb(GREYS), None)
    return float(np.linalg.norm(points[:, None] - greys[None], axis=-1).min())


def search(n_colours: int = 20) -> list[str]:
    """The palette search of the module's docstring."""
    levels = np.linspace(0, 1, 18)
    grid = np.asarray(list(itertools.product(levels, levels, levels)))
    names = ["#" + "".join(f"{round(value * 255):02X}" for value in colour) for colour in grid]
    seen = {name: ucs(grid, deficiency) for name, deficiency in VISIONS}
    lightness, colourfulness = seen["normal"][:, 0], np.hypot(seen["normal"][:, 1], seen["normal"][:, 2])
    greys = ucs(to_rgb(GREYS), None)
    grey_distance = np.linalg.norm(seen["normal"][:, None] - greys[None], axis=-1).min(axis=1)
    pool = np.flatnonzero(
        (lightness > 35) & (lightness < 80) & (colourfulness > 15) & (colourfulness < 80) & (grey_distance > 18)
    )

    def farthest(chosen: list[str]) -> tuple[int, float]:
        nearest = np.full(len(names), np.inf)
        for name, deficiency in VISIONS:
            points = ucs(to_rgb(chosen), deficiency)
            nearest = np.minimum(nearest, np.linalg.norm(seen[name][:, None] - points[None], axis=-1).min(axis=1))
        best = pool[np.argmax(nearest[pool])]
        return int(best), float(nearest[best])

    palette = list(OKABE_ITO)
    while len(palette) < n_colours:
        palette.append(names[farthest(palette)[0]])
    for _ in range(200):
        i, j, worst = _closest(palette)
        improved = False
        for index in sorted({i, j}, reverse=True):
            if index < len(OKABE_ITO):
                continue
            others = palette[:index] + palette[index + 1 :]
            candidate, distance = farthest(others)
            if distance > worst + 1e-6:
                palette[index], improved = names[candidate], True
                break
        if not improved:
            break
    return palette


def _closest(colours) -> tuple[int, int, float]:
    """(i, j, distance) of the two of ``colours`` closest in the worst of VISIONS."""
    rgb = to_rgb(colours)
    worst = np.full((len(colours), len(colours)), np.inf)
    for _, deficiency in VISIONS:
        points = ucs(rgb, deficiency)
        distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
        np.fill_diagonal(distances, np.inf)
        worst = np.minimum(worst, distances)
    i, j = np.unravel_index(worst.argmin(), worst.shape)
    return int(i), int(j), float(worst[i, j])


def report(name: str, colours) -> None:
    """Table rows of ``colours``' first 10 and all of them."""
    for count in (10, len(colours)):
        found = closest_pair(list(colours[:count]))
        cells = " | ".join(f"{found[vision][0]:.1f} ({found[vision][1]})" for vision, _ in VISIONS)
        print(f"| {name} | {count} | {cells} | {to_greys(colours[:count]):.1f} |")


def main() -> None:
    from dashboard.figures.topic_map import THEME_PALETTE

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--search", action="store_true", help="run the search that chose the palette")
    args = parser.parse_args()
    print("| palette | colours | " + " | ".join(vision for vision, _ in VISIONS) + " | to the greys |")
    print("|---|---|" + "---|" * (len(VISIONS) + 1))
    report("before (Tol)", BEFORE)
    report("in use", THEME_PALETTE)
    if args.search:
        found = search()
        report("search", found)
        print("found:", ", ".join(f'"{colour}"' for colour in found))


if __name__ == "__main__":
    main()
