#!/usr/bin/env python3
"""lint.py: the rules of the code's layout, checked mechanically (ctest label lint).

    tests/tools/lint.py SRCDIR               check the tree; the problems, one per line, exit 1
    tests/tools/lint.py --self-test SRCDIR   plant each kind of problem in a copy and see it caught
    tests/tools/lint.py --home BIN           run every command of BIN with HOME and the XDG
                                             folders empty and read-only, and (as root) with a
                                             user's writable HOME and no XDG variables, as
                                             sudo -E runs it: nothing may be written there,
                                             and the output is the same

The rules (docs/architecture.md, "The rules, checked"):
  1. layers: src/<layer>/*.c, lowest first base < input < plan < {out, node} < sync < cli < main.c
     (src/gen/, build-time generators, sit with plan). Each header's first comment names its
     layer ("name.h: layer plan."), and a header is named after a module of that layer's folder.
  2. includes go down: a file includes headers of its own layer or lower ones; out/ and node/
     never include each other's; out/ and node/ see the plan document (plan.h) and the site
     values (site.h), never the loader or the resolver.
  3. no include circle between modules.
  4. sizes: no .c file over 1,000 lines; no function over 100 lines except those listed in
     tests/tools/long-functions.txt with their length, a list that may only shrink.
  5. no hidden state: no assignment to stdout or stderr.
  6. the library never exits: no exit() anywhere, abort() only in base/arena.c, the NPL_EXIT_*
     codes only in cli/ and main.c; fork() and _exit() only in node/proc.c, the one process runner.
  7. one allocation-failure path: malloc, calloc, realloc, strdup and strndup are called only in
     base/arena.c (npl_xmalloc and the others, which end the program on running out of memory).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LAYERS = ["base", "input", "plan", "out", "node", "sync", "cli", "main"]
RANK = {"base": 0, "input": 1, "plan": 2, "out": 3, "node": 3, "sync": 4, "cli": 5, "main": 6, "gen": 2}
# headers out/ and node/ may include from the layers below them other than base
PLAN_VIEW = {"plan.h", "site.h"}
MAX_FILE = 1000
MAX_FUNC = 100
# headers of no module: tables generated at build time
DATA_HEADERS = {"embedded.h": "base"}


def strip_c(text):
    """Comments and string/char literals blanked (newlines kept), so that counts and greps see code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Tree:
    def __init__(self, root):
        self.root = root
        self.problems = []

    def bad(self, where, msg):
        self.problems.append("%s: %s" % (where, msg))

    def rel(self, p):
        return os.path.relpath(p, self.root)

    def sources(self):
        """(path, layer) of every .c and private .h under src/."""
        src = os.path.join(self.root, "src")
        for d in sorted(os.listdir(src)):
            full = os.path.join(src, d)
            if os.path.isdir(full):
                if d not in RANK:
                    self.bad("src/" + d, "a folder that is not a layer (%s)" % ", ".join(LAYERS[:-1]))
                    continue
                for f in sorted(os.listdir(full)):
                    if f.endswith((".c", ".h")):
                        yield os.path.join(full, f), d
            elif d.endswith(".c"):
                if d != "main.c":
                    self.bad("src/" + d, "a source file outside the layer folders")
                yield full, "main"

    def headers(self):
        inc = os.path.join(self.root, "include", "npulaunch")
        return sorted(os.path.join(inc, f) for f in os.listdir(inc) if f.endswith(".h"))

    def header_layers(self, src_files):
        """The layer of each public header, from its first comment, checked against its module."""
        modules = {}
        for path, layer in src_files:
            if path.endswith(".c"):
                modules.setdefault(os.path.basename(path)[:-2], layer)
        layers = {}
        for h in self.headers():
            name = os.path.basename(h)
            text = open(h, encoding="utf-8").read()
            m = re.match(r"\s*/\*[\s*]*" + re.escape(name) + r": layer (\w+)\.", text)
            if not m:
                self.bad(self.rel(h) + ":1", "the first comment does not name the layer ('%s: layer L.')" % name)
                continue
            layer = m.group(1)
            if layer not in RANK or layer in ("main", "gen"):
                self.bad(self.rel(h) + ":1", "'%s' is not a layer" % layer)
                continue
            mod = name[:-2]
            if DATA_HEADERS.get(name) == layer:
                pass
            elif mod not in modules:
                self.bad(self.rel(h), "no module src/%s/%s.c: a header is named after the module it exports" % (layer, mod))
            elif modules[mod] != layer:
                self.bad(self.rel(h) + ":1", "says layer %s, but %s.c is in src/%s/" % (layer, mod, modules[mod]))
            layers[name] = layer
        return layers

    def includes(self, path):
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m:
                    yield no, m.group(1)

    def check_includes(self, src_files, hlayers):
        """Rule 2, and the module graph for rule 3."""
        edges = {}
        files = [(p, l) for p, l in src_files] + [(h, hlayers.get(os.path.basename(h))) for h in self.headers()]
        for path, layer in files:
            if layer is None:
                continue
            base = os.path.basename(path)
            me = module_of(path)
            for no, inc in self.includes(path):
                where = "%s:%d" % (self.rel(path), no)
                if not inc.startswith("npulaunch/"):
                    if os.path.dirname(inc) or not os.path.exists(os.path.join(os.path.dirname(path), inc)):
                        if inc != "npl_version.h":
                            self.bad(where, "includes \"%s\": a private header lives beside its users" % inc)
                    continue
                h = inc[len("npulaunch/"):]
                hl = hlayers.get(h)
                if hl is None:
                    if not os.path.exists(os.path.join(self.root, "include", inc)):
                        self.bad(where, "includes \"%s\", which does not exist" % inc)
                    continue
                if RANK[hl] > RANK[layer]:
                    self.bad(where, "includes %s of layer %s from layer %s: includes go down "
                             "(base < input < plan < {out, node} < sync < cli < main.c)" % (h, hl, layer))
                elif {hl, layer} == {"out", "node"}:
                    self.bad(where, "includes %s: out/ and node/ never include each other" % h)
                elif layer in ("out", "node") and hl in ("input", "plan") and h not in PLAN_VIEW:
                    self.bad(where, "includes %s: out/ and node/ see the plan through %s only"
                             % (h, " and ".join(sorted(PLAN_VIEW))))
                dep = h[:-2]
                if dep != me and base != h:
                    edges.setdefault(me, {}).setdefault(dep, where)
        return edges

    def check_cycles(self, edges):
        index, low, stack, on, sccs = {}, {}, [], set(), []
        counter = [0]

        def strong(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in sorted(edges.get(v, {})):
                if w not in index:
                    strong(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))

        sys.setrecursionlimit(10000)
        for v in sorted(edges):
            if v not in index:
                strong(v)
        for comp in sccs:
            ways = ["%s -> %s (%s)" % (a, b, edges[a][b]) for a in comp for b in sorted(edges.get(a, {})) if b in comp]
            self.bad("include circle", " ".join(comp) + ": " + "; ".join(ways))

    def check_sizes(self, src_files, listed):
        seen = {}
        for path, _ in src_files:
            if not path.endswith(".c"):
                continue
            text = open(path, encoding="utf-8").read()
            nlines = text.count("\n")
            if nlines > MAX_FILE:
                self.bad(self.rel(path), "%d lines: split it along its seams (at most %d)" % (nlines, MAX_FILE))
            for name, start, length in functions(strip_c(text)):
                key = "%s:%s" % (self.rel(path), name)
                if length <= MAX_FUNC:
                    continue
                seen[key] = length
                if key not in listed:
                    self.bad("%s:%d" % (self.rel(path), start),
                             "%s() is %d lines (at most %d; the list of longer ones only shrinks)" % (name, length, MAX_FUNC))
                elif length > listed[key]:
                    self.bad("%s:%d" % (self.rel(path), start),
                             "%s() grew from %d to %d lines (a listed long function may only shrink)" % (name, listed[key], length))
        for key, length in sorted(listed.items()):
            if key not in seen:
                self.bad("tests/tools/long-functions.txt",
                         "%s is no longer over %d lines (or gone): take it off the list" % (key, MAX_FUNC))
            elif seen[key] < length:
                self.bad("tests/tools/long-functions.txt",
                         "%s is %d lines now, listed as %d: lower its entry" % (key, seen[key], length))

    def check_state_and_exits(self, src_files):
        for path, layer in src_files:
            code = strip_c(open(path, encoding="utf-8").read())
            rel = self.rel(path)
            for no, line in enumerate(code.split("\n"), 1):
                where = "%s:%d" % (rel, no)
                if re.search(r"\b(stdout|stderr|stdin)\s*=(?!=)", line):
                    self.bad(where, "assigns to a standard stream: pass a FILE * instead")
                if re.search(r"(?<![\w.>])exit\s*\(", line):
                    self.bad(where, "calls exit(): the library returns, main() chooses the exit code")
                if re.search(r"\babort\s*\(", line) and not rel.endswith("base/arena.c"):
                    self.bad(where, "calls abort(): only base/arena.c does, on running out of memory")
                if re.search(r"\bNPL_EXIT_\w+", line) and layer not in ("cli", "main"):
                    self.bad(where, "uses an exit code: only cli/ and main.c choose them")
                if re.search(r"(?<![\w.>])(malloc|calloc|realloc|strdup|strndup)\s*\(", line) and \
                        not rel.endswith("base/arena.c"):
                    self.bad(where, "allocates by hand: npl_xmalloc() and the others of arena.h are the one "
                             "allocation-failure path")
            if not rel.endswith("node/proc.c"):
                for no, line in enumerate(code.split("\n"), 1):
                    if re.search(r"\b(v?fork|_exit|posix_spawnp?)\s*\(", line):
                        self.bad("%s:%d" % (rel, no), "starts or ends a child by hand: node/proc.c's npl_proc_spawn() is the one process runner")


