#!/usr/bin/env python3
"""Checks the layering of core/ that docs/architecture.md describes, so a stray include fails CI:

- nothing directly in core/ but CMakeLists.txt;
- a core library includes only its own headers and the public headers ("ckpt/<lib>/...") of the
  libraries its CMakeLists.txt links, directly or through them;
- a public header includes no internal header;
- nothing outside core/ includes a core file by its path ("core/...") or a core internal header;
- the libraries' dependencies form no cycle;
- no file outside core/frameworks/ tests a layout value (Layout::Lightning...) but those the move of
  issue 36 has not reached yet, listed below; the list only shrinks: a listed file that no longer
  tests one fails too, so that it is struck off.
Prints every violation and exits 1 if there is one."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..'))
core = os.path.join(root, 'core')
problems = []

stray = [n for n in os.listdir(core) if os.path.isfile(os.path.join(core, n)) and n != 'CMakeLists.txt']
problems += [f'core/{n}: only CMakeLists.txt may sit directly in core/' for n in stray]

libs = sorted(d for d in os.listdir(core) if os.path.isdir(os.path.join(core, d)))
deps = {}
for lib in libs:
    cmake = open(os.path.join(core, lib, 'CMakeLists.txt')).read()
    linked = re.findall(r'target_link_libraries\(ckpt_' + lib + r'\s+(?:PUBLIC|PRIVATE)\s+([^)]*)\)', cmake)
    deps[lib] = {w[len('ckpt_'):] for line in linked for w in line.split() if w.startswith('ckpt_')}


def reach(lib, seen=()):
    if lib in seen:
        problems.append('dependency cycle: ' + ' -> '.join(seen + (lib,)))
        return set()
    out = set()
    for d in deps.get(lib, ()):
        out |= {d} | reach(d, seen + (lib,))
    return out


allowed = {lib: reach(lib) | {lib} for lib in libs}
include_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
internal = set()  # basenames of internal headers, to catch them included from elsewhere
for lib in libs:
    for name in os.listdir(os.path.join(core, lib)):
        if name.endswith('.h'):
            internal.add(name)


def sources(top):
    for dirpath, _, names in os.walk(top):
        for n in names:
            if n.endswith(('.h', '.cpp')):
                yield os.path.join(dirpath, n)


for lib in libs:
    libdir = os.path.join(core, lib)
    for path in sources(libdir):
        rel = os.path.relpath(path, root)
        public = os.path.relpath(path, libdir).split(os.sep)[0] == 'include'
        for inc in include_re.findall(open(path, encoding='utf-8', errors='replace').read()):
            m = re.match(r'ckpt/([a-z_]+)/', inc)
            if m:
                if m.group(1) not in allowed[lib]:
                    problems.append(f'{rel}: includes {inc}, but ckpt_{lib} does not link ckpt_{m.group(1)}')
            elif public:
                problems.append(f'{rel}: a public header includes "{inc}", which is not a public header')
            elif not os.path.exists(os.path.join(os.path.dirname(path), inc)):
                problems.append(f'{rel}: includes "{inc}", which is not beside it (another folder\'s internal header?)')

for top in ('app', 'ui', 'tests'):
    for path in sources(os.path.join(root, top)):
        rel = os.path.relpath(path, root)
        for inc in include_re.findall(open(path, encoding='utf-8', errors='replace').read()):
            if inc.startswith('core/'):
                problems.append(f'{rel}: includes "{inc}" by its path; use the public "ckpt/<lib>/..." header')
            elif '/' not in inc and inc in internal and not os.path.exists(os.path.join(os.path.dirname(path), inc)):
                problems.append(f'{rel}: includes core\'s internal header "{inc}"')

# What each framework's adapter (core/frameworks/<name>/) should answer, still asked of a layout value
# here: none since issue 36's second step. Should a move ever need a file to test a layout for a
# while, list it here and strike it off when its tests move behind the adapters.
LAYOUT_TESTS_TO_MOVE = set()
layout_value = re.compile(r'\bLayout::(?!Generic;)[A-Z][A-Za-z]*')
testing = set()
for top in ('core', 'app', 'ui'):
    for path in sources(os.path.join(root, top)):
        rel = os.path.relpath(path, root).replace(os.sep, '/')
        if rel.startswith('core/frameworks/'):
            continue
        if layout_value.search(open(path, encoding='utf-8', errors='replace').read()):
            testing.add(rel)
for rel in sorted(testing - LAYOUT_TESTS_TO_MOVE):
    problems.append(f'{rel}: tests a layout value; ask the framework registry (ckpt/frameworks/framework_registry.h) instead')
for rel in sorted(LAYOUT_TESTS_TO_MOVE - testing):
    problems.append(f'{rel}: no longer tests a layout value; strike it off LAYOUT_TESTS_TO_MOVE')

for p in problems:
    print(p)
print(f'check_architecture: {len(libs)} core libraries, {len(problems)} violations')
sys.exit(1 if problems else 0)
