#!/usr/bin/env python3
"""Fails when code, tests, scripts or the web UI name an issue by its number ("issue 15"):
a reader of the code has no issue tracker, so a comment says what and why in its own words.
Usage: no_issue_numbers.py PROJECT_ROOT"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
pattern = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
folders = ["src", "tests", "scripts", "bench", "web/ui", ".ci"]
suffixes = {".cpp", ".hpp", ".h", ".py", ".sh", ".js", ".txt", ".cmake", ""}
found = []
for folder in folders:
    base = root / folder
    if not base.exists():
        continue
    for path in sorted(base.rglob("*")):
        if not path.is_file() or path.suffix not in suffixes or path.name == "no_issue_numbers.py":
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
for line in found:
    print(line)
if found:
    print(f"{len(found)} line(s) name an issue by number: say what it is instead")
    sys.exit(1)
print("no issue numbers in code, tests, scripts or the UI")
