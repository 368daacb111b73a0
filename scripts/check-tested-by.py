#!/usr/bin/env python3
"""Every "Tested by ..." comment in the sources names test files that exist.

A source file says where it is tested ("// Tested by when_test.cc and tests/daemon/test_cli.py");
when a test is renamed or removed, the comment would go on pointing at nothing. This check (run
by `make test`) reads each such comment (the line and the comment lines that continue its
sentence), takes every name in it that looks like a test file (*.cc, *.py, *.sh, *.mjs; a
pattern such as src/web/*_test.cc must match one) and looks for it: as a path from the
repository's root, from the source's own folder, or as a file of that name anywhere in the tree. Exit 1, listing each missing name, when one is not found.
"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NAME = re.compile(r"[\w./*-]+\.(?:cc|py|sh|mjs)\b")
SKIP_DIRS = {".git", "node_modules", "build", "build-asan"}


def files_by_name():
    names = {}
    for top in ("src", "tests", "bench", "scripts", "web"):
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            for f in files:
                names.setdefault(f, []).append(os.path.join(folder, f))
    return names


def comments(path):
    """The text of each "Tested by" comment in `path`: its line and the comment lines after it,
    up to the end of the sentence or of the comment."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        at = line.find("Tested by")
        if at < 0:
            continue
        text = line[at:]
        j = i
        while not text.rstrip().endswith(".") and j + 1 < len(lines) and lines[j + 1].lstrip().startswith("//"):
            j += 1
            rest = lines[j].lstrip()[2:].strip()
            if not rest:
                break
            text += " " + rest
        yield i + 1, text


def main():
    names = files_by_name()
    missing = []
    checked = 0
    for folder, dirs, files in os.walk(os.path.join(ROOT, "src")):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for f in files:
            if not f.endswith((".cc", ".h")):
                continue
            path = os.path.join(folder, f)
            for line, text in comments(path):
                for name in NAME.findall(text):
                    checked += 1
                    candidates = [os.path.join(ROOT, name), os.path.join(folder, name)]
                    if "*" in name and any(glob.glob(c) for c in candidates):
                        continue
                    if any(os.path.isfile(c) for c in candidates) or os.path.basename(name) in names:
                        continue
                    missing.append(f"{os.path.relpath(path, ROOT)}:{line}: names {name}, which does not exist")
    for m in missing:
        print(m, file=sys.stderr)
    if missing:
        print("error: a \"Tested by\" comment names a test that does not exist (see above)", file=sys.stderr)
        return 1
    print(f"check-tested-by: the {checked} test files that comments name exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
