#!/usr/bin/env python3
"""Derive the golden expectations of the 36 upstream recipes from SGLang's own pages.

Development aid, not run by the test suite: the suite (tests/golden/test_upstream.c) reads what
this writes into tests/golden/upstream/ (the project cannot read ../shared when a user builds it).

For every recipe section of ../shared/upstream/*.mdx (a `### TITLE` with **Model**, **Hardware**,
**Cards**, **Deploy Mode**, **Quantization**, **Dataset**, **TPOT** (**TTFT**) lines, a
`#### Model Deployment` part whose first fenced block is the server script run on every node and
whose block running sglang_router.launch_router is the router script, and a `#### Benchmark` part
whose block runs sglang.bench_serving) it fills the placeholders with fixed site values, runs the
server script once per node address (P_IP/D_IP entries, or node placeholders, or the one node
127.0.12.1 of a single-node recipe) on the simulated host of ../shared/tools (root only: private
mount namespace), the router block once on prefill ip1 and the benchmark once, and records what
was launched. Every flag is normalised to the name SGLang's argparse resolves it to (the registry
recipes/engine/sglang-flags.yaml: aliases and unambiguous prefixes; plus the known slip
--fuseep_mode). Each fix of a page's evident meaning is recorded under "deviations", each flag
renamed under "normalized".

usage: sudo tests/golden/derive-upstream.py [../shared]   (rewrites tests/golden/upstream/*.json, INDEX)
       sudo tests/golden/derive-upstream.py --layout 2026 [../shared]
           (the newest pages, ../shared/upstream-2026, less the seed models' pages, whose recipes stay
           as the seed pages say: rewrites tests/golden/upstream-2026/*.json, INDEX)
       sudo tests/golden/derive-upstream.py --layout 2026-seed-models [../shared]
           (the seed models' newest pages, for the import round trip: tests/golden/upstream-2026-seed-models)
"""
import json
import os
import re
import sys
import tempfile

import yaml

here = os.path.dirname(os.path.abspath(__file__))
source_dir = os.path.normpath(os.path.join(here, "..", ".."))
sys.path.insert(0, here)
import golden_fix  # noqa: E402

SITE = {
    "model_path": "/path/to/model-weights",
    "draft_model_path": "/path/to/draft-model-weights",
    "ifname": "enp189s0f0",
}
SERVER, ROUTER, BENCH = "sglang.launch_server", "sglang_router.launch_router", "sglang.bench_serving"
TOOLS = {SERVER: "launch_server", ROUTER: "launch_router", BENCH: "bench_serving"}
# flags a page writes that argparse refuses, with what the page evidently means (INDEX.md)
SLIPS = {"--fuseep_mode": "--fuseep-mode"}
# variables the semantics ignore: the simulated host's own (as semantic.py and harness.c do)
BASE_KEYS = {"PATH", "HOME", "LANG"}
META = {"Model": "model", "Hardware": "hardware", "Cards": "cards", "Deploy Mode": "mode",
        "Quantization": "quantization", "Dataset": "dataset", "TPOT": "tpot", "TTFT": "ttft"}
TIERS = ("Low Latency", "High Throughput")
# oddities kept as the page has them (INDEX.md's and ours): (id, check that the page still has it, note)
KEPT = [
    ("qwen3-6-35b-a3b-1p-in128k-out1k-prefix90-50ms",
     lambda r: dict(r["bench"]["flags"]).get("--random-input-len") == ["64000"]
     and dict(r["bench"]["flags"]).get("--dataset-name") == ["random"],
     "title says in128k prefix90, but the page's dataset is 64K+1K and its benchmark a random "
     "64000-token input without a shared prefix (INDEX.md); kept the page's benchmark"),
    ("qwen3-30b-w8a8-1p-in3k5-out1k5-50ms-aime25",
     lambda r: dict(r["bench"]["flags"]).get("--dataset-name") == ["random"],
     "title says aime25, but the page benchmarks the random dataset (3500+1500); kept the page's benchmark"),
]


