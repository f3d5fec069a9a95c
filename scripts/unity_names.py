#!/usr/bin/env python3
"""Names that could meet in a unity batch (cmake/unity_folders.cmake batches the .cc files
of one folder together): a name declared at namespace scope inside an anonymous namespace,
or `static` at namespace scope, in two .cc files of one folder of a library. An alias
(`using X = T;`, `namespace x = y;`) may repeat when it names the same thing; macros
(ALL_CAPS) are the preprocessor's. A heuristic reader of C++, not a parser: it sees
declarations by their shape at the top level of namespaces.
Usage: unity_names.py [ROOT]. Prints each clash; exit 1 when any, else 0."""
import os, re, sys, collections

LIBS = ['common', 'faults', 'bench', 'reports', 'harness']

def strip(src):
    # comments, strings, chars -> spaces (keep newlines)
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i); j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif src.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', src[i:])
            end = src.find(')' + m.group(1) + '"', i) + len(m.group(1)) + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:end])); i = end
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            out.append(' ' * (j + 1 - i)); i = j + 1
        elif c == '#':  # preprocessor line
            j = src.find('\n', i); j = n if j < 0 else j
            while src[j - 1] == '\\' and j < n:
                j2 = src.find('\n', j + 1); j = n if j2 < 0 else j2
            out.append(' ' * (j - i)); i = j
        else:
            out.append(c); i += 1
    return ''.join(out)

DECL = re.compile(r'(?:\b(?:struct|class|union|enum(?:\s+class)?)\s+([A-Za-z_]\w*)\s*(?:final\s*)?[:{;])'
                  r'|(?:\busing\s+([A-Za-z_]\w*)\s*=)'
                  r'|(?:\bnamespace\s+([A-Za-z_]\w*)\s*=)'
                  r'|(?:([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*(?:=|\{|\())')

def names_in(text):
    """Declarations at the top level of anonymous namespaces, and static ones at namespace scope."""
    found = set()
    # tokens of braces with context
    depth = 0
    stack = []  # kinds: 'anon', 'ns', 'other'
    i = 0
    stmt_start = 0
    for m in re.finditer(r'[{};]', text):
        ch = m.group()
        pos = m.start()
        if ch == '{':
            head = text[stmt_start:pos]
            if re.search(r'\bnamespace\s*$', head) or re.fullmatch(r'\s*namespace\s*', head.split(';')[-1] if head else ''):
                kind = 'anon'
            elif re.search(r'\bnamespace\s+[\w:]+\s*$', head) or re.search(r'\bextern\s+"?C?"?\s*$', head):
                kind = 'ns'
            else:
                kind = 'other'
                if stack and all(k in ('anon', 'ns') for k in stack):
                    inside_anon = 'anon' in stack
                    record(head, found, inside_anon)
            stack.append(kind)
            stmt_start = pos + 1
        elif ch == '}':
            if stack: stack.pop()
            stmt_start = pos + 1
        else:  # ';'
            if stack is not None and all(k in ('anon', 'ns') for k in stack):
                head = text[stmt_start:pos]
                record(head, found, 'anon' in stack)
            stmt_start = pos + 1
    return found

def record(head, found, inside_anon):
    h = ' '.join(head.split())
    if not h or h.startswith(('using namespace', 'template <', 'friend')) and not h.startswith('template <'):
        pass
    static = re.match(r'(?:template\s*<[^>]*>\s*)?(?:inline\s+)?static\b', h) is not None
    if not (inside_anon or static): return
    if re.match(r'using\s+namespace\b', h) or re.match(r'(?:extern\b|typedef\b)', h) and not inside_anon: return
    m = re.match(r'(?:template\s*<.*?>\s*)?(?:struct|class|union|enum(?:\s+class)?)\s+([A-Za-z_]\w*)', h)
    if m: found.add(m.group(1)); return
    m = re.match(r'using\s+([A-Za-z_]\w*)\s*=\s*(.*)', h) or re.match(r'namespace\s+([A-Za-z_]\w*)\s*=\s*(.*)', h)
    if m:  # the aliased name's last component: `nlohmann::json` and `json` name the same
        found.add(m.group(1) + ' = ' + re.split(r'::', ''.join(m.group(2).split()))[-1]); return
    if re.match(r'using\s+[\w:]+::\w+$', h): return  # a using-declaration may repeat
    # function or variable: the declarator name is the last identifier before '(' / '=' / '{' / '[' at top level
    core = re.split(r'\s*(?:=|\{)', h, maxsplit=1)[0]
    paren = core.find('(')
    if paren >= 0: core = core[:paren]
    core = re.sub(r'\[[^\]]*\]', '', core).strip()
    m = re.search(r'(?:operator\s*\S+|[A-Za-z_]\w*)\s*$', core)
    if m and not m.group().startswith('operator'):
        name = m.group().strip()
        if name not in ('const', 'constexpr', 'static', 'inline', 'noexcept', 'override', 'void', 'static_assert') \
                and not re.fullmatch(r'[A-Z][A-Z0-9_]+', name):
            found.add(name)

def main(root):
    clashes = 0
    for lib in LIBS:
        for dp, dn, fn in sorted(os.walk(os.path.join(root, lib))):
            where = collections.defaultdict(list)
            for f in sorted(fn):
                if not f.endswith('.cc'): continue
                p = os.path.join(dp, f)
                for name in names_in(strip(open(p, errors='replace').read())):
                    where[name.split(' = ')[0]].append((name, os.path.relpath(p, root)))
            for name, uses in sorted(where.items()):
                if len(uses) > 1 and len({n for n, _ in uses}) + (0 if ' = ' in uses[0][0] else 1) > 1:
                    clashes += 1
                    print(f'{os.path.relpath(dp, root)}: {name}: ' + ', '.join(f for _, f in uses))
    if clashes:
        print(f'{clashes} name(s) declared in more than one .cc file of a folder: rename them apart, or '
              'share one definition (cmake/unity_folders.cmake)')
    return 1 if clashes else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
