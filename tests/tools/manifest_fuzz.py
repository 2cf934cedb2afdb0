#!/usr/bin/env python3
"""manifest_fuzz.py: a mutation fuzzer over the manifests a render writes (issue 25).

  manifest_fuzz.py NPL SRC WORKDIR [--seconds S] [--seed N] [--max N]

Renders real bundles from several recipes and targets (scripts, k8s, docker, slurm), mutates
their manifest.json (types swapped, fields deleted, huge and negative numbers, nested nulls,
long strings, unknown keys, hostile strings, duplicated items) and runs apply --dry-run,
bench --dry-run, verify, status and wait in each mutated bundle, each with a timeout. It fails
when a command is killed by a signal, hangs, prints a sanitizer report, fails without a message
(exit 1 of verify, status and wait is their verdict: a miss, an endpoint down), or when npulaunch's verdict on a manifest's shape differs from python3-jsonschema's
on docs/json/manifest.schema.json: a manifest the schema refuses must be refused by every
command with the located message (FILE: error: .PATH: ...), and one it accepts by none.

No request leaves the machine: every address in the bundles is 127.0.0.1 and every port one
this script holds bound without listening (so a connection is refused at once); when
`unshare -rn` works, the commands run in a network namespace of their own with loopback down,
where nothing can be reached at all; without it, status and wait run only on mutants whose
addresses, hosts and URLs were left alone or are 127.0.0.1 at a port held here.
"""
import copy
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time

import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

SCHEMA_MARK = re.compile(r"manifest\.json: error: (\.|not a npulaunch manifest)")
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|Segmentation fault")

RECIPES = [  # a PD-disaggregated and a PD-mixed deployment, and one with speculative decoding
    "deepseek-r1-w4a8-1p1d-16p-in3k5-out1k5-50ms",
    "deepseek-r1-w4a8-8p-in3k5-out1k5-50ms",
    "qwen3-8b-w8a8-1p-in3k5-out1k5-5ms",
]
TARGETS = ["scripts", "k8s", "docker", "slurm"]