# Pages with no section title and no metadata (one deployment over "####" parts): what import is
# given with --meta for them (docs/recipes.md), read off the page's prose, and the site values
# its own script sets. MiMo-V2.5-Pro: "1P1D mode (1 prefill node + 1 decode node, TP8 + DP2 per
# node)", "MXFP4-quantized checkpoint", "On the A3 Series ... --tp-size is twice the card
# count" (TP8 on each of two nodes: 8 cards), random 16000 in and 1 or 1000 out.
UNTITLED = {
    "mimo_v2_5_pro.mdx": {
        "title": "MiMo-V2.5-Pro MXFP4 1P1D 8P IN16K OUT1K",
        "meta": {"model": "MiMo-V2.5-Pro", "hardware": "Atlas 800I A3", "cards": "8",
                 "mode": "PD Disaggregation", "quantization": "MXFP4", "dataset": "16k+1k"},
        "site": {"model_path": "/path/to/MiMo-V2.5-Pro-FP4-DFlash",
                 "draft_model_path": "/path/to/MiMo-V2.5-Pro-FP4-DFlash/dflash"},
    },
}
# the "####" parts of an untitled page: which nodes run each block
PARTS = {"common environment setup (both nodes)": "all", "prefill node": "prefill",
         "decode node": "decode", "router": "router"}


class PageError(Exception):
    pass


def ip_prefill(n):
    return f"127.0.10.{n}"


def ip_decode(n):
    return f"127.0.11.{n}"


def ip_node(n):
    return f"127.0.12.{n}"


def slug(title):
    return re.sub(r"\s+", "-", title.strip().lower())


def anchor(title):
    """The anchor a Markdown renderer gives a heading: lower case, other characters to '-'."""
    return re.sub(r"[^a-z0-9]+", "-", title.strip().lower()).strip("-")


# ---------------------------------------------------------------------------------------------
# the flag registry

class Registry:
    def __init__(self, path):
        doc = yaml.safe_load(open(path, encoding="utf-8"))
        self.tools = {}
        for tool, sec in doc["tools"].items():
            names = {}
            for name, ent in (sec.get("flags") or {}).items():
                ent = ent or {}
                target = ent.get("alias_of")
                # a BooleanOptionalAction "no-" form stores false: it is not its target's name
                if target and name.startswith("no-") and "negative" in str(ent.get("note", "")):
                    target = None
                names["--" + name] = "--" + (target or name)
            self.tools[tool] = names

    def canonical(self, tool, flag):
        """-> (canonical flag, why or None); raises PageError when argparse would refuse it."""
        names = self.tools[tool]
        if flag in names:
            return names[flag], (None if names[flag] == flag else f"alias of {names[flag]}")
        if flag in SLIPS:
            return SLIPS[flag], "known slip (INDEX.md): argparse refuses it"
        # argparse (allow_abbrev) takes a prefix of exactly one option string
        hits = sorted(n for n in names if n.startswith(flag))
        if len(hits) == 1:
            return names[hits[0]], f"unambiguous prefix of {hits[0]}"
        if hits:
            raise PageError(f"{tool}: {flag} is an ambiguous prefix of {', '.join(hits)}")
        raise PageError(f"{tool}: {flag} is not a flag of SGLang's {tool}")


# ---------------------------------------------------------------------------------------------
# the pages

