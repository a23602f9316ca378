"""The two int8 variants of the MiniLM graph (`minilm_graph.build_graph`), and why they differ.

`int8`: onnxruntime's dynamic quantisation of every encoder matrix, weights with one scale
per output channel, activations with *one scale per batch tensor*. Fastest (1.9x fp32), but
BERT's activations carry outliers on a few tokens, and one scale for the whole tensor
spends its 256 levels on them: cosine to fp32 mean 0.994, min 0.985, and CoSQA / the 100
questions lose 0.010-0.016 (local.py, BENCHMARKS.md "Quality of each variant").

`ffn-int8`: only the feed-forward matrices (two thirds of the encoder's multiply-adds), with
*one activation scale per token* (symmetric, the token's largest magnitude) and one weight
scale per output channel. A token's outlier costs precision to that token only. Measured
2026-11-25 on 400 click/src chunks (idle 2-core Xeon, one run): cosine to fp32 mean 0.9992,
min 0.998, and 1.34x fp32's throughput (96.6-98.8 vs 72.7-73.3 chunks/s). Per-token scales on
the attention projections too: 1.45x but cosine 0.9979, and the 100 questions lost 0.02
hit@5; the attention output projection alone added no speed (1.32x). onnxruntime's
fused quantised kernels take one activation scale only, so the per-token step is written
out: Abs, ReduceMax per row, QuantizeLinear per row (zero point 128), MatMulInteger (u8 x s8,
the VNNI instruction's operand types), DequantizeLinear per row, Mul by the weight scales.

On x86 CPUs without VNNI, onnxruntime's u8 x s8 kernels add pairs of products in 16 bits,
which can saturate; `needs_exact_int8_products` tells the embedder to ask onnxruntime for
exact (u8 x u8, slower) products there. Asking where VNNI exists cost a third of ffn-int8's
speed on this machine (63 vs 91-94 chunks/s), so it is asked only where needed. Keeping 7 bits
per weight instead (the other remedy) moved the cosine to fp32 from 0.9992 to 0.9973.

Where the time goes now (onnxruntime's profiler, 2026-11-26, a batch of 8 texts x 200 tokens,
two threads, 30 runs; ffn-int8 119 ms per run, fp32 161 ms): the fused fp32 `Attention` op
(QKV projection, scores, softmax) 43%, `SkipLayerNormalization` 15%, the feed-forward int8
path 27% (of which the integer products are 7%: `MatMulInteger` runs at ~2,800 G int8
ops/s here against fp32 `MatMul`'s ~330 GFLOP/s, this Xeon has AMX; the rest are the
per-token scale's passes over the activations: quantise, dequantise, weight scales, Abs,
ReduceMax), the attention output `MatMul` 7%, `BiasGelu` 7%. More int8 buys little: with the
Q, K, V and output projections in per-token int8 too, the attention core has to leave the
fused op for `MultiHeadAttention`, which is slower (fp32 projections + that core: 1.26x fp32;
everything int8: 1.45x, cosine 0.9979; ffn-int8 1.37x in the same run, 400 click/src chunks,
2026-11-26). So even a quantisation of the projections that kept their quality (per-channel
smoothing of the activations' outlier channels into the weights, as SmoothQuant does) would
gain ~6%; the rest is the attention core and elementwise passes bound by memory bandwidth.

The graph rewrites need the `onnx` package (and onnxruntime's quantiser for `int8`) and run
only when a model is built, never at query time.
"""

from __future__ import annotations

import functools
import logging
import platform
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

# The feed-forward MatMul nodes `build_graph` names: up-projection, down-projection.
FEED_FORWARD_SUFFIXES = ("_ff1", "_ff2")
_ROW_FLOOR = 1e-8  # an all-zero row still gets a finite scale
_X86 = ("x86_64", "amd64", "i386", "i686", "x86")


def needs_exact_int8_products(machine: str, cpu_flags: str | None) -> bool:
    """Whether int8 products must run exactly (onnxruntime's `session.x64quantprecision`):
    on x86 unless the CPU's flags (as /proc/cpuinfo or macOS' sysctl spell them) show VNNI;
    unknown flags count as no VNNI. Other architectures have no such shortcut."""
    if machine.lower() not in _X86:
        return False
    flags = (cpu_flags or "").lower().replace("_", "").split()
    return not any(flag in ("avx512vnni", "avxvnni") for flag in flags)


