#!/usr/bin/python3
"""k8s_sim.py: run a rendered Kubernetes (k8s, rbg) or docker bundle as its cluster would, on
this machine, and check that every process launches what the plan says.

usage: k8s_sim.py k8s|rbg BUNDLE ROOTS [--tune] [--dns-late S]
       k8s_sim.py docker BUNDLE ROOTS [--tune]

Needs root (network and mount namespaces). ROOTS is a folder where a fake host root per node is
made by tests/cli/lib.sh's make_root (the caller passes its path in NPL_MAKE_ROOT, a script
that makes one: ROOT and ROOT.bin with the stub server as python3 and python).

k8s, rbg: every pod of the bundle (each LeaderWorkerSet group's leader and workers, or each
RoleBasedGroup role instance's, and the router) gets a network namespace of its own on one
bridge, with the address its node would have (hostNetwork: the node's), and a mount namespace
where /etc/hosts is the cluster's DNS (a file this script fills as pods start: the leaders'
records only after DNS_LATE seconds, so that workers start before them), the ConfigMap is
mounted at /opt/npulaunch and the node's files are under NPULAUNCH_ROOT. The environment is
the controller's variables (as LWS v0.10.0 / RBG v0.7.0 inject them) then the container's, each
value expanded as kubelet does ($(VAR) of a variable defined before it, $$ for $), and the
command and args expanded the same way. Each server pod's python3 is the stub server, which
records its argv and environment. Then an HTTP stand-in answers /health at each server
instance's address and port, one after the other: the router must not start before the last.

docker: each node of the bundle gets a network namespace with its address; docker-ROLE.sh runs
there with a stand-in docker (NPL_FAKE_DOCKER) that records its arguments and runs the command
with the container's environment (the -e variables set, nothing else).

Checks, per node: the records equal the plan's argv and environment for that node
(manifest.json, site values resolved with the node addresses) and the records of the same role
script run bare on that node with the addresses exported (the scripts target's way). Prints
FAIL lines; exit 1 on any failure.
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import yaml

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
FAILS = []
TAG = f"npl{os.getpid() % 100000}"
MOUNT = "/opt/npulaunch"
HOLD = "300"   # the stub server stays up this long: instances sharing a node all start


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg, flush=True)


def sh(*cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, **kw)


# ---- kubelet's expansion (k8s.io/kubernetes third_party/forked/golang/expansion) ----------

def expand(s, env):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "$" and i + 1 < len(s):
            n = s[i + 1]
            if n == "$":
                out.append("$")
                i += 2
                continue
            if n == "(":
                j = s.find(")", i + 2)
                if j >= 0:
                    name = s[i + 2:j]
                    out.append(env[name] if name in env else s[i:j + 1])
                    i = j + 1
                    continue
            out.append("$" + n)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def field(path, pod):
    if path == "status.podIP":
        return pod["addr"]
    if path == "metadata.namespace":
        return pod["ns"]
    if path == "metadata.name":
        return pod["name"]
    m = re.match(r"^metadata\.labels\['(.+)'\]$", path)
    if m:
        return pod["labels"].get(m.group(1), "")
    raise ValueError(f"fieldRef {path} not simulated")


def container_env(pod, container):
    """The environment kubelet gives the container: the controller's variables first, then the
    container's own, each expanded with those before it."""
    env = {}
    for name, value in pod["injected"] + [(e["name"], e) for e in container.get("env", [])]:
        if isinstance(value, dict):
            if "valueFrom" in value:
                v = field(value["valueFrom"]["fieldRef"]["fieldPath"], pod)
            else:
                v = expand(value.get("value", ""), env)
        else:
            v = expand(value, env)
        env[name] = v
    return env


# ---- the network ---------------------------------------------------------------------------