def fenced_blocks(lines):
    """-> [(first line index, text)] of the fenced code blocks in lines."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                raise PageError(f"unterminated code block at line {i + 1}")
            out.append((i, "\n".join(lines[i + 1:j]) + "\n"))
            i = j
        i += 1
    return out


def strip_tags(s):
    return re.sub(r"<[^>]+>", "", s).strip()


def table_rows(lines):
    """Rows of the Markdown or HTML table in lines: [(anchor, {key: cell})], the keys named by the
    table's header row (ROW_KEYS' order where it has none)."""
    rows = []
    text = "\n".join(lines)
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", text, re.S):
        cells = [strip_tags(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        m = re.search(r'href="#([^"]+)"', tr)
        if cells and m:
            rows.append((m.group(1), dict(zip(ROW_KEYS, cells))))
    head = ROW_KEYS
    for line in lines:
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if "](#" in line:
            m = re.search(r"\]\(#([^)]+)\)", line)
            rows.append((m.group(1), dict(zip(head, cells))))
        elif cells and not set(cells[0]) <= set("-: "):
            head = [META.get(c, c) for c in cells]
    return rows


ROW_KEYS = ["model", "hardware", "cards", "mode", "dataset", "tpot", "quantization"]


def parse_untitled(name, lines):
    """A page of "####" parts under "### Model Deployment" and "### Benchmark": the server
    script of a role is the block every node runs and then the role's; each benchmark block is
    one benchmark, named by its heading's parentheses ("(TTFT)": ttft)."""
    given = UNTITLED[name]
    where = f"{name} (untitled)"
    parts, head, section = {"all": [], "prefill": [], "decode": [], "router": []}, None, None
    benches = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            section, head = line[4:].strip(), None
        elif line.startswith("#### "):
            head = line[5:].strip()
        elif line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if j == len(lines):
                raise PageError(f"{name}:{i + 1}: unterminated code block")
            text = "\n".join(lines[i + 1:j]) + "\n"
            if section == "Model Deployment" and head and head.lower() in PARTS:
                parts[PARTS[head.lower()]].append(text)
            elif section == "Benchmark" and head and BENCH in text:
                m = re.search(r"\(([^)]+)\)\s*$", head)
                if not m:
                    raise PageError(f"{name}:{i + 1}: a benchmark heading without a name in parentheses")
                benches.append((m.group(1).strip().lower(), text))
            else:
                raise PageError(f"{name}:{i + 1}: a block under '{section} / {head}' of no known part")
            i = j
        i += 1
    if not parts["prefill"] or not parts["decode"] or len(parts["router"]) != 1 or len(benches) < 2:
        raise PageError(f"{where}: not the untitled layout (common, prefill, decode, router, benchmarks)")
    common = "".join(parts["all"])
    return {"title": given["title"], "page": name, "meta": dict(given["meta"]),
            "servers": {"prefill": common + "".join(parts["prefill"]),
                        "decode": common + "".join(parts["decode"])},
            "server": None, "router": parts["router"][0], "bench": None, "benchmarks": benches,
            "site": given["site"], "where": where,
            "table_notes": ["metadata: the page gives no section title and no metadata: given as "
                            "import --meta gives them (" + ", ".join(
                                f"{k} {v}" for k, v in [("title", given["title"])] +
                                list(given["meta"].items())) + ")"]}


def parse_page(path):
    name = os.path.basename(path)
    lines = open(path, encoding="utf-8").read().split("\n")
    if name in UNTITLED:
        return [parse_untitled(name, lines)]
    heads = [i for i, l in enumerate(lines) if l.startswith("### ")]
    tables, recipes = {}, []
    for n, h in enumerate(heads):
        title = lines[h][4:].strip()
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        # a section ends at the next ## heading too
        for k in range(h + 1, end):
            if lines[k].startswith("## "):
                end = k
                break
        body = lines[h + 1:end]
        if title in TIERS:
            tables[title] = table_rows(body)
            continue
        if not any(l.startswith("**Model**") for l in body):
            raise PageError(f"{name}:{h + 1}: section '{title}' is neither a tier table nor a recipe")
        recipes.append(parse_recipe(name, h, title, body))
    # the tier: the table that links the recipe
    for rec in recipes:
        rec["meta"]["tier"] = find_tier(rec, tables)
    return recipes