def module_of(path):
    return os.path.splitext(os.path.basename(path))[0]


def functions(code):
    """(name, first line, lines) of each function defined at file scope of stripped C code."""
    lines = code.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("{"):
            # the signature: back to the line that names the function
            j = i - 1
            while j > 0 and not re.match(r"[A-Za-z_].*\(", lines[j]):
                j -= 1
            m = re.search(r"([A-Za-z_]\w*)\s*\(", lines[j])
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if m and not lines[j].rstrip().endswith(("=", ";")) and "=" not in lines[j].split("(")[0]:
                out.append((m.group(1), j + 1, k - j + 1))
            i = k + 1
        else:
            i += 1
    return out


def read_list(root):
    listed = {}
    path = os.path.join(root, "tests", "tools", "long-functions.txt")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            line = line.split("#", 1)[0].strip()
            if line:
                key, length = line.rsplit(None, 1)
                listed[key] = int(length)
    return listed


def lint(root):
    t = Tree(root)
    src_files = list(t.sources())
    hlayers = t.header_layers(src_files)
    edges = t.check_includes(src_files, hlayers)
    t.check_cycles(edges)
    t.check_sizes(src_files, read_list(root))
    t.check_state_and_exits(src_files)
    return t.problems


# ---- --home: nothing written under HOME or the XDG folders ------------------------------------

