#!/usr/bin/env python3
"""The layout of the tree as docs/architecture.md draws it: rooms, their order, their size.

Includes that go up or round in a circle between the rooms of the libraries fail:
docs/architecture.md lists, under "## Rooms", each library's rooms from the bottom up
(lines "- `path/` — what it holds", under a "### library" heading); a room may include
only from rooms listed above it in its library, and from the libraries its library may
include (common < faults, bench, reports < harness; faults, bench and reports never
include each other). Every `#include "..."` of a project file in the five libraries is
checked against that order. A folder that holds sources but is not in the list fails
too, so a new room is placed, and described, when it is made. And so does a folder of the
tree with more than 40 files at one level (it wants rooms), a library in rooms whose top
holds more than 10 files, and a script at the top of bench/ (the tool's benchmarks live
in perf/).

Usage: layout_check.py [ROOT]. Prints each violation; exit 1 when any, else 0.
"""
import os
import re
import sys

LIBRARIES = ['common', 'faults', 'bench', 'reports', 'harness']
MAY_INCLUDE = {
    'common': set(),
    'faults': {'common'},
    'bench': {'common'},
    'reports': {'common'},
    'harness': {'common', 'faults', 'bench', 'reports'},
}
SOURCE = ('.h', '.cc', '.cu')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rooms_of(doc):
    """{library: [room, ...] bottom up} from the "## Rooms" section of the document."""
    text = open(doc).read()
    start = text.index('\n## Rooms')
    end = text.find('\n## ', start + 1)
    section = text[start:end if end > 0 else len(text)]
    rooms, library = {}, None
    for line in section.splitlines():
        heading = re.match(r'### (\w+)\s*$', line)
        if heading:
            library = heading.group(1)
            rooms[library] = []
            continue
        room = re.match(r'- `([a-z0-9_/]+?)/?`', line)
        if room and library:
            rooms[library].append(room.group(1).rstrip('/'))
    return rooms


def main(root):
    rooms = rooms_of(os.path.join(root, 'docs', 'architecture.md'))
    rank = {room: (lib, i) for lib, names in rooms.items() for i, room in enumerate(names)}
    problems = []
    for lib in LIBRARIES:
        if lib not in rooms:
            problems.append(f'docs/architecture.md: no "### {lib}" list of rooms')
    for lib in LIBRARIES:
        for folder, _, files in sorted(os.walk(os.path.join(root, lib))):
            sources = sorted(f for f in files if f.endswith(SOURCE))
            if not sources:
                continue
            here = os.path.relpath(folder, root)
            if here not in rank:
                problems.append(f'{here}/: a room not in docs/architecture.md "## Rooms" (place it in its library\'s '
                                f'list, bottom up, with a line on what it holds)')
                continue
            own = rank.get(here, (lib, 0))
            for name in sources:
                path = os.path.join(folder, name)
                for target in INCLUDE.findall(open(path, errors='replace').read()):
                    if not os.path.isfile(os.path.join(root, target)):
                        continue  # a system header, a generated one, or one next to it by name
                    there = os.path.dirname(target)
                    if there == here:
                        continue
                    other_lib = target.split('/')[0]
                    if other_lib != lib:
                        if other_lib not in MAY_INCLUDE[lib]:
                            problems.append(f'{here}/{name}: includes {target}: {lib}/ may not include {other_lib}/')
                        continue
                    other = rank.get(there)
                    if other is None:
                        continue  # reported as a room of its own
                    if other[1] >= own[1]:
                        problems.append(f'{here}/{name}: includes {target}, but {there}/ is not below {here}/ in '
                                        f'docs/architecture.md')
    problems += sizes(root, {lib for lib, names in rooms.items() if len(names) > 1})
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} problem(s) with the layout docs/architecture.md draws')
    return 1 if problems else 0


MAX_FILES = 40      # files at one level of a folder
MAX_LIBRARY_TOP = 10
SKIP = {'.git', 'build', 'node_modules'}


def sizes(root, with_rooms):
    """Folders of the tree too full to find one's way in, and scripts where workloads live.
    A library in rooms keeps its top for its build file and little else."""
    problems = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.startswith('build')]
        here = os.path.relpath(folder, root)
        if len(files) > MAX_FILES:
            problems.append(f'{here}/: {len(files)} files at one level, more than {MAX_FILES}: it wants rooms')
        if here in with_rooms and len(files) > MAX_LIBRARY_TOP:
            problems.append(f'{here}/: {len(files)} files at its top, more than {MAX_LIBRARY_TOP}: put them in rooms')
        if here == 'bench':
            problems += [f'bench/{f}: a script among the workloads (the tool\'s benchmarks live in perf/)'
                         for f in files if f.endswith(('.sh', '.py'))]
    return problems


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')))