def parse_recipe(name, h, title, body):
    where = f"{name}:{h + 1} '{title}'"
    meta, fmt = {}, None
    for l in body:
        m = re.match(r"^\*\*([^*]+)\*\*:\s*(.*)$", l)
        if m and m.group(1) in META:
            meta[META[m.group(1)]] = m.group(2).strip()
        m = re.match(r"^\*Format:\s*(.*)\*$", l.strip())
        if m:
            fmt = m.group(1).strip()
    for k in ("model", "hardware", "cards", "mode", "quantization", "dataset", "tpot"):
        if k not in meta:
            raise PageError(f"{where}: no **{k}** line")
    if fmt:
        meta["format"] = fmt
    try:
        dep = next(i for i, l in enumerate(body) if l.strip() == "#### Model Deployment")
        ben = next(i for i, l in enumerate(body) if l.strip() == "#### Benchmark")
    except StopIteration:
        raise PageError(f"{where}: no '#### Model Deployment' or '#### Benchmark' part")
    if ben < dep:
        raise PageError(f"{where}: the Benchmark part comes before Model Deployment")
    deploy = fenced_blocks(body[dep + 1:ben])
    bench = fenced_blocks(body[ben + 1:])
    if not deploy:
        raise PageError(f"{where}: no code block under Model Deployment")
    server, router = deploy[0][1], None
    for _, text in deploy[1:]:
        if ROUTER not in text:
            raise PageError(f"{where}: a deployment block after the first that is no router script")
        if router is not None:
            raise PageError(f"{where}: two router blocks")
        router = text
    if ROUTER in server:
        raise PageError(f"{where}: the server script runs the router")
    benches = [t for _, t in bench if BENCH in t]
    if len(benches) != 1:
        raise PageError(f"{where}: {len(benches)} benchmark blocks running {BENCH}")
    note = " ".join(l.strip() for l in body[ben + 1:] if l.strip() and not l.startswith("```"))
    return {"title": title, "page": name, "meta": meta, "server": server, "router": router,
            "bench": benches[0], "where": where, "bench_note": note.split("```")[0]}


def find_tier(rec, tables):
    """-> the tier; appends a deviation when only the metadata finds the row."""
    meta = rec["meta"]
    want = anchor(rec["title"])
    hits = [(t, a, c) for t, rows in tables.items() for a, c in rows if a == want]
    if not hits:
        def same(got):
            return all(got.get(k, "").lower() == meta[k].lower() for k in ROW_KEYS)
        hits = [(t, a, c) for t, rows in tables.items() for a, c in rows if same(c)]
        if len(hits) == 1:
            rec.setdefault("table_notes", []).append(
                f"table: the {hits[0][0]} row links #{hits[0][1]}, which is not this section's anchor "
                f"#{want}; matched the row by its metadata")
    if len(hits) != 1:
        raise PageError(f"{rec['where']}: {len(hits)} tier-table rows link or match this recipe")
    tier, _, got = hits[0]
    for k in ROW_KEYS + ["ttft"]:
        if k == "ttft" and (k not in got or got[k] == "-" and k not in meta):
            continue
        if got.get(k, "").lower() != meta.get(k, "").lower():
            rec.setdefault("table_notes", []).append(
                f"table: the {tier} row says {k} {got.get(k)!r}, the section says {meta[k]!r}")
    return tier


# ---------------------------------------------------------------------------------------------
# filling a page's script

def fill(text):
    text = re.sub(r"<your prefill ip(\d+)>", lambda m: ip_prefill(m.group(1)), text)
    text = text.replace("<your prefill ip>", ip_prefill(1))
    text = re.sub(r"<your decode ip(\d+)>", lambda m: ip_decode(m.group(1)), text)
    text = text.replace("<your decode ip>", ip_decode(1))
    text = re.sub(r"<your node(\d+) ip>", lambda m: ip_node(m.group(1)), text)
    text = text.replace("<network-interface>", SITE["ifname"])
    left = re.findall(r"<your [^>]*>|<network[^>]*>", text)
    if left:
        raise PageError(f"unknown placeholders {sorted(set(left))}")
    return text


