"""UMAP's SGD epochs in whole cold builds: what fewer epochs of the clustering space and of the map save, and what they
cost the topics and the map.

    .venv/bin/python -m bench.build_epochs --collections data/collections/all-venues.toml --work DIR
        [--variants 200:200 100:200 default] [--seeds 7]

Each variant ``U:M`` is one ``topic-atlas build --umap-epochs U --map-epochs M`` (either "default": the build's own
choice, pipeline.config.BuildConfig.resolved_for; "200:200" is UMAP's own above 10,000 documents, the build's before
2026-12-07), each cold (its own empty embedding and layout store) and run one after the other, a child process timed
from start to exit (CPU seconds and peak RSS from ``os.wait4``). List a variant twice to interleave repeats: this
machine's speed drifts by 10% within an hour. ``--seeds`` builds the first variant
again with each of those UMAP seeds: the spread a seed alone makes, beside each change. For each build it prints the
wall and CPU seconds, the peak RSS, the topics and outliers, the build's own figures (pipeline.quality.evaluation:
trustworthiness and kNN recall of the map, the reference column's kNN accuracy in the representation and on the map,
NPMI, topic diversity, AMI of the topics with each reference column) and the topics' agreement with the first build's
(bench.sample_fit.topic_agreement: adjusted mutual information by doc_id, outliers a label of their own).
docs/decisions/map-umap-settings.md holds the table and the decision.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bench.build import run_child
from bench.sample_fit import topic_agreement

ROOT = Path(__file__).resolve().parent.parent


def epochs_arguments(variant: str) -> list[str]:
    """The build's options for a variant ``U:M`` (either "default"), e.g. "100:150" -> --umap-epochs 100 --map-epochs
    150; "default" alone -> none. Raises ValueError for a variant of another form."""
    if variant == "default":
        return []
    parts = variant.split(":")
    if len(parts) != 2:
        raise ValueError(f"variant {variant!r}: give U:M, e.g. 100:150 or 100:default")
    arguments: list[str] = []
    for flag, value in zip(("--umap-epochs", "--map-epochs"), parts):
        if value != "default":
            arguments += [flag, str(int(value))]
    return arguments


def timed_cold_build(source: list[str], cache_dir: Path, extra: list[str]) -> dict[str, Any]:
    """One cold ``topic-atlas build`` child (``source``: its --input or --collections options; an empty store beside
    ``cache_dir``), timed by bench.build.run_child: {wall_s, cpu_s, peak_rss_mb, manifest}. Raises RuntimeError when
    it fails."""
    store = cache_dir.parent / f"{cache_dir.name}-store"
    store.mkdir(parents=True, exist_ok=False)
    env = dict(os.environ, ATLAS_EMBEDDING_CACHE=str(store / "embeddings.sqlite"), HF_HUB_OFFLINE="1")
    command = [str(ROOT / ".venv" / "bin" / "topic-atlas"), "build", *source, "--cache", str(cache_dir), *extra]
    usage = run_child(command + ["--force", "--no-align"], env, cache_dir.parent / f"{cache_dir.name}.log")
    return {
        "wall_s": usage["wall"],
        "cpu_s": usage["cpu"],
        "peak_rss_mb": usage["rss_mb"],
        "manifest": json.loads((cache_dir / "manifest.json").read_text()),
    }


def figures(result: dict[str, Any]) -> list[str]:
    """The printed cells of one build after its label: wall, CPU, peak RSS, topics, outliers, the map's
    trustworthiness and kNN recall, the reference column's kNN accuracy (in the representation / on the map), NPMI,
    topic diversity, each reference column's AMI."""
    manifest, metrics = result["manifest"], result["manifest"].get("metrics", {})

    def shown(value: Any) -> str:
        return "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)

    amis = ", ".join(
        f"{name} {shown(block.get('ami'))}" for name, block in sorted((metrics.get("references") or {}).items())
    )
    return [
        f"{result['wall_s']:.1f}",
        f"{result['cpu_s']:.1f}",
        f"{result['peak_rss_mb']:,.0f}",
        str(manifest.get("n_topics")),
        shown(manifest.get("outlier_fraction")),
        shown(metrics.get("trustworthiness_2d")),
        shown(metrics.get("knn_recall_2d")),
        f"{shown(metrics.get('knn_accuracy_embedding'))} / {shown(metrics.get('knn_accuracy_2d'))}",
        shown(metrics.get("npmi")),
        shown(metrics.get("topic_diversity")),
        amis or "-",
    ]


HEADER = (
    "| build | wall s | CPU s | peak RSS MiB | topics | outliers | trustworthiness | kNN recall | kNN accuracy "
    "(space / map) | NPMI | diversity | AMI with references | AMI vs first |"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", type=Path, help="a corpus file")
    source.add_argument("--collections", type=Path, help="a collection file (data/collections/*.toml)")
    parser.add_argument("--work", type=Path, required=True, help="an empty or missing folder for the builds")
    parser.add_argument("--variants", nargs="+", default=["200:200", "100:200", "default"])
    parser.add_argument("--seeds", type=int, nargs="*", default=[], help="the first variant again with these seeds")
    args = parser.parse_args(argv)
    if args.work.exists() and any(args.work.iterdir()):
        print(f"error: {args.work} is not empty", file=sys.stderr)
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    given = ["--input", str(args.input)] if args.input else ["--collections", str(args.collections)]
    builds = [(variant, epochs_arguments(variant)) for variant in args.variants]
    builds += [(f"{args.variants[0]}, seed {seed}", builds[0][1] + ["--seed", str(seed)]) for seed in args.seeds]
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    first: Path | None = None
    for number, (label, extra) in enumerate(builds):
        cache_dir = args.work / f"build-{number}"
        result = timed_cold_build(given, cache_dir, extra)
        first = first or cache_dir
        cells = [label, *figures(result), f"{topic_agreement(first, cache_dir):.3f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
