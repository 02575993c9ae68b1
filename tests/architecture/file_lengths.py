#!/usr/bin/env python3
"""Lists the source files in src/ (*.cpp, *.hpp) longer than a limit, longest first; exits 1
when there is one that is not in the allowed list. A file that long holds more than one job:
split it into files named for what each holds.

Usage: file_lengths.py SOURCE_DIR [--limit N] [--allow FILE ...]  (FILE relative to src/)
"""
import argparse
import pathlib
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source_dir")
    parser.add_argument("--limit", type=int, default=700)
    parser.add_argument("--allow", nargs="*", default=[])
    args = parser.parse_args()
    src = pathlib.Path(args.source_dir) / "src"
    long = []
    for path in sorted(src.rglob("*.[ch]pp")):
        with path.open(encoding="utf-8", errors="replace") as f:
            length = sum(1 for _ in f)
        if length > args.limit:
            long.append((length, str(path.relative_to(src))))
    long.sort(key=lambda entry: (-entry[0], entry[1]))
    failed = False
    for length, name in long:
        allowed = name in args.allow
        print(f"{length:5d} {name}{'  (allowed)' if allowed else ''}")
        failed = failed or not allowed
    if failed:
        print(f"files over {args.limit} lines: split them by job into files named for what "
              "each holds, or allow them in tests/CMakeLists.txt with the reason",
              file=sys.stderr)
    else:
        print(f"no file in src/ over {args.limit} lines that is not allowed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
