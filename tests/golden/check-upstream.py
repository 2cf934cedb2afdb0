#!/usr/bin/env python3
"""Does npulaunch deploy exactly what SGLang's upstream pages deploy?

Development aid, like ../shared/tools/seed_check.py, for the 36 upstream recipes: for every
expected file tests/golden/upstream/ID.json (written by derive-upstream.py from the pages) whose
recipe npulaunch knows, render it with the file's site values (or, with --apply, launch each
node's role with `npulaunch apply --role ROLE ID`), run each node's role script on that node's
address on the simulated host of ../shared/tools (NPULAUNCH_NODE_IP=IP, NPULAUNCH_WAIT_TIMEOUT=0),
router.sh once on prefill ip1 and bench.sh once, and compare what was launched with what the page
launches: per node the flags (by name: presence and values), the environment set (exact, both
ways), the variables unset, the files sourced (exact sets), the governors and sysctls; the
router's flags, environment and unsets; the benchmark's flags. Needs root (unshare -m).

usage: sudo tests/golden/check-upstream.py BUILD/npulaunch [--apply] [--only SUBSTR] [-v]
           [--recipes DIR] [--expected DIR] [--shared DIR]
Prints 'ok ID', 'FAIL ID' with the differences, or 'missing ID' (npulaunch does not know it yet),
then 'N/M equivalent'; exit 0 iff every recipe npulaunch knows is equivalent.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
source_dir = os.path.normpath(os.path.join(here, "..", ".."))
NO_SUCH_RECIPE = 3

_spec = importlib.util.spec_from_file_location("derive_upstream", os.path.join(here, "derive-upstream.py"))
derive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(derive)
REGISTRY = derive.Registry(os.path.join(source_dir, "recipes", "engine", "sglang-flags.yaml"))


def site_args(exp):
    s = exp["site"]
    args = ["--model-path", s["model_path"], "--ifname", s["ifname"]]
    if "draft_model_path" in s:
        args += ["--draft-model-path", s["draft_model_path"]]
    for key, opt in (("prefill_ip", "--prefill-ip"), ("decode_ip", "--decode-ip"), ("node_ip", "--node-ip")):
        for ip in s.get(key, []):
            args += [opt, ip]
    return args


def raw_flags(args):
    """argv after the module -> [[flag, [values]]] as written (no normalisation)."""
    out, index, cur = [], {}, None
    for a in args:
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if name not in index:
                index[name] = len(out)
                out.append([name, []])
            cur = out[index[name]][1]
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


def semantics(res, call, tuning):
    _, rest = derive.module_of(call["argv"])
    base = res["base_env"]
    sem = {"flags": raw_flags(rest),
           "env": {k: v for k, v in call["env"].items() if k not in derive.BASE_KEYS and base.get(k) != v},
           "unset": sorted(call["unset"])}
    if tuning:
        sem["governors"] = sorted(set(res["governors"]))
        sem["sysctl"] = res["sysctl"]
        sem["sourced"] = sorted(set(res["sourced"]))
    return sem


def launched(res, module, what, problems):
    """The one call of module in a run, or None with the problem recorded."""
    calls = [c for c in res["calls"] if derive.module_of(c["argv"])[0] == module]
    others = [derive.module_of(c["argv"])[0] for c in res["calls"] if c not in calls]
    if others:
        problems.append(f"{what}: unexpected launches of {others}")
    if len(calls) != 1:
        tail = res["stderr"].strip().splitlines()[-3:]
        problems.append(f"{what}: {len(calls)} launches of {module}, want exactly 1 (exit {res['rc']})"
                        + (f"; stderr: {' | '.join(tail)}" if tail else ""))
        return None
    return calls[0]


def fmt(v):
    return "nothing" if v is None else json.dumps(v)


def compare(what, tool, want, got, problems, parts):
    wf, gf = dict((k, v) for k, v in want["flags"]), dict((k, v) for k, v in got["flags"])
    for k in wf:
        if k not in gf:
            problems.append(f"{what}: flag {k} missing: want {fmt(wf[k])}")
        elif wf[k] != gf[k]:
            problems.append(f"{what}: flag {k}: want {fmt(wf[k])} got {fmt(gf[k])}")
    for k in gf:
        if k in wf:
            continue
        hint = ""
        try:
            canon, why = REGISTRY.canonical(tool, k)
            if canon != k:
                hint = f" (SGLang reads it as {canon}: {why}; write {canon})"
        except derive.PageError as e:
            hint = f" ({e})"
        problems.append(f"{what}: flag {k} unexpected: got {fmt(gf[k])}{hint}")
    if "env" in parts:
        we, ge = want["env"], got["env"]
        for k in sorted(set(we) | set(ge)):
            if k not in ge:
                problems.append(f"{what}: env {k} not set: want {we[k]!r}")
            elif k not in we:
                problems.append(f"{what}: env {k} set but not wanted: got {ge[k]!r}")
            elif we[k] != ge[k]:
                problems.append(f"{what}: env {k}: want {we[k]!r} got {ge[k]!r}")
    for part in ("unset", "sourced"):
        if part in parts:
            w, g = set(want[part]), set(got[part])
            if w - g:
                problems.append(f"{what}: {part}: want also {sorted(w - g)}")
            if g - w:
                problems.append(f"{what}: {part}: not wanted {sorted(g - w)}")
    if "governors" in parts and want["governors"] != got["governors"]:
        problems.append(f"{what}: governors: want {want['governors']} got {got['governors']}")
    if "sysctl" in parts:
        for k in sorted(set(want["sysctl"]) | set(got["sysctl"])):
            if want["sysctl"].get(k) != got["sysctl"].get(k):
                problems.append(f"{what}: sysctl {k}: want {want['sysctl'].get(k)} got {got['sysctl'].get(k)}")


SERVER_PARTS = ("env", "unset", "sourced", "governors", "sysctl")
ROUTER_PARTS = ("env", "unset")


def first_prefill(exp):
    return exp["site"]["prefill_ip"][0]


def check_render(simulate, binary, exp, pre, problems):
    """-> None when npulaunch does not know the recipe, else True."""
    out = tempfile.mkdtemp(prefix="npl-upstream-")
    try:
        p = subprocess.run([binary] + pre + ["render", exp["id"]] + site_args(exp) + ["-o", out],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == NO_SUCH_RECIPE:
            return None
        if p.returncode != 0:
            problems.append(f"render: exit {p.returncode}: {(p.stderr or p.stdout).strip()[:600]}")
            return True
        files = sorted(os.listdir(out))
        env = {"NPULAUNCH_WAIT_TIMEOUT": "0"}

        def run(name, ip):
            path = os.path.join(out, name)
            if not os.path.exists(path):
                problems.append(f"render wrote no {name} (it wrote {files})")
                return None
            return simulate.run(["bash", path], node_ip=ip, env=dict(env, NPULAUNCH_NODE_IP=ip))

        for n in exp["nodes"]:
            what = f"node {n['ip']} ({n['role']}.sh)"
            res = run(n["role"] + ".sh", n["ip"])
            call = res and launched(res, derive.SERVER, what, problems)
            if call:
                compare(what, "launch_server", n["launch"], semantics(res, call, True), problems, SERVER_PARTS)
        if exp["router"] is not None:
            ip = first_prefill(exp)
            what = f"router (router.sh on {ip})"
            res = run("router.sh", ip)
            call = res and launched(res, derive.ROUTER, what, problems)
            if call:
                compare(what, "launch_router", exp["router"], semantics(res, call, False), problems, ROUTER_PARTS)
        elif "router.sh" in files:
            problems.append("render wrote router.sh, but the page runs no router")
        ip = exp["nodes"][0]["ip"]
        what = f"bench (bench.sh on {ip})"
        res = run("bench.sh", ip)
        call = res and launched(res, derive.BENCH, what, problems)
        if call:
            compare(what, "bench_serving", exp["bench"], semantics(res, call, False), problems, ())
        return True
    finally:
        shutil.rmtree(out, ignore_errors=True)


def check_apply(simulate, binary, exp, pre, problems):
    plan = [(n["ip"], n["role"], n) for n in exp["nodes"]]
    if exp["router"] is not None:
        plan.append((first_prefill(exp), "router", None))
    for ip, role, node in plan:
        res = simulate.run([binary] + pre + ["apply", "--role", role, exp["id"]] + site_args(exp),
                           node_ip=ip, env={"NPULAUNCH_NODE_IP": ip, "NPULAUNCH_WAIT_TIMEOUT": "0"})
        if res["rc"] == NO_SUCH_RECIPE and not res["calls"]:
            return None
        what = f"node {ip} (apply --role {role})" if node else f"router (apply --role router on {ip})"
        if node:
            call = launched(res, derive.SERVER, what, problems)
            if call:
                compare(what, "launch_server", node["launch"], semantics(res, call, True), problems, SERVER_PARTS)
        else:
            call = launched(res, derive.ROUTER, what, problems)
            if call:
                compare(what, "launch_router", exp["router"], semantics(res, call, False), problems, ROUTER_PARTS)
    return True


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)

    def opt(name, default):
        return args[args.index(name) + 1] if name in args else default
    binary = os.path.abspath(args[0])
    apply_mode, verbose = "--apply" in args, "-v" in args
    only = opt("--only", "")
    expected = opt("--expected", os.path.join(here, "upstream"))
    shared = opt("--shared", os.path.join(source_dir, "..", "shared"))
    pre = ["--recipes", os.path.abspath(opt("--recipes", ""))] if "--recipes" in args else []
    sys.path.insert(0, os.path.join(shared, "tools"))
    import simulate
    ids = [l.strip() for l in open(os.path.join(expected, "INDEX")) if l.strip() and only in l]
    ok, known, missing = 0, 0, []
    for rid in ids:
        exp = json.load(open(os.path.join(expected, rid + ".json")))
        problems = []
        check = check_apply if apply_mode else check_render
        if check(simulate, binary, exp, pre, problems) is None:
            missing.append(rid)
            print(f"missing {rid}: npulaunch does not know this recipe (exit {NO_SUCH_RECIPE}, no such recipe)")
            continue
        known += 1
        if problems:
            print(f"FAIL {rid}: {len(problems)} differences from {exp['page']} '{exp['title']}'")
            for p in problems[: (None if verbose else 8)]:
                print("     " + p)
            if not verbose and len(problems) > 8:
                print(f"     ... {len(problems) - 8} more (-v shows all)")
        else:
            ok += 1
            print(f"ok   {rid}")
    print(f"{ok}/{known} equivalent" + (" (apply)" if apply_mode else " (render)")
          + f"; {len(missing)} of {len(ids)} missing")
    sys.exit(0 if ok == known else 1)


if __name__ == "__main__":
    main()
