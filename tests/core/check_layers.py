"""No include runs back up the layers. From the ground up: core (core/, include/lowcomm/core/,
include/lowcomm/error.hpp), kernels (kernels/, include/lowcomm/kernels/), the library (lib/ and the
other public headers), the apps (apps/). A file may include its own layer's files and those below,
never above; the script lists every include that breaks it and exits 1.

Run: python3 tests/core/check_layers.py [REPOSITORY]"""

import os
import re
import sys

LAYERS = ["core", "kernels", "lib", "apps"]
LIB_SECTIONS = ("comm", "compress", "config", "data", "log", "optim", "strategy")
SOURCE = (".hpp", ".cpp", ".h", ".cu", ".cuh", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of_file(path):
    """The layer of a file of the repository (a path relative to its root), or None."""
    if path.startswith("core/") or path.startswith("include/lowcomm/core/") or path == "include/lowcomm/error.hpp":
        return "core"
    if path.startswith("kernels/") or path.startswith("include/lowcomm/kernels/"):
        return "kernels"
    if path.startswith("lib/") or path.startswith("include/lowcomm/"):
        return "lib"
    if path.startswith("apps/"):
        return "apps"
    return None


def layer_of_include(including, written, root):
    """The layer of what `including` includes as `written`."""
    if written.startswith("lowcomm/"):
        return layer_of_file("include/" + written)
    beside = os.path.normpath(os.path.join(os.path.dirname(including), written))
    if os.path.exists(os.path.join(root, beside)):
        return layer_of_file(beside)
    # the apps' own include folders: apps/gpt ("gpt/model.hpp") and apps/lowcomm ("common/...", "train/...")
    for folder in ("apps/gpt", "apps/lowcomm"):
        if os.path.exists(os.path.join(root, folder, written)):
            return "apps"
    return None  # a system or third-party header


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    broken = []
    files = 0
    for top in ("core", "kernels", "lib", "include", "apps"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith(SOURCE):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                mine = layer_of_file(path)
                if mine is None:
                    continue
                files += 1
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for written in INCLUDE.findall(text):
                    theirs = layer_of_include(path, written, root)
                    if theirs is not None and LAYERS.index(theirs) > LAYERS.index(mine):
                        broken.append(f"{path} ({mine}) includes \"{written}\" ({theirs})")
    for line in broken:
        print(line)
    if broken:
        sys.exit(f"check_layers: {len(broken)} include(s) run back up the layers core < kernels < lib < apps")
    print(f"check_layers: {files} files, no include runs back up the layers core < kernels < lib < apps")


if __name__ == "__main__":
    main()
