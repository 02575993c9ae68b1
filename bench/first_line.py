#!/usr/bin/env python3
"""first_line.py TIMEOUT PREFIX COMMAND...: runs COMMAND with its stdin held open and returns as
soon as the first line of its output arrives: exit 0 when that line starts with PREFIX, 1 when
it does not, when the command ends first or TIMEOUT seconds pass. The command is killed either
way. bench/run's state section times `bowline tunnel SPACE 22` with it until sshd's banner:
the moment SSH answers."""
import os
import select
import subprocess
import sys
import time


def main():
    timeout, prefix, command = float(sys.argv[1]), sys.argv[2].encode(), sys.argv[3:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    line = b""
    try:
        while b"\n" not in line:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([child.stdout], [], [], left)[0]:
                break
            chunk = os.read(child.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
    finally:
        child.kill()
        child.wait()
    sys.exit(0 if line.startswith(prefix) else 1)


if __name__ == "__main__":
    main()