class Net:
    def __init__(self):
        self.sw = f"{TAG}sw"
        self.ns = []
        sh("ip", "netns", "add", self.sw)
        sh("ip", "-n", self.sw, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.sw, "link", "set", "br0", "up")

    def node(self, i, addr):
        ns = f"{TAG}p{i}"
        sh("ip", "netns", "add", ns)
        self.ns.append(ns)
        sh("ip", "-n", self.sw, "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
        sh("ip", "-n", self.sw, "link", "set", f"v{i}", "master", "br0", "up")
        sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        return ns

    def close(self):
        for ns in self.ns + [self.sw]:
            sh("ip", "netns", "del", ns, check=False)


def in_ns(ns, script, log):
    """Run bash script in network namespace ns and a mount namespace of its own."""
    return subprocess.Popen(["nsenter", f"--net=/run/netns/{ns}", "unshare", "--mount", "--propagation",
                             "private", "bash", "-c", script], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def records(path):
    if not os.path.exists(path):
        return []
    with open(path) as fp:
        return [json.loads(line) for line in fp if line.strip()]


# ---- the plan ------------------------------------------------------------------------------

def resolve_pval(s, site, lists):
    def ref(m):
        key, idx, url = m.group(1), m.group(3), m.group(4)
        if idx is not None:
            a = lists[key][int(idx)]
            return f"[{a}]" if url and ":" in a else a
        return site[key]
    s = re.sub(r"\$\{([a-z-]+)(\[(\d+)\])?(\|url)?\}", ref, s.replace("$$", "\0"))
    return s.replace("\0", "$")


def plan_launches(plan, role, index, lists):
    """What the plan launches on node index of role: [(argv, env, unset)]."""
    site = plan["site"]
    out = []
    for node in role["nodes"]:
        if node.get("index", 0) != index:
            continue
        argv = [resolve_pval(a, site, lists) for a in node["launch"]]
        for f in node["flags"]:
            argv.append(f["flag"])
            argv += [resolve_pval(v, site, lists) for v in f["values"]]
        env = {}
        for e in node["env"]:
            v = resolve_pval(e["value"], site, lists)
            env[e["name"]] = v
        out.append((argv, env, [u["name"] for u in role.get("unset", [])]))
    return out


# the pod's own: the controllers', the entrypoint's, the router's wait (the site's start-up window),
# the container's /tmp
POD_ONLY = re.compile(r"^(LWS_|RBG_|NPULAUNCH_NAMESPACE$|NPULAUNCH_GROUP$|NPULAUNCH_WAIT_TIMEOUT$|TMPDIR$|HOSTNAME$|PWD$|OLDPWD$|"
                      r"SHLVL$|_$|HOME$|NPL_STUB_LOG$)")


def compare(what, got, ref, plan):
    """got, ref: stub records of one node; plan: plan_launches of it."""
    if len(got) != len(plan) or len(ref) != len(plan):
        fail(f"{what}: {len(got)} launch(es), bare script {len(ref)}, plan {len(plan)}")
        return
    key = lambda r: r["argv"]
    got, ref = sorted(got, key=key), sorted(ref, key=key)
    plan = sorted(plan, key=lambda p: [os.path.basename(p[0][0])] + p[0][1:])
    for g, r, (argv, env, unset) in zip(got, ref, plan):
        if g["argv"] != [os.path.basename(argv[0])] + argv[1:]:
            fail(f"{what}: argv {g['argv']} is not the plan's {argv}")
        if g["argv"] != r["argv"]:
            fail(f"{what}: argv differs from the bare script's: {g['argv']} vs {r['argv']}")
        for k, v in env.items():
            if g["env"].get(k) != v:
                fail(f"{what}: {k}={g['env'].get(k)!r}, the plan says {v!r}")
        for k in unset:
            if k in g["env"]:
                fail(f"{what}: {k} is set; the plan unsets it")
        ge = {k: v for k, v in g["env"].items() if not POD_ONLY.match(k)}
        re_ = {k: v for k, v in r["env"].items() if not POD_ONLY.match(k)}
        if ge != re_:
            diff = sorted(set(ge.items()) ^ set(re_.items()))
            fail(f"{what}: environment differs from the bare script's: {diff[:6]}")


# ---- k8s / rbg -----------------------------------------------------------------------------

def pods_of(bundle, kind, ns):
    """The pods the controllers would make: name, role, group, worker, labels, injected env,
    container, init containers, DNS name."""
    pods = []
    docs = []
    for f in ("workloads.yaml", "rolebasedgroup.yaml"):
        p = os.path.join(bundle, f)
        if os.path.exists(p):
            with open(p) as fp:
                docs += [d for d in yaml.load_all(fp, Loader=Loader) if d]
    for d in docs:
        if d["kind"] == "LeaderWorkerSet":
            lws = d["metadata"]["name"]
            role = d["metadata"]["labels"]["app.kubernetes.io/component"]
            t = d["spec"]["leaderWorkerTemplate"]
            size = t["size"]
            for g in range(d["spec"]["replicas"]):
                for w in range(size):
                    tmpl = t["leaderTemplate"] if w == 0 and "leaderTemplate" in t else t["workerTemplate"]
                    name = f"{lws}-{g}" if w == 0 else f"{lws}-{g}-{w}"
                    pods.append({
                        "name": name, "role": role, "group": g, "worker": w, "size": size, "ns": ns,
                        "dns": f"{name}.{lws}.{ns}",
                        "labels": {"leaderworkerset.sigs.k8s.io/name": lws,
                                   "leaderworkerset.sigs.k8s.io/group-index": str(g),
                                   "leaderworkerset.sigs.k8s.io/worker-index": str(w)},
                        # pod_utils.go AddLWSVariables: put before the container's own
                        "injected": [("LWS_LEADER_ADDRESS", f"{lws}-{g}.{lws}.{ns}"),
                                     ("LWS_GROUP_SIZE", str(size)), ("LWS_WORKER_INDEX", str(w))],
                        "spec": tmpl["spec"]})
        elif d["kind"] == "Deployment":
            role = d["metadata"]["labels"]["app.kubernetes.io/component"]
            pods.append({"name": f"{d['metadata']['name']}-0", "role": role, "group": 0, "worker": 0, "size": 1,
                         "ns": ns, "dns": None, "labels": {}, "injected": [], "spec": d["spec"]["template"]["spec"]})
        elif d["kind"] == "RoleBasedGroup":
            g_name = d["metadata"]["name"]
            for r in d["spec"]["roles"]:
                role = r["name"]
                wl, svc = f"{g_name}-{role}", f"s-{g_name}-{role}"
                if "leaderWorkerPattern" in r:
                    lwp = r["leaderWorkerPattern"]
                    size = lwp["size"]
                else:
                    lwp, size = r["standalonePattern"], 1
                for i in range(r["replicas"]):
                    inst = f"{wl}-{i}"
                    for w in range(size):
                        spec = json.loads(json.dumps(lwp["template"]["spec"]))
                        if w == 0 and "leaderTemplatePatch" in lwp:
                            for pc in lwp["leaderTemplatePatch"]["spec"]["containers"]:
                                for c in spec["containers"]:
                                    if c["name"] == pc["name"]:
                                        c.update(pc)
                        name = f"{inst}-{w}" if "leaderWorkerPattern" in r else inst
                        injected = [("RBG_GROUP_NAME", g_name), ("RBG_ROLE_NAME", role), ("RBG_ROLE_INDEX", str(i)),
                                    ("RBG_ROLE_INSTANCE_NAME", inst),
                                    ("RBG_COMPONENT_NAME", "leader" if w == 0 else "worker"),
                                    ("RBG_COMPONENT_INDEX", str(max(w - 1, 0)))]
                        if "leaderWorkerPattern" in r:
                            # env_builder.go BuildLwsEnv: the leader's name through $(RBG_ROLE_INSTANCE_NAME)
                            injected += [("RBG_LWP_LEADER_ADDRESS", f"$(RBG_ROLE_INSTANCE_NAME)-0.{svc}.{ns}"),
                                         ("RBG_LWP_WORKER_INDEX", str(w)), ("RBG_LWP_GROUP_SIZE", str(size))]
                        pods.append({"name": name, "role": role, "group": i, "worker": w, "size": size, "ns": ns,
                                     "dns": f"{name}.{svc}.{ns}" if "leaderWorkerPattern" in r else None,
                                     "labels": {}, "injected": injected, "spec": spec})
    return pods


def simulate_k8s(kind, bundle, roots, tune, dns_late, make_root):
    with open(os.path.join(bundle, "manifest.json")) as fp:
        plan = json.load(fp)
    with open(os.path.join(bundle, "configmap.yaml")) as fp:
        cm = next(d for d in yaml.load_all(fp, Loader=Loader) if d)
    ns = plan["site"].get("namespace", "default")
    cmdir = os.path.join(roots, "configmap")
    os.makedirs(cmdir)
    for k, v in cm["data"].items():
        with open(os.path.join(cmdir, k), "w") as fp:
            fp.write(v)
    pods = pods_of(bundle, kind, ns)
    hosts = os.path.join(roots, "hosts")
    records_early = ["127.0.0.1 localhost"]
    with open(hosts, "w") as fp:
        fp.write("\n".join(records_early) + "\n")
    net = Net()
    procs = []
    try:
        for i, p in enumerate(pods):
            p["addr"] = f"10.77.0.{10 + i}"
            p["netns"] = net.node(i, p["addr"])
            p["root"] = os.path.join(roots, f"node{i}")
            sh(make_root, p["root"])
            p["log"] = os.path.join(roots, f"stub-{i}.jsonl")
        lists = lists_of(plan, pods)
        # the DNS: workers' records at once, leaders' later (lws#746: a worker may start first)
        late = [p for p in pods if p["dns"] and p["worker"] == 0]
        early = [p for p in pods if p["dns"] and p["worker"] != 0]

        def write_hosts(ps):
            with open(hosts, "r+") as fp:   # the same file: the pods see it through their bind mounts
                text = fp.read() + "".join(f"{p['addr']} {p['dns']}\n" for p in ps)
                fp.seek(0)
                fp.write(text)
                fp.truncate()
        write_hosts(early)
        t0 = time.time()
        for p in pods:
            c = p["spec"]["containers"][0]
            env = container_env(p, c)
            argv = [expand(a, env) for a in c.get("command", []) + c.get("args", [])]
            base = {"PATH": f"{p['root']}.bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME": p["name"],
                    "HOME": "/root", "NPULAUNCH_ROOT": p["root"], "NPL_STUB_LOG": p["log"], "NPULAUNCH_PREFLIGHT": "0",
                    "NPL_STUB_HOLD_MS": HOLD, "TMPDIR": os.path.join(roots, f"tmp-{p['name']}")}
            # a container's /tmp is its own: where entrypoint.sh records the addresses it resolved
            os.makedirs(os.path.join(roots, f"tmp-{p['name']}"), exist_ok=True)
            p["env"], p["argv"] = env, argv
            steps = [f"mount --bind {shlex.quote(hosts)} /etc/hosts",
                     "mount -t tmpfs tmpfs /opt", f"mkdir -p {MOUNT}", f"cp {shlex.quote(cmdir)}/* {MOUNT}/"]
            run = []
            for ic in p["spec"].get("initContainers", []):
                ienv = container_env(p, ic)
                iargv = [expand(a, ienv) for a in ic.get("command", []) + ic.get("args", [])]
                run.append("env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in {**base, **ienv}.items()) +
                           " " + " ".join(shlex.quote(a) for a in iargv) + " || exit $?")
            run.append("exec env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in {**base, **env}.items()) +
                       " " + " ".join(shlex.quote(a) for a in argv))
            p["out"] = open(os.path.join(roots, f"pod-{p['name']}.out"), "w")
            p["proc"] = in_ns(p["netns"], "set -e\n" + "\n".join(steps) + "\n" + "\n".join(run), p["out"])
            procs.append(p["proc"])
        time.sleep(dns_late)
        write_hosts(late)
        servers = [p for p in pods if p["role"] != "router"]
        for p in servers:
            rc = wait(p["proc"], 60)
            if rc != 0:
                fail(f"pod {p['name']} exited {rc}: {tail(p)}")
        # the workers resolved their leader, which had no record for dns_late seconds
        for p in servers:
            if p["worker"] and p["proc"].returncode == 0 and time.time() - t0 < dns_late:
                fail(f"pod {p['name']} finished before its leader had a DNS record")
        check_pods(plan, pods, lists, roots)
        if tune:
            for p in servers:
                if not os.path.exists(os.path.join(p["root"], "run/npulaunch/tune-journal.json")):
                    fail(f"pod {p['name']}: no tuning journal on its node after the init container")
        router = [p for p in pods if p["role"] == "router"]
        if router:
            gate_router(plan, router[0], servers, lists)
    finally:
        for pr in procs:
            if pr.poll() is None:
                os.killpg(pr.pid, signal.SIGTERM)
                pr.wait()
        for p in pods:
            for h in p.get("http", []):
                os.killpg(h.pid, signal.SIGTERM)
                h.wait()
        net.close()


def tail(p):
    p["out"].flush()
    with open(p["out"].name) as fp:
        return fp.read()[-1500:]


def wait(proc, secs):
    try:
        return proc.wait(timeout=secs)
    except subprocess.TimeoutExpired:
        return "timeout"


def lists_of(plan, pods):
    """The address lists of the plan's site keys: each role's pods in rank (list) order."""
    lists = {}
    for role in plan["roles"]:
        key = role.get("node_list")
        if not key:
            continue
        ps = [p for p in pods if p["role"] == role["role"]]
        ps.sort(key=lambda p: (p["group"], p["worker"]))
        lists[key] = [p["addr"] for p in ps]
    return lists


def role_of(plan, name):
    return next(r for r in plan["roles"] if r["role"] == name)


def needed(role, lists):
    """The address lists a role's script reads (those it would be given)."""
    keys = {n["key"] for n in role.get("needs", []) if n.get("list")}
    return {k: v for k, v in lists.items() if k in keys}


VARS = {"node-ip": "NODE_IPS", "prefill-ip": "PREFILL_IPS", "decode-ip": "DECODE_IPS"}


def bare(script, netns, root, addr, lists, log, args, node_ip=True, extra=None):
    """The role script run on the node as the scripts target runs it: addresses exported."""
    env = {"PATH": f"{root}.bin:/usr/sbin:/usr/bin:/sbin:/bin", "NPULAUNCH_ROOT": root, "NPL_STUB_LOG": log, "NPULAUNCH_PREFLIGHT": "0",
           "HOME": "/root", "NPL_STUB_HOLD_MS": HOLD}
    if node_ip:
        env["NPULAUNCH_NODE_IP"] = addr
    env.update(extra or {})
    for k, v in lists.items():
        env[VARS[k]] = " ".join(v)
    cmd = ["nsenter", f"--net=/run/netns/{netns}", "env", "-i"] + [f"{k}={v}" for k, v in env.items()] + \
          ["bash", script] + args
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


def check_pods(plan, pods, lists, roots):
    for p in pods:
        if p["role"] == "router":
            continue
        role = role_of(plan, p["role"])
        index = sorted([q for q in pods if q["role"] == p["role"]], key=lambda q: (q["group"], q["worker"])).index(p)
        reflog = os.path.join(roots, f"ref-{p['name']}.jsonl")
        r = bare(os.path.join(roots, "configmap", role["script"]), p["netns"], p["root"], p["addr"],
                 needed(role, lists), reflog, ["--no-tune"])
        if r.returncode:
            fail(f"bare {role['script']} on {p['name']}: exit {r.returncode}: {r.stderr[-800:]}")
        compare(f"pod {p['name']} ({p['role']} node {index})", records(p["log"]), records(reflog),
                plan_launches(plan, role, index, lists))


def gate_router(plan, router, servers, lists):
    """Stand-ins answer /health at each server instance, one at a time: the router starts only
    once the last one does."""
    targets = []
    for role in plan["roles"]:
        if role["program"] != "server":
            continue
        for ep in role["endpoints"]:
            url = resolve_pval(ep["url"], plan["site"], lists)
            m = re.match(r"^http://\[?([^\]]+?)\]?:(\d+)$", url)
            host, port = m.group(1), int(m.group(2))
            pod = next(p for p in servers if p["addr"] == host)
            targets.append((pod, host, port))
    www = os.path.join(os.path.dirname(router["log"]), "www")
    os.makedirs(www, exist_ok=True)
    open(os.path.join(www, "health"), "w").close()
    for n, (pod, host, port) in enumerate(targets):
        if n == len(targets) - 1:
            time.sleep(2.5)   # the router polls every 2 s at most: it would have started by now
            if records(router["log"]):
                fail("the router started before every server answered /health")
                return
        h = subprocess.Popen(["nsenter", f"--net=/run/netns/{pod['netns']}", sys.executable, "-m", "http.server",
                              str(port), "--bind", host, "--directory", www], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        pod.setdefault("http", []).append(h)
    rc = wait(router["proc"], 30)
    if rc != 0:
        fail(f"router pod exited {rc}: {tail(router)}")
        return
    role = role_of(plan, "router")
    reflog = router["log"] + ".ref"
    r = bare(os.path.join(os.path.dirname(router["log"]), "configmap", role["script"]), router["netns"], router["root"],
             router["addr"], needed(role, lists), reflog, [], node_ip=False)
    if r.returncode:
        fail(f"bare router.sh: exit {r.returncode}: {r.stderr[-800:]}")
    compare("router pod", records(router["log"]), records(reflog), plan_launches(plan, role, 0, lists))


# ---- docker -------------------------------------------------------------------------------

def simulate_docker(bundle, roots, tune, make_root):
    with open(os.path.join(bundle, "manifest.json")) as fp:
        plan = json.load(fp)
    net = Net()
    nodes = []
    try:
        lists = {}
        i = 0
        for role in plan["roles"]:
            if role["program"] != "server":
                continue
            key = role.get("node_list")
            count = role.get("nodes_count", 1)
            addrs = []
            for index in range(count):
                addr = f"10.78.0.{10 + i}"
                node = {"role": role, "index": index, "addr": addr, "netns": net.node(i, addr),
                        "root": os.path.join(roots, f"node{i}"), "log": os.path.join(roots, f"stub-{i}.jsonl")}
                sh(make_root, node["root"])
                nodes.append(node)
                addrs.append(addr)
                i += 1
            if key:
                lists[key] = addrs
        rnode = {"addr": f"10.78.0.{10 + i}", "root": os.path.join(roots, "router"),
                 "log": os.path.join(roots, "stub-router.jsonl")}
        rnode["netns"] = net.node(i, rnode["addr"])
        sh(make_root, rnode["root"])
        fake = os.environ["NPL_FAKE_DOCKER"]
        for node in nodes:
            os.symlink(fake, os.path.join(node["root"] + ".bin", "docker"))
            env = {"PATH": f"{node['root']}.bin:/usr/sbin:/usr/bin:/sbin:/bin", "NPULAUNCH_ROOT": node["root"], "NPULAUNCH_PREFLIGHT": "0",
                   "NPL_STUB_LOG": node["log"], "NPL_DOCKER_LOG": node["log"] + ".docker", "HOME": "/root",
                   "NPL_STUB_HOLD_MS": HOLD}
            for k, v in needed(node["role"], lists).items():
                env[VARS[k]] = " ".join(v)
            # no NPULAUNCH_NODE_IP: with the host's network, the script finds the node by hostname -I
            r = subprocess.run(["nsenter", f"--net=/run/netns/{node['netns']}", "env", "-i"] +
                               [f"{k}={v}" for k, v in env.items()] +
                               ["bash", os.path.join(bundle, "docker-" + node["role"]["script"])],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
            what = f"docker-{node['role']['script']} on node {node['index']}"
            if r.returncode:
                fail(f"{what}: exit {r.returncode}: {r.stderr[-800:]}")
                continue
            if not tune and "note: the hosts are not tuned" not in r.stderr:
                fail(f"{what}: no note that the host is not tuned: {r.stderr[-400:]}")
            # the container started on a tuned host (a journal there) when asked to tune, and the
            # host was put back when it ended
            with open(node["log"] + ".docker", encoding="utf-8") as f:
                started = [json.loads(line) for line in f if line.strip()]
            if not started or started[-1].get("tuned") != tune:
                fail(f"{what}: the container started on a host {'not ' if tune else ''}tuned")
            if os.path.exists(os.path.join(node["root"], "run/npulaunch/tune-journal.json")):
                fail(f"{what}: a tuning journal is left on the host after the container ended")
            check_docker_args(plan, node, what)
            reflog = node["log"] + ".ref"
            rr = bare(os.path.join(bundle, node["role"]["script"]), node["netns"], node["root"], node["addr"],
                      needed(node["role"], lists), reflog, ["--no-tune"], node_ip=False)
            if rr.returncode:
                fail(f"bare {node['role']['script']}: exit {rr.returncode}: {rr.stderr[-800:]}")
            compare(what, records(node["log"]), records(reflog), plan_launches(plan, node["role"], node["index"], lists))
        router = next((r for r in plan["roles"] if r["program"] == "router"), None)
        if router:
            docker_router(plan, bundle, router, rnode, nodes, lists)
    finally:
        for node in nodes:
            for h in node.get("http", []):
                os.killpg(h.pid, signal.SIGTERM)
                h.wait()
        net.close()


def docker_router(plan, bundle, role, rnode, nodes, lists):
    """docker-router.sh on its host, once a stand-in answers /health for every server."""
    www = os.path.join(os.path.dirname(rnode["log"]), "www")
    os.makedirs(www, exist_ok=True)
    open(os.path.join(www, "health"), "w").close()
    for r in plan["roles"]:
        for ep in r.get("endpoints", []) if r["program"] == "server" else []:
            m = re.match(r"^http://\[?([^\]]+?)\]?:(\d+)$", resolve_pval(ep["url"], plan["site"], lists))
            node = next(n for n in nodes if n["addr"] == m.group(1))
            node.setdefault("http", []).append(subprocess.Popen(
                ["nsenter", f"--net=/run/netns/{node['netns']}", sys.executable, "-m", "http.server", m.group(2),
                 "--bind", m.group(1), "--directory", www], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True))
    os.symlink(os.environ["NPL_FAKE_DOCKER"], os.path.join(rnode["root"] + ".bin", "docker"))
    env = {"PATH": f"{rnode['root']}.bin:/usr/sbin:/usr/bin:/sbin:/bin", "NPL_STUB_LOG": rnode["log"],
           "NPL_DOCKER_LOG": rnode["log"] + ".docker", "HOME": "/root", "NPULAUNCH_WAIT_TIMEOUT": "30",
           "NPULAUNCH_ROOT": rnode["root"], "NPL_STUB_HOLD_MS": HOLD, "NPULAUNCH_PREFLIGHT": "0"}
    for k, v in needed(role, lists).items():
        env[VARS[k]] = " ".join(v)
    r = subprocess.run(["nsenter", f"--net=/run/netns/{rnode['netns']}", "env", "-i"] +
                       [f"{k}={v}" for k, v in env.items()] + ["bash", os.path.join(bundle, "docker-router.sh")],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    if r.returncode:
        fail(f"docker-router.sh: exit {r.returncode}: {r.stderr[-800:]}")
        return
    calls = records(rnode["log"] + ".docker")
    if len(calls) != 1 or plan["container"]["router_image"]["value"] not in calls[0]["argv"]:
        fail(f"docker-router.sh: not one docker run of the router image: {calls}")
    reflog = rnode["log"] + ".ref"
    rr = bare(os.path.join(bundle, role["script"]), rnode["netns"], rnode["root"], rnode["addr"], needed(role, lists),
              reflog, [], node_ip=False, extra={"NPULAUNCH_WAIT_TIMEOUT": "30"})
    if rr.returncode:
        fail(f"bare router.sh: exit {rr.returncode}: {rr.stderr[-800:]}")
    compare("docker-router.sh", records(rnode["log"]), records(reflog), plan_launches(plan, role, 0, lists))


def check_docker_args(plan, node, what):
    calls = records(node["log"] + ".docker")
    if len(calls) != 1:
        fail(f"{what}: {len(calls)} docker calls")
        return
    args = calls[0]["argv"]
    ct = plan["container"]
    want = ["run", "--net=host", "--ipc=host"]
    if ct["privileged"]["value"]:
        want.append("--privileged")
    for w in want:
        if w not in args:
            fail(f"{what}: docker {w} missing: {args}")
    for d in ct["devices"]["value"]:
        if f"--device {d}" not in " ".join(args):
            fail(f"{what}: --device {d} missing")
    for m in ct["mounts"]["value"]:
        if not any(a.startswith(m["path"] + ":" + m["path"]) for a in args):
            fail(f"{what}: no -v for {m['path']}")
    if ct["image"]["value"] not in args:
        fail(f"{what}: not the image {ct['image']['value']}")


def main(argv):
    if os.geteuid() != 0:
        print("skip: needs root (network and mount namespaces)")
        return 77
    kind, bundle, roots = argv[1], argv[2], argv[3]
    tune = "--tune" in argv
    dns_late = float(argv[argv.index("--dns-late") + 1]) if "--dns-late" in argv else 1.5
    make_root = os.environ["NPL_MAKE_ROOT"]
    if kind == "docker":
        simulate_docker(bundle, roots, tune, make_root)
    else:
        simulate_k8s(kind, bundle, roots, tune, dns_late, make_root)
    print(f"{'FAILED' if FAILS else 'ok'}: {kind} {os.path.basename(bundle)}", flush=True)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
