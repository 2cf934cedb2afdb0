#!/usr/bin/python3
"""doc_examples.py: run every npulaunch example of README.md, docs/*.md and the man page's
EXAMPLES, as a user would copy it, in a sandbox of its own, and compare what it prints with what
the documentation shows.

usage: doc_examples.py SRC NPL SANDBOX-TEMPLATE

Examples are the command lines in code blocks (``` fences; .nf/.fi in the man page) that run
npulaunch; "$ " marks one whose output the docs show (the lines after it, up to the next "$ "
line or the block's end; "..." stands for lines left out). Each runs in a fresh copy of the
template (a rendered PD bundle in deploy/, site.yaml, results files, a fake host root):
`sudo` is dropped, `cd` stays inside the copy, commands other than npulaunch are skipped, and
the time a command would wait is cut to a second. When run as root every example runs in a
network namespace of its own with loopback only, so no probe leaves the machine; otherwise the
examples that probe servers are skipped.

An example fails when npulaunch says its command line is wrong (exit 2 for a usage error, an
unknown option), or when a line the docs show is not in what it printed. Synopsis lines
(placeholders such as ID, [site values]) are skipped, as are lines with shell substitutions.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

SRC, NPL, TEMPLATE = sys.argv[1:4]
ROOT = os.geteuid() == 0 and shutil.which("unshare") is not None
PLACEHOLDER = re.compile(r"\b(ID|QUERY|DIR|FILE|COMMAND|URL|BUNDLE|ROLE|PCT|IN\+OUT)\b|\[[a-z ]+\]|\[ID\]|\.\.\.")
ROLE_IP = {"prefill": "10.0.0.11", "decode": "10.0.0.12"}


def blocks_md(path):
    """(line, text, shown-output lines) of each example in the fenced blocks of a Markdown file."""
    out, block, start = [], None, 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            if block is None:
                block, start = [], n + 1
            else:
                out += examples(path, start, block)
                block = None
            continue
        if block is not None:
            block.append(line.rstrip("\n"))
    return out


def blocks_man(path):
    out, block, start, in_examples = [], None, 0, False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.startswith(".SH"):
            in_examples = line.strip() == ".SH EXAMPLES"
        if not in_examples:
            continue
        if line.startswith(".nf"):
            block, start = [], n + 1
        elif line.startswith(".fi") and block is not None:
            out += examples(path, start, [l.replace("\\-", "-") for l in block])
            block = None
        elif block is not None:
            block.append(line.rstrip("\n"))
    return out


def examples(path, start, lines):
    """Join continued lines; an example is a line running npulaunch, with what follows it when '$ '."""
    ex, i = [], 0
    while i < len(lines):
        line, first = lines[i], start + i
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        i += 1
        text = line.strip()
        shown = text.startswith("$ ")
        if shown:
            text = text[2:]
        if not re.search(r"(^|&& |sudo )npulaunch ", text):
            continue
        output = []
        if shown:
            while i < len(lines) and not lines[i].strip().startswith("$ "):
                output.append(lines[i].rstrip())
                i += 1
        ex.append((f"{os.path.relpath(path, SRC)}:{first}", text, output))
    return ex


def run(where, text, output):
    """'' when the example runs as documented, else why not; None when skipped (with why)."""
    if "$(" in text or "`" in text:
        return None, "a shell substitution"
    try:
        words = shlex.split(text, comments=True)
    except ValueError as e:
        return f"cannot split: {e}", None
    if PLACEHOLDER.search(" ".join(words)):
        return None, "a synopsis (placeholders)"
    box = os.path.join(os.path.dirname(TEMPLATE), "run")
    shutil.rmtree(box, ignore_errors=True)
    shutil.copytree(TEMPLATE, box, symlinks=True)
    cwd, got, ran, probes = box, "", 0, False
    # "# ..., in the bundle: ..." says where the line runs: the rendered bundle
    comment = text.split(" #", 1)[1] if " #" in text else ""
    if "in the bundle" in comment:
        cwd = os.path.join(box, "deploy")
    # a shared file system's paths (/shared/deploy/m) are the sandbox's
    words = [box + w if w.startswith("/shared/deploy") else w for w in words]
    segs, seg = [], []
    for w in words + ["&&"]:
        if w in ("&&", ";"):
            segs.append(seg)
            seg = []
        else:
            seg.append(w)
    for seg in segs:
        if seg and seg[0] == "sudo":
            seg = seg[1:]
        if not seg:
            continue
        if seg[0] == "cd":
            cwd = os.path.normpath(os.path.join(cwd, seg[1] if len(seg) > 1 else "."))
            os.makedirs(cwd, exist_ok=True)
            if not cwd.startswith(box):
                return f"cd out of the sandbox: {seg}", None
            continue
        if seg[0] != "npulaunch":
            continue
        # a glob (pages/*.mdx) expands in the example's folder, as the shell would
        args = []
        for w in seg[1:]:
            hits = sorted(glob.glob(os.path.join(cwd, w))) if "*" in w else []
            args += [os.path.relpath(h, cwd) for h in hits] if hits else [w]
        argv = [NPL] + args
        cmd = seg[1] if len(seg) > 1 else ""
        if cmd == "wait" and "--timeout" in argv:
            argv[argv.index("--timeout") + 1] = "1"
        probes = probes or cmd in ("wait", "status") or (cmd == "apply" and "router" in seg)
        env = dict(os.environ)
        role = next((seg[j + 1] for j in range(len(seg) - 1) if seg[j] == "--role"), "decode")
        env.update(NPULAUNCH_ROOT=os.path.join(box, "root"), NPULAUNCH_PREFLIGHT="0", NPULAUNCH_WAIT_TIMEOUT="1",
                   NPULAUNCH_NODE_IP=ROLE_IP.get(role, "10.0.0.12"), NPL_STUB_LOG=os.path.join(box, "calls"),
                   PATH=os.path.join(box, "root.bin") + ":" + os.environ["PATH"])
        for a in argv[1:]:
            if a.startswith("/") and not a.startswith(("/m", "/d", "/data/", "/shared/models/")) and not a.startswith(box):
                return f"writes or reads outside the sandbox: {a}", None
        if probes and not ROOT:
            return None, "probes servers: needs root for a network namespace of its own"
        if ROOT:
            argv = ["unshare", "-n", "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh"] + argv
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
        ran += 1
        got += p.stdout + p.stderr
        if p.returncode == 2 or "unknown option" in p.stderr or "Try 'npulaunch" in p.stderr:
            return f"exit {p.returncode}: {p.stderr.strip()[-400:]}", None
        # an example shown without its output is one that works: 0, or 1 (differences, a miss,
        # a server down); 3 and 4 (no recipe, a tie) only where the docs show them
        if not output and p.returncode not in (0, 1):
            return f"exit {p.returncode}: {p.stderr.strip()[-400:]}", None
    if not ran:
        return None, "no npulaunch command to run"
    # the output the docs show: each line, in what it printed ("..." leaves lines out); a host's
    # own state (preflight, status, a cluster) is the docs' illustration, not this sandbox's
    if output and not re.search(r"\b(preflight|status|wait)\b", text):
        # whitespace aside: the docs indent blocks and wrap long lines
        flat = " ".join(got.split())
        for l in output:
            if l.strip() in ("", "...") or l.strip().startswith("..."):
                continue
            if " ".join(l.split()) not in flat:
                return f"the docs show a line it does not print: {l!r}\n--- it printed:\n{got[-1500:]}", None
    return "", None


def main():
    files = [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))
    exs = []
    for f in files:
        exs += blocks_md(f)
    exs += blocks_man(os.path.join(SRC, "docs", "npulaunch.1"))
    bad = ok = skipped = 0
    for where, text, output in exs:
        why, skip = run(where, text, output)
        if skip:
            skipped += 1
            print(f"skip {where}: {text}  ({skip})")
        elif why:
            bad += 1
            print(f"FAIL {where}: {text}\n     {why}")
        else:
            ok += 1
            print(f"ok   {where}: {text}")
    print(f"{ok} examples ran as documented, {bad} did not, {skipped} skipped")
    return 1 if bad or ok < 30 else 0


sys.exit(main())
