"""When the local embedder asks onnxruntime for exact int8 products (quantize.py)."""

from __future__ import annotations

import platform

import pytest

from codeqa_lsp.index.embedders.quantize import cpu_flags, needs_exact_int8_products

SKYLAKE = "fpu vme sse4_1 sse4_2 avx avx2 fma avx512f avx512bw avx512vl"
CASCADE_LAKE = SKYLAKE + " avx512_vnni"
ALDER_LAKE = "fpu sse4_2 avx avx2 fma avx_vnni"
MAC_LEAF7 = "FSGSBASE BMI1 AVX2 SMEP BMI2 AVX512F AVX512VNNI"


@pytest.mark.parametrize(
    ("machine", "flags", "exact"),
    [
        ("x86_64", SKYLAKE, True),  # AVX-512 without VNNI: 16-bit pair sums can saturate
        ("x86_64", CASCADE_LAKE, False),
        ("AMD64", ALDER_LAKE, False),  # Windows spells the machine AMD64
        ("x86_64", MAC_LEAF7, False),  # macOS sysctl spelling
        ("x86_64", None, True),  # flags unknown: be exact
        ("aarch64", None, False),  # no such shortcut on ARM
        ("arm64", SKYLAKE, False),
    ],
)
def test_exact_int8_products_only_where_the_cpu_lacks_vnni(
    machine: str, flags: str | None, exact: bool
) -> None:
    assert needs_exact_int8_products(machine, flags) is exact


def test_this_machines_flags_are_read_where_the_os_exposes_them() -> None:
    flags = cpu_flags()
    if platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64"):
        assert flags is not None and "sse" in flags