DRAFT_FLAG = re.compile(r"(--speculative-draft-model-path|--speculative-draft-model)([ =])(\S+)")


def fix_server(text, devs, site=SITE):
    """The evident-meaning fixes of a server script; each appended to devs."""
    def used(var):
        return re.search(r"\$\{?" + var + r"\b", text) is not None

    def defined(var):
        return re.search(r"^\s*(export\s+)?" + var + "=", text, re.M) is not None

    def repl(m):
        v = m.group(3)
        if v.startswith("$") or v.startswith("/"):
            return m.group(0)
        devs.append(f"the page gives {m.group(1)} the placeholder {v!r}: "
                    f"used the draft model path {site['draft_model_path']}")
        return m.group(1) + m.group(2) + site["draft_model_path"]
    text = DRAFT_FLAG.sub(repl, text)
    head = []
    for var, key in (("MODEL_PATH", "model_path"), ("DRAFT_MODEL_PATH", "draft_model_path")):
        if used(var) and not defined(var):
            devs.append(f"the script uses ${var} without defining it: defined {var}={site[key]} at its top")
            head.append(f"{var}={site[key]}\n")
        for m in re.finditer(r"^\s*(?:export\s+)?" + var + r"=(\S*)", text, re.M):
            if m.group(1) != site[key]:
                raise PageError(f"the script sets {var}={m.group(1)}, not the placeholder {site[key]}")
    return "".join(head) + text


def arrays(text, name):
    m = re.search(r"^\s*" + name + r"=\((.*)\)\s*$", text, re.M)
    if not m:
        return None
    return [w.strip("'\"") for w in m.group(1).split()]


# ---------------------------------------------------------------------------------------------
# running and reading what was launched

def flags_of(reg, tool, args, normalized, where):
    """argv after the module -> [[flag, [values]]] in page order, names canonical."""
    out, index, cur = [], {}, None
    for a in args:
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            canon, why = reg.canonical(tool, name)
            if why:
                note = f"{where}: {name} -> {canon} ({why})"
                if note not in normalized:
                    normalized.append(note)
            if canon not in index:
                index[canon] = len(out)
                out.append([canon, []])
            cur = out[index[canon]][1]
            if eq:
                cur.append(val)
                cur = None
        elif cur is not None:
            cur.append(a)
        else:
            if "<positional>" not in index:
                index["<positional>"] = len(out)
                out.append(["<positional>", []])
            out[index["<positional>"]][1].append(a)
    return out


def module_of(argv):
    if len(argv) >= 3 and argv[1] == "-m":
        return argv[2], argv[3:]
    return " ".join(argv[1:2]), argv[2:]


def call_semantics(reg, res, call, normalized, where, tuning):
    mod, rest = module_of(call["argv"])
    base = res["base_env"]
    sem = {"flags": flags_of(reg, TOOLS[mod], rest, normalized, where),
           "env": {k: v for k, v in sorted(call["env"].items())
                   if k not in BASE_KEYS and base.get(k) != v},
           "unset": sorted(call["unset"])}
    if tuning:
        sem["governors"] = sorted(set(res["governors"]))
        sem["sysctl"] = dict(sorted(res["sysctl"].items()))
        sem["sourced"] = sorted(set(res["sourced"]))
    return mod, sem


def run_text(text, ip, env=None):
    import simulate
    fd, path = tempfile.mkstemp(suffix=".sh")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        return simulate.run(["bash", path], node_ip=ip, env=env)
    finally:
        os.unlink(path)


def one_call(res, mod, what):
    calls = res["calls"]
    mods = [module_of(c["argv"])[0] for c in calls]
    if mods != [mod]:
        raise PageError(f"{what} launched {mods or 'nothing'} (exit {res['rc']}), not exactly one {mod}:"
                        f" {res['stderr'].strip()[-300:]}")
    return calls[0]


