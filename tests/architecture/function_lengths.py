#!/usr/bin/env python3
"""Lists the functions in src/ longer than a limit (lines from the opening brace to the
closing one), longest first; exits 1 when there is one that is not in the allowed list.

A rough C++ reader, enough for this code base: comments, strings and character literals are
blanked, then braces are matched. A brace opens a function when every brace around it is a
namespace, class, struct, union, enum or extern block and the text before it has a parameter
list; lambdas count toward the function they are written in.

Usage: function_lengths.py SOURCE_DIR [--limit N] [--allow FILE:FUNCTION ...]
"""
import argparse
import pathlib
import re
import sys

SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b|extern\s*$")


def blank(text):
    """Comments, strings and char literals become spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    text = blank(path.read_text(encoding="utf-8", errors="replace"))
    stack = []  # (kind, line, name)
    header_start = 0
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c in ";":
            header_start = i + 1
        elif c == "{":
            header = text[header_start:i]
            at_scope = all(kind == "scope" for kind, _, _ in stack)
            if at_scope and SCOPE.search(header) and "(" not in header.split("{")[-1]:
                kind = "scope"
            elif at_scope and "(" in header and not header.rstrip().endswith("="):
                kind = "function"
            elif at_scope and SCOPE.search(header):
                kind = "scope"
            else:
                kind = "other"
            name = ""
            if kind == "function":
                m = re.search(r"([~\w:<>=!+\-*/\[\]]+)\s*\(", header)
                name = m.group(1) if m else "?"
            stack.append((kind, line, name))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    yield name, start, line - start + 1
            header_start = i + 1
    return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source_dir")
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--allow", nargs="*", default=[])
    args = parser.parse_args()
    src = pathlib.Path(args.source_dir) / "src"
    long = []
    for path in sorted(src.rglob("*.[ch]pp")):
        for name, start, length in functions(path):
            if length > args.limit:
                long.append((length, f"{path.relative_to(src)}:{start}", name))
    long.sort(reverse=True)
    failed = False
    for length, where, name in long:
        allowed = any(where.startswith(a.split(":")[0]) and a.split(":")[1] == name
                      for a in args.allow)
        print(f"{length:5d} {where} {name}{'  (allowed)' if allowed else ''}")
        failed = failed or not allowed
    if failed:
        print(f"functions over {args.limit} lines: split them into named steps, or allow "
              "them in tests/CMakeLists.txt with the reason", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
