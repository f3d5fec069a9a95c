#!/usr/bin/env python3
"""Test names that CTest can register whole, in every test executable: the labelled
discovery (cmake/catch_labels.cmake) passes each name through a CMake list, which splits
on ';', and a cut name would match no test case. Also fails on an executable that lists
no test at all (a build that lost its sources).
Usage: test_names.py EXECUTABLE..."""
import subprocess
import sys

bad = 0
for exe in sys.argv[1:]:
    names = subprocess.run([exe, '--list-test-names-only'], capture_output=True, text=True, check=False).stdout
    names = [n for n in names.splitlines() if n]
    if not names:
        print(f'{exe}: lists no test')
        bad += 1
    for n in names:
        if ';' in n:
            print(f'{exe}: a test name with a semicolon: {n}')
            bad += 1
    print(f'{exe}: {len(names)} test names')
sys.exit(1 if bad else 0)