def home_runs(tmp):
    """Every command, as a user runs it: (argv, the exit codes it may end with). Relative paths are
    under tmp, the working folder; the pages are the project's test data."""
    pages = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pages", "upstream-2026")
    kimi = ["kimi-k2.6", "--tpot", "20ms"]
    nothing = os.path.join(tmp, "nothing")
    return [(["--help"], {0}), (["--version"], {0}), (["list"], {0}), (["list", "--json"], {0}),
            (["show"] + kimi, {0}), (["show", "--json"] + kimi, {0}), (["show", "--explain"] + kimi, {0}),
            (["diff", "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"], {0}),
            (["validate"], {0}),
            (["render"] + kimi + ["-o", "out"], {0}), (["render"] + kimi + ["--target", "k8s", "--model-path", "/m", "--draft-model-path", "/d", "--ifname", "eth0",
                         "-o", "k8s"], {0}),
            (["render"] + kimi + ["-o", "out", "--check"], {0}),
            (["apply", "--dry-run", "out"], {0, 1, 2}), (["bench", "--dry-run", "out"], {0}),
            (["preflight", "--root", nothing, "out"], {0, 1, 2}),
            (["tune", "--dry-run", "--root", nothing], {0, 1}), (["tune", "--check", "--root", nothing], {0, 1}),
            (["status", "--timeout", "1", "out"], {0, 1}), (["verify", "out"], {0, 1, 2}),
            (["import", os.path.join(pages, "glm_5_2.mdx"), "-o", "imported"], {0}),
            (["drift", os.path.join(pages, "kimi_k2_6.mdx")], {0, 1})]