def hold_port():
    """A 127.0.0.1 port of ours: bound, never listening, so a connection to it is refused."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    return s, s.getsockname()[1]


def validator(src):
    d = os.path.join(src, "docs", "json")
    show = json.load(open(os.path.join(d, "show.schema.json")))
    man = json.load(open(os.path.join(d, "manifest.schema.json")))
    reg = referencing.Registry().with_resources(
        [(s["$id"], DRAFT202012.create_resource(s)) for s in (show, man)])
    return jsonschema.Draft202012Validator(man, registry=reg)


def render(npl, work, env):
    bases = []
    for rid in RECIPES:
        for t in TARGETS:
            out = os.path.join(work, "base", "%s-%s" % (t, rid))
            cmd = [npl, "render", rid, "-o", out, "--model-path", "/m", "--draft-model-path", "/d",
                   "--ifname", "lo"]
            if t != "scripts":
                cmd += ["--target", t]
            if t in ("k8s", "docker"):
                cmd += ["--image", "img:1"]
            if t == "slurm":
                cmd += ["--slurm-partition", "p"]
            if t in ("scripts", "docker"):
                cmd += ["--prefill-ip", "127.0.0.1", "--decode-ip", "127.0.0.1", "--node-ip", "127.0.0.1"]
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                sys.exit("render failed: %s\n%s" % (" ".join(cmd), r.stderr))
            bases.append(out)
    return bases


def owned_ports(doc, port):
    """Every port of the plan (endpoints, --port and the like) becomes ours, every host 127.0.0.1."""
    ports = set()
    for r in doc["roles"]:
        for ep in r.get("endpoints", []):
            m = re.search(r":([0-9]+)$", ep["url"])
            ports.add(m.group(1))
            ep["url"] = ep["url"][:m.start(1)] + str(port)
    # the entry host of the cluster targets (0.0.0.0) becomes loopback's own address too
    text = json.dumps(doc).replace('"0.0.0.0', '"127.0.0.1').replace('//0.0.0.0:', '//127.0.0.1:')
    for p in sorted(ports, key=len, reverse=True):
        text = re.sub(r'(?<![0-9])%s(?![0-9])' % p, str(port), text)
    return json.loads(text)


def paths(node, at=()):
    yield at, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, at + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, at + (i,))


def get(doc, at):
    for k in at:
        doc = doc[k]
    return doc


ADDRESSY = re.compile(r"(^|\.)(site|address|url|endpoints)($|\.)|--host|ip\b")


def hostile(port):
    return [
        "", " ", "$(touch /tmp/npl-fuzz-pwned)", "`id`", "'; rm -rf / #", "../../../../etc/passwd",
        "/dev/zero", "-rf", "--help", "${prefill-ip[999]|url}", "${nope}", "${", "$$", "%s%n%s",
        "\u2028\u2029\u0085", "\x1b[2J\x1b]0;x\x07", "\t\r\n", "\x7f\u0080\u009b", "\U0001f600",
        "A" * 70000, "1" * 400, "-1", "0", "99999999999999999999", "nan", "true", "null",
        "gopher://127.0.0.1:%d/_x" % port, "file:///etc/passwd", "http://127.0.0.1:%d/../x?y#z" % port,
        "http://user:pw@127.0.0.1:%d" % port, "https://127.0.0.1:%d" % port, "http://127.0.0.1:0",
        "http://127.0.0.1:%d" % port, "http://[127.0.0.1]:%d" % port, "127.0.0.1", "127.0.0.1:%d" % port,
    ]


def values(port):
    return [None, True, False, 0, -1, -2147483649, 2 ** 31, 2 ** 63, 10 ** 30, 1e308, -1e308, 0.5,
            "x", [], {}, [None], {"k": None}, [[[[None]]]], {"a": {"b": {"c": None}}}] + \
        [random.choice(hostile(port))]


def mutate(doc, port, rng):
    """One mutation of doc in place; its name and whether it touched what becomes an address."""
    all_paths = list(paths(doc))
    at, node = rng.choice(all_paths)
    path = ".".join(str(k) for k in at)
    touches = bool(ADDRESSY.search(path)) or any(isinstance(n, str) and "--host" in n
                                                 for _, n in paths(node))
    if rng.random() < 0.5:
        # of the same type, most of them within the schema: what the readers get past it
        op = "hostile" if isinstance(node, str) else "number" if isinstance(node, (int, float)) \
            and not isinstance(node, bool) else "duplicate" if isinstance(node, list) else "delete"
    else:
        op = rng.choice(["swap", "swap", "delete", "number", "null", "long", "unknown", "hostile",
                         "duplicate", "empty"])
    parent = get(doc, at[:-1]) if at else None
    if op == "delete" and at:
        del parent[at[-1]]
    elif op == "unknown" and isinstance(node, dict):
        node[rng.choice(["zz_unknown", "", "A" * 5000, "\u2028", "$ref"])] = rng.choice(values(port))
    elif op == "duplicate" and isinstance(node, list) and node:
        node.append(copy.deepcopy(rng.choice(node)))
    elif op == "empty" and isinstance(node, (list, dict)):
        node.clear()
    elif op == "null" and isinstance(node, (list, dict)):
        for k in (range(len(node)) if isinstance(node, list) else list(node)):
            node[k] = None
    elif at:
        new = {
            "swap": lambda: rng.choice(values(port)),
            "number": lambda: rng.choice([-1, -0.0, 0, 1, 2, 7, 1000, 65535, 65536, 999999, 2 ** 31 - 1, 2 ** 31,
                                         2 ** 64, 1e308, 0.1]),
            "long": lambda: rng.choice(["A" * 100000, "é" * 30000, ["x"] * 5000]),
            "hostile": lambda: rng.choice(hostile(port)),
        }.get(op, lambda: rng.choice(values(port)))()
        parent[at[-1]] = new
    else:
        op = "none"
    return "%s at %s" % (op, path or "."), touches


def can_unshare():
    try:
        return subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def urls_safe(doc, port):
    """Every string of the mutant that could become a host or URL is 127.0.0.1 or our port."""
    for at, n in paths(doc):
        if isinstance(n, str) and ("://" in n or ADDRESSY.search(".".join(str(k) for k in at))):
            if not re.fullmatch(r"(https?://)?(\[?127\.0\.0\.1\]?|\$\{[a-z-]+(\[[0-9]+\])?(\|url)?\})(:%d)?"
                                % port, n):
                return False
    return True


def run(cmd, cwd, env, prefix, timeout=20):
    try:
        r = subprocess.run(prefix + cmd, cwd=cwd, env=env, capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, ""
    return r.returncode, r.stderr.decode("utf-8", "replace")


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    npl, src, work = os.path.abspath(args[0]), args[1], args[2]
    opt = dict(zip(args[3::2], args[4::2]))
    seconds, seed = float(opt.get("--seconds", 40)), int(opt.get("--seed", 25))
    most = int(opt.get("--max", 100000))
    rng = random.Random(seed)
    random.seed(seed)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(NO_PROXY="*", no_proxy="*", NPULAUNCH_NODE_IP="127.0.0.1", NPULAUNCH_PREFLIGHT="0",
               NPULAUNCH_WAIT_TIMEOUT="1", HOME=os.path.join(work, "home"))
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(env["HOME"])
    sock, port = hold_port()
    netns = can_unshare()
    prefix = ["unshare", "-rn"] if netns else []
    results = os.path.join(src, "tests", "data", "bench", "pass.jsonl")
    v = validator(src)
    bases = []
    for b in render(npl, work, env):
        doc = owned_ports(json.load(open(os.path.join(b, "manifest.json"))), port)
        errs = list(v.iter_errors(doc))
        if errs:
            sys.exit("%s: the schema refuses a rendered manifest: %s" % (b, errs[0].message[:300]))
        bases.append((b, doc))
    problems, n, runs, refused, start, spent = [], 0, 0, 0, time.monotonic(), {}
    # every bundle is mutated at least once, however slow the machine (a sanitizer build, a
    # loaded CI runner): the time only bounds how many more
    while n < most and (n < len(bases) or time.monotonic() - start < seconds):
        base, doc = bases[n % len(bases)]
        m = copy.deepcopy(doc)
        what = []
        touches = False
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            w, t = mutate(m, port, rng)
            what.append(w)
            touches |= t
        d = os.path.join(work, "m%d" % (n % 8))
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(base, d)
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f, indent=1)
        valid = v.is_valid(m)
        refused += not valid
        roles = [r.get("role") for r in m.get("roles", []) if isinstance(r, dict)] \
            if isinstance(m, dict) and isinstance(m.get("roles"), list) else []
        role = next((r for r in roles if isinstance(r, str) and r in
                     ("pd-mixed", "prefill", "decode", "router", "bench")), "bench")
        cmds = [[npl, "apply", "--dry-run", "--role", role, "."],
                [npl, "apply", "--dry-run", "--role", "bench", "--json", "."],
                [npl, "bench", "--dry-run", "."],
                [npl, "verify", results, "."]]
        if netns or not touches or urls_safe(m, port):
            cmds.append([npl, "status", "--timeout", "0.5", "."])
            urls = [ep.get("url") for r in (m.get("roles") if isinstance(m.get("roles"), list) else [])
                    if isinstance(r, dict) and isinstance(r.get("endpoints"), list)
                    for ep in r["endpoints"] if isinstance(ep, dict) and isinstance(ep.get("url"), str)]
            urls = [u for u in urls if netns or urls_safe({"url": u}, port)][:4]
            if urls:
                cmds.append([npl, "wait", "--timeout", "0.2"] + urls)
        for cmd in cmds:
            runs += 1
            t0 = time.monotonic()
            rc, err = run(cmd, d, env, prefix)
            spent[cmd[1]] = spent.get(cmd[1], 0) + time.monotonic() - t0
            said = "%s: %s (%s): %s" % (os.path.basename(base), "; ".join(what), " ".join(
                c if len(c) < 80 else c[:40] + "..." for c in cmd[1:]), "rc %s" % rc)
            if rc is None:
                problems.append(said + ": no end within the timeout")
            elif rc < 0 or rc >= 128:
                problems.append(said + ": killed by a signal")
            elif SANITIZER.search(err):
                problems.append(said + ": " + SANITIZER.search(err).group(0))
            elif rc != 0 and "npulaunch: " not in err and not (rc == 1 and cmd[1] in ("verify", "status", "wait")):
                problems.append(said + ": a failure with no message")
            elif cmd[1] != "wait" and not valid and (rc == 0 or not SCHEMA_MARK.search(err)):
                problems.append(said + ": the schema refuses it, npulaunch did not say so: " + err[:300])
            elif cmd[1] != "wait" and valid and SCHEMA_MARK.search(err):
                problems.append(said + ": the schema accepts it, npulaunch refused: " + err[:300])
            if len(problems) > 40:
                break
        n += 1
        if len(problems) > 40:
            break
    sock.close()
    print("%d mutants (%d the schema refuses) from %d bundles, %d runs in %.0fs, %s" % (
        n, refused, len(bases), runs, time.monotonic() - start,
        "in a network namespace" if netns else "status and wait on 127.0.0.1 mutants only"))
    print("seconds per command: " + ", ".join("%s %.1f" % kv for kv in sorted(spent.items())))
    for p in problems:
        print("FAIL: " + p)
    if n < min(len(bases), most):
        print("FAIL: only %d mutants for %d bundles" % (n, len(bases)))
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