def flag(sem, name, default=None):
    for k, v in sem["flags"]:
        if k == name:
            return v[0] if v else ""
    return default


def router_bootstrap(router, prefill, devs):
    """A router that names the prefill server without its bootstrap port (the router then asks
    the server for its own): npulaunch's router names the port that server listens on."""
    port = flag(prefill, "--disaggregation-bootstrap-port")
    for f in router["flags"]:
        if f[0] == "--prefill" and port is not None and len(f[1]) == 1:
            devs.append(f"router-prefill: the page's router gives --prefill {f[1][0]} without the prefill "
                        f"server's bootstrap port; the recipe's router names the port that server "
                        f"listens on ({port})")
            f[1] = [f[1][0], port]


def derive(reg, rec):
    rid = slug(rec["title"])
    devs = list(rec.get("table_notes", []))
    normalized = []
    site_values = dict(SITE, **rec.get("site", {}))
    scripts = {r: fix_server(fill(t), devs, site_values) for r, t in (rec.get("servers") or {}).items()}
    server = scripts.get("prefill") or fix_server(fill(rec["server"]), devs)
    pd = rec["meta"]["mode"] == "PD Disaggregation"
    site = {"model_path": site_values["model_path"]}
    p_ip, d_ip = arrays(server, "P_IP"), arrays(server, "D_IP")
    node_ph = sorted({int(n) for n in re.findall(r"<your node(\d+) ip>", rec["server"] or "")})
    if scripts:
        p_ip, d_ip = [ip_prefill(1)], [ip_decode(1)]
        nodes = [(p_ip[0], "prefill"), (d_ip[0], "decode")]
    elif pd:
        if not p_ip or not d_ip:
            raise PageError(f"{rec['where']}: a PD Disaggregation script without P_IP and D_IP arrays")
        nodes = [(ip, "prefill") for ip in p_ip] + [(ip, "decode") for ip in d_ip]
    else:
        if p_ip or d_ip:
            raise PageError(f"{rec['where']}: a PD Mixed script with P_IP/D_IP arrays")
        ips = [ip_node(n) for n in node_ph] or [ip_node(1)]
        nodes = [(ip, "pd-mixed") for ip in ips]
    out_nodes = []
    for ip, role in nodes:
        res = run_text(scripts.get(role, server), ip)
        call = one_call(res, SERVER, f"{rec['where']}: the server script on {ip}")
        _, sem = call_semantics(reg, res, call, normalized, "server", True)
        mode = flag(sem, "--disaggregation-mode", "pd-mixed")
        if mode != role:
            raise PageError(f"{rec['where']}: on {ip} ({role}) the server runs --disaggregation-mode {mode}")
        out_nodes.append({"ip": ip, "role": role, "launch": sem})
    router = None
    if rec["router"] is not None:
        if not pd:
            raise PageError(f"{rec['where']}: a router block in a PD Mixed recipe")
        res = run_text(fill(rec["router"]), ip_prefill(1))
        call = one_call(res, ROUTER, f"{rec['where']}: the router block")
        _, router = call_semantics(reg, res, call, normalized, "router", False)
        if scripts:
            router_bootstrap(router, out_nodes[0]["launch"], devs)
    elif pd:
        raise PageError(f"{rec['where']}: a PD Disaggregation recipe without a router block")
    benchmarks = []
    for name, text in rec.get("benchmarks") or [(None, rec["bench"])]:
        res = run_text(fill(text), nodes[0][0])
        call = one_call(res, BENCH, f"{rec['where']}: the benchmark block {name or ''}")
        benchmarks.append({"name": name, "bench": call_semantics(reg, res, call, normalized, "bench", False)[1]})
    bench = benchmarks[0]["bench"]
    if not pd:
        note = golden_fix.bench_where_listening(bench["flags"], out_nodes[0]["launch"]["flags"])
        if note:
            devs.append(note)
    if any(flag(n["launch"], "--speculative-draft-model-path") is not None for n in out_nodes):
        site["draft_model_path"] = site_values["draft_model_path"]
    site["ifname"] = SITE["ifname"]
    if pd:
        site["prefill_ip"] = p_ip
        site["decode_ip"] = d_ip
    if node_ph:
        site["node_ip"] = [ip for ip, _ in nodes]
    doc = {"id": rid, "title": rec["title"], "page": rec["page"], "meta": rec["meta"], "site": site,
           "nodes": out_nodes, "router": router, "bench": bench, "deviations": devs,
           "normalized": normalized}
    if rec.get("benchmarks"):
        # several benchmarks of one deployment, run in turn: bench.sh runs each
        del doc["bench"]
        doc["benchmarks"] = benchmarks
    for kid, check, note in KEPT:
        if kid == rid:
            if not check(doc):
                raise PageError(f"{rec['where']}: the known slip '{note}' is no longer what the page has")
            devs.append(note)
    return doc


