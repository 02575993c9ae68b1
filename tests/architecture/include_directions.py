#!/usr/bin/env python3
"""The include-direction guard (ctest architecture.include_directions).

Reads the layers and what each may use from the fenced block after the heading "Which folder
may include which" in docs/architecture.md, then checks every #include "folder/..." in src/
against it. Prints each file:line that includes across a forbidden direction and exits 1; a
folder the block does not name fails too, so a new folder must be placed in the map first.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
doc = (root / "docs" / "architecture.md").read_text()
section = doc.split("## Which folder may include which", 1)
if len(section) < 2:
    sys.exit("docs/architecture.md has no section 'Which folder may include which'")
block = re.search(r"```\n(.*?)```", section[1], re.S)
if not block:
    sys.exit("docs/architecture.md: the include map's fenced block is missing")
allowed = {}
for line in block.group(1).splitlines():
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    folder, _, uses = line.partition(":")
    allowed[folder.strip()] = {u for u in uses.split() if u}

problems = []
include = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
for path in sorted((root / "src").rglob("*")):
    if path.suffix not in (".cpp", ".hpp", ".h"):
        continue
    rel = path.relative_to(root / "src")
    if len(rel.parts) < 2:
        continue  # src/main.cpp: the program, above every folder
    folder = rel.parts[0]
    if folder not in allowed:
        problems.append(f"src/{rel}: folder {folder}/ is not in docs/architecture.md's map")
        continue
    for number, text in enumerate(path.read_text().splitlines(), 1):
        m = include.match(text)
        if not m:
            continue
        target = m.group(1)
        if target != folder and target not in allowed[folder]:
            problems.append(
                f"src/{rel}:{number}: {folder}/ may not include {target}/ ({text.strip()})")

for p in problems:
    print(p)
folders = sum(1 for f in allowed)
print(f"{folders} folders, {len(problems)} forbidden includes")
sys.exit(1 if problems else 0)
