#!/usr/bin/env python3
"""check_records.py MANIFEST RECORDS SITE.json NODES: did every process of the deployment
receive the plan's argv and environment? (tests/cli/test_slurm.sh)

MANIFEST is the bundle's manifest.json; RECORDS the folder where the stand-in SGLang
(tests/slurm/fake) wrote one JSON file per process: its argv, environment and node; SITE.json
the site values the job ran with ({"model-path": ..., "prefill-ip": [...], ...}); NODES the
job's node of each server node of the plan, as ROLE:INDEX=NODE words, and router=NODE,
bench=NODE; or log=FILE, the batch job's output, whose lines "ROLE: NODE... (ADDRESS...)" and
"router: NODE (ADDRESS)" and "entry point: URL" give them, and the role's addresses (prefill-ip, decode-ip, node-ip) too.
Every server node, the router and (when NODES names it) the benchmark must have
exactly one record on its node, whose argv is the plan's launch and flags with the site
values put in, whose environment holds each of the plan's variables with its value (a
prepend or append around what it inherited) and none of the variables the plan unsets.
Prints each difference; exits 1 when there is one.
"""
import glob
import json
import re
import sys

REF = re.compile(r"\$\$|\$\{([a-z-]+)(?:\[(\d+)\])?(\|url)?\}")


def resolve(value, site):
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        v = site[m.group(1)]
        if m.group(2) is not None:
            v = v[int(m.group(2))]
            if m.group(3) and ":" in v:
                v = f"[{v}]"
        return v
    return REF.sub(sub, value)


def main():
    manifest, records, site_file, *nodes = sys.argv[1:]
    plan = json.load(open(manifest))
    site = json.load(open(site_file))
    where = dict(w.split("=", 1) for w in nodes)
    if "log" in where:
        keys = {"prefill": "prefill-ip", "decode": "decode-ip", "pd-mixed": "node-ip"}
        for line in open(where.pop("log")):
            m = re.match(r"slurm\.sbatch:   (prefill|decode|pd-mixed): ([^(]*) \(([^)]*)\)$", line.rstrip("\n"))
            if m:
                for i, n in enumerate(m.group(2).split()):
                    where[f"{m.group(1)}:{i}"] = n
                site[keys[m.group(1)]] = m.group(3).split()
            m = re.match(r"slurm\.sbatch:   router: (\S+)( \(.*\))?$", line.rstrip("\n"))
            if m:
                where["router"] = m.group(1)
            m = re.match(r"slurm\.sbatch:   entry point: http://\[?([0-9a-f.:]+?)\]?:\d+$", line.rstrip("\n"))
            if m:
                site["entry-ip"] = [m.group(1)]
    recs = [json.load(open(f)) for f in sorted(glob.glob(records + "/*.json"))]
    bad = []
    used = set()
    checked = 0
    for role in plan["roles"]:
        prog = role["program"]
        if prog not in ("server", "router", "bench"):
            continue
        for node in role["nodes"]:
            key = f"{role['role']}:{node['index']}" if prog == "server" else role["role"]
            if key not in where:
                if prog == "server" or prog == "router":
                    bad.append(f"{key}: no node given for it")
                continue
            host = where[key]
            want = list(node["launch"])
            for f in node["flags"]:
                want.append(f["flag"])
                want += [resolve(v, site) for v in f["values"]]
            cands = [r for r in recs if r["program"] == prog and r["node"] == host and id(r) not in used]
            match = [r for r in cands if r["argv"] == want]
            if not match:
                bad.append(f"{key} on {host}: no process with the plan's argv\n  want {want}" +
                           "".join(f"\n  got  {c['argv']}" for c in cands))
                continue
            r = match[0]
            used.add(id(r))
            env = r["env"]
            for e in node["env"]:
                v = resolve(e["value"], site)
                got = env.get(e["name"])
                op = e.get("op")
                sep = e.get("sep") or ":"
                ok = got is not None and (got == v if not op else
                                          (got == v or got.startswith(v + sep)) if op == "prepend" else
                                          (got == v or got.endswith(sep + v)))
                if not ok:
                    bad.append(f"{key} on {host}: env {e['name']}={got!r}, want {v!r}" + (f" ({op})" if op else ""))
            for u in role.get("unset") or []:
                if u["name"] in env:
                    bad.append(f"{key} on {host}: env {u['name']} is set ({env[u['name']]!r}), the plan unsets it")
            checked += 1
    for r in recs:
        if id(r) not in used and (r["program"] != "bench" or "bench" in where):
            bad.append(f"{r['program']} on {r['node']} (pid {r['pid']}): a process the plan does not have: {r['argv']}")
    for b in bad:
        print("check_records:", b)
    print(f"check_records: {checked} processes checked, {len(bad)} differences")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
