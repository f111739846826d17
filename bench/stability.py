"""Topic identity across rebuilds and adds (pipeline.topics.align, pipeline.operations.add), on one corpus, in one run.

    python bench/stability.py --input ../shared/data/iclr2025/iclr2025_abstracts.parquet \\
        --embedding-model all-MiniLM-L6-v2-static

(a) the same build twice into fresh folders (are the ids identical?), and a rebuild into the first one's folder
    (aligned to itself: does every topic keep its id?);
(b) rebuilds with ``--min-cluster-size`` changed (``--cluster-sizes``, default 0.75x and 1.4x of the corpus's
    default), aligned to (a)'s atlas and without alignment (``--no-align``: the model's own numbering, i.e.
    chance-level renumbering): the share of papers whose topic id is unchanged, and the topics kept / split /
    merged / new / gone;
(c) the corpus split 90/10 (seeded): build on 90%, ``add`` the 10%: the ARI of the old papers' topics before and
    after (must be 1.0), and the agreement of the added papers' topics with a full refit of 100% aligned to the
    same 90% atlas (share of equal ids, and ARI), next to how far that refit moves the old papers themselves;
(d) the wall time of ``python -m topic_atlas add`` (whole process, as a user runs it) for 100 and for 1,000 papers
    of the held-out 10%, with add's own stage seconds.

Builds run in this process with one loaded encoder and the shared embedding cache ($ATLAS_EMBEDDING_CACHE), so
UMAP layouts are reused where the embeddings repeat. Timings are indicative on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.runtime.parquet import read_frame

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pandas as pd  # noqa: E402

if TYPE_CHECKING:
    from pipeline.cache import TopicCache
    from pipeline.config import BuildConfig
    from pipeline.represent.encoder_backends import EncoderLike


def build(
    input_path: Path,
    target: Path,
    config: BuildConfig,
    encoder: EncoderLike | None,
    align: bool = True,
    source: Path | None = None,
) -> tuple[TopicCache, float]:
    """Build ``input_path`` into ``target`` (a copy of ``source`` first, when given); returns (TopicCache, seconds)."""
    from pipeline.cache import read_cache
    from pipeline.operations.build import run_build
    from pipeline.represent.embedding_store import DEFAULT_STORE

    if target.exists():
        shutil.rmtree(target)
    if source is not None:
        shutil.copytree(source, target)
    start = time.perf_counter()
    run_build(input_path, target, config, embedding_store=DEFAULT_STORE, encoder=encoder, align=align)
    return read_cache(target), time.perf_counter() - start


def same_id_share(before: pd.DataFrame, after: pd.DataFrame) -> float:
    """Share of the papers of ``before`` (doc_id, topic) that have the same topic id in ``after``."""
    joined = before[["doc_id", "topic"]].merge(after[["doc_id", "topic"]], on="doc_id", suffixes=("_before", "_after"))
    return float((joined["topic_before"] == joined["topic_after"]).mean())


def status_counts(atlas: TopicCache) -> str:
    lineage = atlas.manifest.get("lineage") or {}
    counts = pd.Series([entry["status"] for entry in lineage.get("topics", [])]).value_counts().to_dict()
    return (
        " / ".join(str(counts.get(status, 0)) for status in ("kept", "split", "merged", "new"))
        + f" / {len(lineage.get('gone', []))}"
    )


def part_a(
    input_path: Path, work: Path, config: BuildConfig, encoder: EncoderLike | None
) -> tuple[TopicCache, list[str]]:
    first, seconds = build(input_path, work / "a1", config, encoder)
    second, _ = build(input_path, work / "a2", config, encoder)
    itself, _ = build(input_path, work / "a-self", config, encoder, source=work / "a1")
    lines = [
        "(a) same build twice, fresh folders: identical ids for "
        f"{same_id_share(first.documents, second.documents):.2%} of papers "
        f"({first.manifest['n_topics']} topics, build {seconds:.0f} s)",
        f"(a) rebuild aligned to itself: {same_id_share(first.documents, itself.documents):.2%} "
        f"of papers keep their id; kept/split/merged/new/gone = {status_counts(itself)}",
    ]
    return first, lines


def part_b(
    input_path: Path,
    work: Path,
    config: BuildConfig,
    encoder: EncoderLike | None,
    first: TopicCache,
    sizes: list[int],
) -> list[str]:
    lines = [
        f"(b) default min_cluster_size {first.manifest['params']['min_cluster_size']}: "
        "papers whose topic id is unchanged"
    ]
    for size in sizes:
        changed = replace(config, min_cluster_size=size)
        aligned, _ = build(input_path, work / f"b-{size}-aligned", changed, encoder, source=work / "a1")
        unaligned, _ = build(input_path, work / f"b-{size}-unaligned", changed, encoder, align=False)
        lines.append(
            f"    --min-cluster-size {size}: {aligned.manifest['n_topics']} topics; aligned "
            f"{same_id_share(first.documents, aligned.documents):.1%}, not aligned "
            f"{same_id_share(first.documents, unaligned.documents):.1%}; kept/split/merged/new/gone = "
            f"{status_counts(aligned)}"
        )
    return lines


def split_corpus(input_path: Path, work: Path, seed: int) -> tuple[Path, Path]:
    papers = read_frame(input_path)
    shuffled = papers.sample(frac=1.0, random_state=seed)
    n_old = int(round(0.9 * len(papers)))
    old_path, new_path = work / "corpus_90.parquet", work / "corpus_10.parquet"
    shuffled.iloc[:n_old].to_parquet(old_path, index=False)
    shuffled.iloc[n_old:].to_parquet(new_path, index=False)
    return old_path, new_path


def part_c(
    input_path: Path, work: Path, config: BuildConfig, encoder: EncoderLike | None, seed: int
) -> tuple[list[str], Path]:
    from sklearn.metrics import adjusted_rand_score

    from pipeline.cache import read_cache
    from pipeline.operations.add import run_add

    old_path, new_path = split_corpus(input_path, work, seed)
    base, _ = build(old_path, work / "c90", config, encoder)
    shutil.copytree(work / "c90", work / "c90-add")
    report = run_add(work / "c90-add", new_path, encoder=encoder).report
    grown = read_cache(work / "c90-add")
    old_after = grown.documents.iloc[: len(base.documents)]
    ari_old = adjusted_rand_score(base.documents["topic"], old_after["topic"])
    refit, _ = build(input_path, work / "c100-refit", config, encoder, source=work / "c90")
    added = grown.documents.iloc[len(base.documents) :][["doc_id", "topic"]].merge(
        refit.documents[["doc_id", "topic"]], on="doc_id", suffixes=("_add", "_refit")
    )
    lines = [
        f"(c) 90/10: built on {len(base.documents)} papers, added {report['n_added']} "
        f"({report['n_misfits']} fit no topic well, refit due: {report['refit_due']})",
        f"    ARI of the old papers' topics before/after add: {ari_old:.4f} (ids equal: "
        f"{(base.documents['topic'].to_numpy() == old_after['topic'].to_numpy()).mean():.2%})",
        "    added papers, add vs full refit aligned to the 90% atlas: same "
        f"id {(added['topic_add'] == added['topic_refit']).mean():.1%}, ARI "
        f"{adjusted_rand_score(added['topic_add'], added['topic_refit']):.3f}",
        f"    (for scale: the refit keeps the id of {same_id_share(base.documents, refit.documents):.1%} "
        f"of the old papers; kept/split/merged/new/gone = {status_counts(refit)})",
    ]
    return lines, new_path


def part_d(work: Path, new_path: Path, counts: list[int]) -> list[str]:
    held_out = read_frame(new_path)
    lines = []
    for count in counts:
        sample = work / f"add_{count}.parquet"
        held_out.head(count).to_parquet(sample, index=False)
        target = work / f"d-{count}"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(work / "c90", target)
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "topic_atlas", "add", "--cache", str(target), "--input", str(sample)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            raise RuntimeError(result.stderr[-2000:])
        stages = json.loads((target / "manifest.json").read_text())["add_history"][-1]["timings_s"]
        lines.append(
            f"(d) add {min(count, len(held_out))} papers: {seconds:.1f} s whole process; stages "
            + ", ".join(f"{k} {v:.1f}" for k, v in stages.items())
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--input", type=Path, default=ROOT.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.parquet"
    )
    parser.add_argument(
        "--embedding-model",
        default=None,
        help="encoder name (see topic-atlas build --help); default: the build's",
    )
    parser.add_argument(
        "--cluster-sizes",
        type=int,
        nargs="*",
        default=None,
        help="min_cluster_size values for (b) (default: 0.75x and 1.4x the corpus default)",
    )
    parser.add_argument("--add-sizes", type=int, nargs="*", default=[100, 1000], help="papers per timed add in (d)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the 90/10 split")
    parser.add_argument(
        "--work", type=Path, default=Path("/tmp/atlas-stability"), help="folder for the caches (emptied first)"
    )
    parser.add_argument("--parts", default="abcd", help="which parts to run (default abcd; c is needed by d)")
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING)
    from pipeline.config import BuildConfig
    from pipeline.represent.encoder_backends import get_encoder
    from pipeline.represent.representation import block_names, is_lexical

    config = replace(BuildConfig(), embedding_model=args.embedding_model) if args.embedding_model else BuildConfig()
    encoders = [block for block in block_names(config.embedding_model) if not is_lexical(block)]
    encoder = (
        get_encoder(encoders[0]) if encoders else None
    )  # loaded once for every build (a lexical representation needs none)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    n = len(read_frame(args.input))
    default_size = config.resolved_for(n).min_cluster_size
    sizes = args.cluster_sizes or [round(0.75 * default_size), round(1.4 * default_size)]
    started = time.perf_counter()
    lines = [f"stability of topic ids on {args.input.name} ({n} rows), representation {config.embedding_model}"]
    first = None
    if "a" in args.parts or "b" in args.parts:
        first, part = part_a(args.input, args.work, config, encoder)
        lines += part
        print("\n".join(part), flush=True)
    if "b" in args.parts:
        part = part_b(args.input, args.work, config, encoder, first, sizes)
        lines += part
        print("\n".join(part), flush=True)
    if "c" in args.parts or "d" in args.parts:
        part, new_path = part_c(args.input, args.work, config, encoder, args.seed)
        lines += part
        print("\n".join(part), flush=True)
        if "d" in args.parts:
            part = part_d(args.work, new_path, args.add_sizes)
            lines += part
            print("\n".join(part), flush=True)
    print("\n" + "\n".join(lines))
    print(f"total {time.perf_counter() - started:.0f} s (timings indicative: shared machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
