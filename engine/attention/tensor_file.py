"""Reading a .safetensors file into torch tensors, without the `safetensors` package.

The format: 8 bytes (little-endian unsigned) give the header's length n; then n bytes of JSON
mapping each tensor's name to {"dtype", "shape", "data_offsets": [begin, end]} (and an optional
"__metadata__"); then the data, each tensor's bytes at [begin, end) of what follows the header,
row-major, little-endian.
"""
from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import torch

DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
          "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32,
          "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}


class TensorFileError(ValueError):
    """The file is not a readable .safetensors file."""


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """Every tensor of the file, by name (copies that own their memory)."""
    if sys.byteorder != "little":
        raise TensorFileError("reading .safetensors needs a little-endian machine")
    data = bytearray(path.read_bytes())        # writable: torch.frombuffer warns otherwise
    if len(data) < 8:
        raise TensorFileError(f"{path.name}: too short for a .safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(bytes(data[8:8 + n]))
    except ValueError as exc:
        raise TensorFileError(f"{path.name}: unreadable header ({exc})") from exc
    body = memoryview(data)[8 + n:]
    out: dict[str, torch.Tensor] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = DTYPES.get(entry["dtype"])
        if dtype is None:
            raise TensorFileError(f"{path.name}: {name} has an unknown dtype {entry['dtype']}")
        begin, end = entry["data_offsets"]
        shape = list(entry["shape"])
        if not 0 <= begin <= end <= len(body):
            raise TensorFileError(f"{path.name}: {name} lies outside the file")
        if end == begin:
            out[name] = torch.zeros(shape, dtype=dtype)
            continue
        flat = torch.frombuffer(body[begin:end], dtype=dtype)
        if flat.numel() != _numel(shape):
            raise TensorFileError(f"{path.name}: {name} has {flat.numel()} values for shape "
                                  f"{shape}")
        out[name] = flat.reshape(shape).clone()
    return out


def _numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n