@functools.cache
def cpu_flags() -> str | None:
    """This CPU's feature flags, or None where they cannot be read cheaply (read once)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return line.partition(":")[2]
    except OSError:
        pass
    if platform.system() == "Darwin":
        try:
            return subprocess.run(
                ["sysctl", "-n", "machdep.cpu.features", "machdep.cpu.leaf7_features"],
                capture_output=True,
                text=True,
                timeout=2,
                check=False,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
    return None


def dynamic_int8(model: Any, tmp: Path) -> Any:
    """The `int8` variant of the fp32 `model`: onnxruntime's dynamic quantisation, one weight
    scale per output channel (the quantiser works on files, so it goes through `tmp`)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32, int8 = tmp / "fp32.onnx", tmp / "int8.onnx"
    onnx.save(model, str(fp32))
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs every tensor on the root logger
    try:
        quantize_dynamic(
            str(fp32),
            str(int8),
            per_channel=True,
            weight_type=QuantType.QInt8,
            # The fused contrib ops carry no inferred output types; without a default the
            # quantiser refuses the graph.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        root.setLevel(level)
    return onnx.load(str(int8))


def feed_forward_int8(model: Any) -> Any:
    """The `ffn-int8` variant of the fp32 `model`, rewritten in place: every feed-forward
    MatMul becomes the per-token int8 subgraph described above."""
    from onnx import helper, numpy_helper

    graph = model.graph
    initializers = {tensor.name: tensor for tensor in graph.initializer}

    def constant(name: str, array: np.ndarray) -> str:
        graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    row_floor = constant("ffn_row_floor", np.array(_ROW_FLOOR, dtype=np.float32))
    levels = constant("ffn_levels", np.array(127.0, dtype=np.float32))
    zero_point = constant("ffn_zero_point", np.array(128, dtype=np.uint8))
    node = helper.make_node
    # Computed once for all twelve products: [batch, sequence] of the encoder's activations
    # (to give each 2-D product its 3-D shape back), and the per-row zero points QuantizeLinear
    # wants shaped like its scales (128 for each of the batch x sequence rows).
    nodes = [
        node("Shape", ["hidden_0"], ["ffn_batch_sequence"], start=0, end=2),
        node("ReduceProd", ["ffn_batch_sequence"], ["ffn_rows"], keepdims=1),
        node(
            "ConstantOfShape",
            ["ffn_rows"],
            ["ffn_zero_points"],
            value=numpy_helper.from_array(np.array([128], dtype=np.uint8)),
        ),
    ]
    output_shapes: dict[int, str] = {}  # columns -> [batch, sequence, columns]
    for original in graph.node:
        if original.op_type != "MatMul" or not original.name.endswith(FEED_FORWARD_SUFFIXES):
            nodes.append(original)
            continue
        x, weight_name = original.input
        p = original.name
        weights = numpy_helper.to_array(initializers[weight_name]).astype(np.float32)
        rows_in, columns = weights.shape
        weight_scale = np.maximum(np.abs(weights).max(axis=0), 1e-12) / 127.0
        quantised = np.clip(np.round(weights / weight_scale), -127, 127).astype(np.int8)
        graph.initializer.remove(initializers[weight_name])
        constant(f"{p}_wq", quantised)
        constant(f"{p}_w_scale", weight_scale.astype(np.float32))
        constant(f"{p}_flat", np.array([-1, rows_in], dtype=np.int64))
        if columns not in output_shapes:
            output_shapes[columns] = f"ffn_shape_{columns}"
            width = constant(f"ffn_columns_{columns}", np.array([columns], dtype=np.int64))
            nodes.append(
                node(
                    "Concat",
                    ["ffn_batch_sequence", width],
                    [output_shapes[columns]],
                    axis=0,
                )
            )
        nodes += [
            node("Reshape", [x, f"{p}_flat"], [f"{p}_x"]),
            node("Abs", [f"{p}_x"], [f"{p}_abs"]),
            node("ReduceMax", [f"{p}_abs"], [f"{p}_peak"], axes=[1], keepdims=0),
            node("Max", [f"{p}_peak", row_floor], [f"{p}_peak_floored"]),
            node("Div", [f"{p}_peak_floored", levels], [f"{p}_scale"]),
            node(
                "QuantizeLinear",
                [f"{p}_x", f"{p}_scale", "ffn_zero_points"],
                [f"{p}_xq"],
                axis=0,
            ),
            node("MatMulInteger", [f"{p}_xq", f"{p}_wq", zero_point], [f"{p}_product"], name=p),
            node("DequantizeLinear", [f"{p}_product", f"{p}_scale"], [f"{p}_rows"], axis=0),
            node("Mul", [f"{p}_rows", f"{p}_w_scale"], [f"{p}_y"]),
            node("Reshape", [f"{p}_y", output_shapes[columns]], [original.output[0]]),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    return model
