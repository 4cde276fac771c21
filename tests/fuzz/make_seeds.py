#!/usr/bin/python3
"""Seed inputs for the fuzz targets (tests/fuzz/corpus/<target>/), each a well-formed input in the
target's own layout (see each target's header comment), so that libFuzzer starts from inputs that
reach the decoders' deep paths and mutates from there:

  compressor_decode  every case of the target's list, at 1 to 3 ranks and two shapes, in its
                     "real payloads" mode with no edits
  unpack_kernels     each kernel with a payload packed as the library packs it
  gathered_frames    frames with and without size tables
  config_toml        the shipped experiments/*.toml, less the sections only `lowcomm train` and
                     `lowcomm sweep` know (model, train, sweep, seed)
  file_readers       tests/cli/links/*.csv, and a token shard in llm.c's layout
  hdf5_files         each kind of file unedited, and with one edit of each kind
  experiment_file    the shipped experiments/*.toml

and the dictionaries of the TOML targets (tests/fuzz/dictionaries/<target>.dict): TOML's syntax
and every key and section of `lowcomm train`, as `lowcomm info` lists them (from the release
build's binary; without it the dictionaries are left as they are).

Run: /usr/bin/python3 tests/fuzz/make_seeds.py [LOWCOMM_BINARY]   (rewrites the corpus folders;
default binary build/release/apps/lowcomm/lowcomm)
"""
import glob
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = 23  # compressor_decode's cases: the registered compressors' wire examples (CompressorInfo::wire_examples)
SHAPES = 6


def write(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def u16(x):
    return struct.pack("<H", x)


def main():
    for target in ("compressor_decode", "unpack_kernels", "gathered_frames", "config_toml", "file_readers",
                   "hdf5_files", "experiment_file"):
        shutil.rmtree(os.path.join(HERE, "corpus", target), ignore_errors=True)

    # case (2 bytes), ranks - 1, shape (2 bytes), mode (even: real payloads), seed (2 bytes), 0 edits
    for case in range(CASES):
        for ranks, shape in ((1, 3), (3, 4), (2, 2)):
            write("compressor_decode", f"case{case:02d}_w{ranks}_s{shape}",
                  u16(case) + bytes([ranks - 1]) + u16(shape) + bytes([0]) + u16(7 * case + ranks) + bytes([0]))

    # unpack_kernels: kernel, count (2 bytes, even: taken from the payload's size), parameters, payload
    write("unpack_kernels", "indices_u16", bytes([0]) + u16(0) + bytes([1]) + struct.pack("<Q", 1000) +
          b"".join(u16(i * 37 % 1000) for i in range(20)))
    pairs = b"".join(bytes([a & 0xFF, (a >> 8 & 0xF) | (b & 0xF) << 4, b >> 4]) for a, b in ((5, 4000), (17, 2048)))
    write("unpack_kernels", "packed12", bytes([1]) + u16(2) + u16(4096) + pairs)
    write("unpack_kernels", "signs", bytes([2]) + u16(0) + bytes([0x95, 0x01, 0xFF]))
    write("unpack_kernels", "codes_2bit", bytes([3]) + u16(0) + bytes([1]) + u16(4) + bytes([0x39, 0xE4, 0x1B]))
    write("unpack_kernels", "dequantize", bytes([4]) + u16(0) + bytes([7]) + u16(4) + bytes([2]) +
          struct.pack("<ff", 0.5, 0.25) + bytes([127, 0, 254, 100, 127, 3, 9, 200]))
    write("unpack_kernels", "dequantize_sum", bytes([5]) + u16(2) + bytes([3]) + u16(3) + bytes([1]) +
          struct.pack("<f", 1.5) + bytes([0x1F, 0x2A]))
    write("unpack_kernels", "bf16", bytes([6]) + u16(0) + bytes([2]) + struct.pack("<4H", 0x3F80, 0xBF80, 0x7F80, 0x0001))

    # gathered_frames: ranks - 1, payloads per rank, fixed (even) or tabled (odd), sizes, counts, bytes
    fixed = bytes([1, 2, 0]) + u16(3) + u16(1) + u16(4) + u16(4) + bytes(range(8))
    write("gathered_frames", "fixed_sizes", fixed)
    table = struct.pack("<II", 2, 1) + b"ab" + b"c"
    write("gathered_frames", "size_tables", bytes([0, 2, 1]) + u16(len(table)) + table)

    for path in sorted(glob.glob(os.path.join(ROOT, "experiments", "*.toml"))):
        kept, skipping = [], False
        for line in open(path).read().splitlines():
            header = re.match(r"^\s*\[+\s*([A-Za-z_.]+)", line)
            if header:
                skipping = header.group(1).split(".")[0] in ("model", "train", "sweep")
            if not skipping and not re.match(r"^\s*seed\s*=", line):
                kept.append(line)
        write("config_toml", os.path.basename(path), "\n".join(kept).encode() + b"\n")

    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "cli", "links", "*.csv"))):
        write("file_readers", "links_" + os.path.basename(path), bytes([2 * 3]) + open(path, "rb").read())  # 4 ranks
    tokens = [(i * 7919) % 256 for i in range(64)]
    header = struct.pack("<3i", 20240520, 1, len(tokens)) + bytes(4 * 253)
    write("file_readers", "token_shard", bytes([3]) + header + struct.pack(f"<{len(tokens)}H", *tokens))  # vocab 510


    # hdf5_files: kind (0 checkpoint, 1 trace, 2 run log), then edits (kind byte, object, name, arguments)
    for kind, name in enumerate(("checkpoint", "trace", "run_log")):
        write("hdf5_files", name, bytes([kind]))
        for edit in range(8):
            write("hdf5_files", f"{name}_edit{edit}", bytes([kind, edit]) + u16(edit * 3) + u16(edit) + bytes([edit, 2, 3, 1, 7]))

    for path in sorted(glob.glob(os.path.join(ROOT, "experiments", "*.toml"))):
        write("experiment_file", os.path.basename(path), open(path, "rb").read())

    write_dictionaries(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "release", "apps", "lowcomm", "lowcomm"))


def dictionary_escape(token):
    """libFuzzer's dictionary syntax: printable ASCII as is, but for backslash and quote; \\xNN else."""
    return "".join(c if c.isprintable() and c not in '\\"' else f"\\x{ord(c):02X}" for c in token)


def write_dictionaries(binary):
    if not os.access(binary, os.X_OK):
        print(f"make_seeds: no {binary}: the dictionaries are left as they are")
        return
    listing = subprocess.run([binary, "info"], check=True, capture_output=True, text=True).stdout
    keys = sorted(set(re.findall(r"^\s+([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)+)\b", listing, re.M)))
    tokens = ["=", "[", "]", "[[", "]]", "{", "}", ",", ".", '"', "true", "false", "1e-3", "0x", "inf", "nan",
              "#", "\n", "[sweep]", "[[sweep.method]]", "[[sweep.axis]]", "name", "set", "key", "values", "also", "ranks"]
    for key in keys:
        section, _, leaf = key.rpartition(".")
        tokens += [key, leaf, f"[{section}]"]
    lines = [f'kw{i}="{dictionary_escape(token)}"' for i, token in enumerate(dict.fromkeys(tokens))]
    folder = os.path.join(HERE, "dictionaries")
    os.makedirs(folder, exist_ok=True)
    for target in ("config_toml", "experiment_file"):
        with open(os.path.join(folder, target + ".dict"), "w") as f:
            f.write(f"# TOML syntax and the {len(keys)} keys `lowcomm info` lists (tests/fuzz/make_seeds.py)\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
