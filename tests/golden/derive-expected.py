#!/usr/bin/env python3
"""Derive the golden expectations of the 22 seed recipes from the seed pages.

Development aid, not run by the test suite: the suite reads what this wrote into
tests/golden/expected/ (the project cannot read ../shared when a user builds it).
It runs each seed page's own script, with its placeholders filled with the fixed
site values below, on the simulated host of ../shared/tools (root only: private
mount namespace) and records what was launched: per role the flags, the
environment set, the variables unset, the cpufreq governors and sysctls left
behind and the Ascend env files sourced; plus the recipe's metadata.

usage: sudo tests/golden/derive-expected.py [../shared]   (rewrites tests/golden/expected/*.json)
"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "..", "shared")
sys.path.insert(0, os.path.join(shared, "tools"))
import seeds  # noqa: E402
import semantic  # noqa: E402
sys.path.insert(0, here)
import golden_fix  # noqa: E402

out_dir = os.path.join(here, "expected")
index = []
for rec in seeds.load(os.path.join(shared, "seeds")):
    rid = semantic.slug(rec["title"])
    roles = semantic.seed_semantics(rec)
    for role, sem in roles.items():
        sem["flags"] = [[k, v] for k, v in sem["flags"].items()]
        if role in ("router", "bench"):
            # the seed-check compares only the flags of these two roles
            for k in ("env", "unset", "governors", "sysctl", "sourced"):
                sem.pop(k, None)
    doc = {"id": rid, "title": rec["title"], "seed": rec["source"], "meta": rec["meta"],
           "site": semantic.SITE, "node_ips": semantic.seed_node_ips(rec),
           "roles": roles}
    if "pd-mixed#0" in roles and "bench" in roles:
        note = golden_fix.bench_where_listening(roles["bench"]["flags"], roles["pd-mixed#0"]["flags"])
        if note:
            doc["deviations"] = [note]
    with open(os.path.join(out_dir, rid + ".json"), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    index.append(rid)
with open(os.path.join(out_dir, "INDEX"), "w") as f:
    f.write("\n".join(sorted(index)) + "\n")
print(len(index), "recipes written to", out_dir)