SEED_MODELS = ("kimi_k2_6.mdx", "qwen3_5_397b.mdx", "deepseek_v4_flash.mdx")
# the layouts: (pages folder, golden folder, pages left out, recipes expected); a page list that
# starts with "+" names the only pages read
LAYOUTS = {
    "older": ("upstream", "upstream", (), 36),
    # the seed models' newest pages: proved by importing them (tests/golden/roundtrip.sh)
    "2026-seed-models": ("upstream-2026", "upstream-2026-seed-models", ("+",) + SEED_MODELS, 22),
    # the seed models' newest pages are compared by `drift`, not shipped (the seeds are the
    # specification); MiMo-V2.5-Pro's page has no title and no metadata (UNTITLED)
    "2026": ("upstream-2026", "upstream-2026", SEED_MODELS, 39),
}
NOT_RECIPES = ("glossary.mdx", "knowledge_base.mdx")


def load_pages(upstream, skip=()):
    recs = []
    for name in sorted(os.listdir(upstream)):
        if skip[:1] == ("+",):
            if name not in skip:
                continue
        elif name in skip:
            continue
        if name.endswith(".mdx") and name not in NOT_RECIPES:
            recs.extend(parse_page(os.path.join(upstream, name)))
    return recs


def main():
    args = sys.argv[1:]
    layout = "older"
    if args[:1] == ["--layout"]:
        layout, args = args[1], args[2:]
    pages, golden, skip, expect = LAYOUTS[layout]
    shared = args[0] if args else os.path.join(source_dir, "..", "shared")
    sys.path.insert(0, os.path.join(shared, "tools"))
    reg = Registry(os.path.join(source_dir, "recipes", "engine", "sglang-flags.yaml"))
    out_dir = os.path.join(here, golden)
    os.makedirs(out_dir, exist_ok=True)
    try:
        recs = load_pages(os.path.join(shared, pages), skip)
        docs = [derive(reg, r) for r in recs]
    except PageError as e:
        sys.exit(f"derive-upstream: {e}")
    ids = [d["id"] for d in docs]
    if len(set(ids)) != len(ids):
        sys.exit(f"derive-upstream: duplicate ids {sorted(i for i in ids if ids.count(i) > 1)}")
    if len(ids) != expect:
        sys.exit(f"derive-upstream: found {len(ids)} recipes, expected {expect}")
    for d in docs:
        with open(os.path.join(out_dir, d["id"] + ".json"), "w") as f:
            json.dump(d, f, indent=1, ensure_ascii=False)
            f.write("\n")
    with open(os.path.join(out_dir, "INDEX"), "w") as f:
        f.write("\n".join(sorted(ids)) + "\n")
    for d in docs:
        for x in d["deviations"]:
            print(f"{d['id']}: deviation: {x}")
        for x in d["normalized"]:
            print(f"{d['id']}: normalized: {x}")
    print(len(ids), "recipes written to", out_dir)


if __name__ == "__main__":
    main()