def home_check(binary, readonly=True, owner=None):
    """Run every command with an empty HOME (and, unless owner is given, empty XDG folders): they
    must stay empty and the output must be what it is with another HOME. readonly: the folders
    are read-only. owner: a uid the folders belong to, with no XDG variables set, as `sudo -E`
    leaves a user's HOME to root; they must still belong to it."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        if owner is None:
            xdg = {k: os.path.join(home, d) for k, d in (("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"),
                                                        ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"))}
        else:
            xdg = {}
        os.makedirs(home)
        for d in xdg.values():
            os.makedirs(d)
        if readonly:
            for d in [home] + list(xdg.values()):
                os.chmod(d, 0o555)
        if owner is not None:
            os.chown(home, owner, owner)
        base = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        env = dict(base, HOME=home, **xdg)
        plain = dict(base, HOME=os.path.join(tmp, "other"))
        for argv, rcs in home_runs(tmp):
            outs = []
            for e in (env, plain):
                if argv[0] in ("render", "import") and argv[-1] != "--check":
                    shutil.rmtree(os.path.join(tmp, argv[-1]), ignore_errors=True)
                outs.append(subprocess.run([binary] + argv, env=e, cwd=tmp, capture_output=True, timeout=120))
            a, b = outs
            if a.returncode not in rcs:
                problems.append("%s: exit %d with HOME %s: %s" % (" ".join(argv), a.returncode, home,
                                                                   a.stderr.decode(errors="replace")[:300]))
            if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
                problems.append("%s: prints otherwise with HOME %s" % (" ".join(argv), home))
        for d in [home] + list(xdg.values()):
            os.chmod(d, 0o755)
        if owner is not None and os.stat(home).st_uid != owner:
            problems.append("HOME no longer belongs to uid %d" % owner)
        for dirpath, dirs, files in os.walk(home):
            for f in dirs + files:
                p = os.path.join(dirpath, f)
                if p not in xdg.values() and not any(v.startswith(p + "/") for v in xdg.values()):
                    problems.append("wrote %s under HOME" % os.path.relpath(p, home))
    return problems


# ---- --self-test: every rule seen failing ---------------------------------------------------------

def plant(root, rel, edit):
    path = os.path.join(root, rel)
    text = open(path, encoding="utf-8").read()
    open(path, "w", encoding="utf-8").write(edit(text))


def add_include(h):
    def edit(text):
        return re.sub(r'(#include "npulaunch/[^"]+"\n)', r'\1#include "npulaunch/%s"\n' % h, text, count=1)
    return edit


def self_test(root):
    listed = read_list(root)
    long_fn = sorted(listed)[0] if listed else None
    cases = [
        ("an include circle", "include circle",
         [("include/npulaunch/text.h", add_include("diag.h"))]),
        ("an upward include", "includes go down",
         [("src/base/buf.c", add_include("recipe.h"))]),
        ("out/ including node/", "never include each other",
         [("src/out/template.c", add_include("tune.h"))]),
        ("out/ including the loader", "see the plan through",
         [("src/out/template.c", add_include("recipe.h"))]),
        ("a 1,001-line file", "1001 lines",
         [("src/base/sha256.c", lambda t: t + "\n" * (1001 - t.count("\n")))]),
        ("a new long function", "is 101 lines",
         [("src/base/sha256.c", lambda t: t + "int npl_planted(void);\nint npl_planted(void)\n{\n" + "\t;\n" * 98 + "}\n")]),
        ("an assignment to stdout", "standard stream",
         [("src/base/sha256.c", lambda t: t + "void npl_planted(void);\nvoid npl_planted(void)\n{\n\tstdout = 0;\n}\n")]),
        ("exit() in the library", "calls exit()",
         [("src/base/sha256.c", lambda t: t + "void npl_planted(void);\nvoid npl_planted(void)\n{\n\texit(1);\n}\n")]),
        ("a malloc() of its own", "allocates by hand",
         [("src/base/sha256.c", lambda t: t + "void *npl_planted(void);\nvoid *npl_planted(void)\n{\n\treturn malloc(1);\n}\n")]),
        ("a fork() of its own", "one process runner",
         [("src/node/health.c", lambda t: t + "int npl_planted(void);\nint npl_planted(void)\n{\n\treturn fork();\n}\n")]),
        ("a header without its layer", "name the layer",
         [("include/npulaunch/sha256.h", lambda t: t.replace("sha256.h: layer base.", "sha256.h:", 1))]),
    ]
    if long_fn:
        path, name = long_fn.split(":")

        def grow(t, name=name):
            m = re.search(r"\n(\S[^\n]*\b%s\([^\n]*\n(?:[^\n]*\n)*?)\{\n" % re.escape(name), t)
            return t[:m.end()] + "\t;\n" + t[m.end():]
        cases.append(("a listed long function grown by a line", "grew from", [(path, grow)]))
    else:
        # the list is empty: list a planted 110-line function, then plant it one line longer
        cases.append(("a listed long function grown by a line", "grew from",
                      [("tests/tools/long-functions.txt", lambda t: t + "src/base/sha256.c:npl_planted 110\n"),
                       ("src/base/sha256.c", lambda t: t + "int npl_planted(void);\nint npl_planted(void)\n{\n" +
                        "\t;\n" * 108 + "}\n")]))
    failed = []
    for what, expect, plants in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for d in ("src", "include", "tests/tools"):
                shutil.copytree(os.path.join(root, d), os.path.join(tmp, d))
            for rel, edit in plants:
                plant(tmp, rel, edit)
            problems = lint(tmp)
            hit = [p for p in problems if expect in p]
            print("%-45s %s" % (what, "caught: " + hit[0] if hit else "NOT CAUGHT"))
            if not hit:
                failed.append(what)
    # a write under HOME: a stand-in binary that runs the real one and leaves a file behind
    binary = os.environ.get("NPULAUNCH")
    if binary:
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "npulaunch")
            open(fake, "w").write('#!/bin/sh\nc=${XDG_CACHE_HOME:-$HOME/.cache}\nmkdir -p "$c/npulaunch" 2>/dev/null && '
                                  ': > "$c/npulaunch/planted" 2>/dev/null\nexec "%s" "$@"\n' % binary)
            os.chmod(fake, 0o755)
            # writable folders, so that the planted write lands as an ordinary user too; as root,
            # also a user's HOME with no XDG variables (sudo -E)
            for what, kw in (("a write under HOME", {}), ("a write under a user's HOME as root", {"owner": 65534})):
                if kw and os.geteuid() != 0:
                    continue
                problems = home_check(fake, readonly=False, **kw)
                hit = [p for p in problems if "wrote" in p]
                print("%-45s %s" % (what, "caught: " + hit[0] if hit else "NOT CAUGHT"))
                if not hit:
                    failed.append(what)
    # and the tree itself is clean
    clean = lint(root)
    if clean:
        failed.append("the tree itself")
        print("\n".join(clean))
    return failed


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        failed = self_test(argv[2])
        if failed:
            print("lint --self-test: not caught: " + ", ".join(failed), file=sys.stderr)
            return 1
        return 0
    if len(argv) == 3 and argv[1] == "--home":
        problems = home_check(argv[2])
        if os.geteuid() == 0:
            # root with a user's HOME and no XDG variables (sudo -E): nothing of the user's changes
            problems += home_check(argv[2], readonly=False, owner=65534)
    elif len(argv) == 2 and not argv[1].startswith("-"):
        problems = lint(argv[1])
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
