#!/usr/bin/env bash
# render --target k8s and --target rbg: every manifest of every shipped recipe passes a strict
# validation against the published schemas (tests/data/k8s: LWS v0.10.0, RBG v0.7.0, the core
# kinds), and one broken field fails it; the cluster values reach the manifests; bad ones are
# refused; the bundles of three shapes match their goldens (NPL_UPDATE_GOLDEN=1 writes them);
# and, as root, the pods of every deployment shape run on a simulated cluster
# (tests/tools/k8s_sim.py: a network namespace per pod, kubelet's expansion, the controllers'
# variables, DNS records that come late) and launch the plan's argv and environment.
# shellcheck shell=bash source=lib.sh
source "$(dirname "$0")/lib.sh"
TOOLS=$NPL_SRC/tests/tools
SCHEMAS=$NPL_DATA/k8s
GOLDEN=$NPL_DATA/k8s/golden
SHAPES=$NPL_DATA/recipes/good/shapes
SITE=(--model-path /models/m --draft-model-path /models/d --ifname eth0)

need_python yaml jsonschema kubernetes
kval() { "$PY" "$TOOLS/kval.py" "$SCHEMAS" "$@"; }
# the objects read by Kubernetes' own API types (python3-kubernetes), built by kubectl kustomize
kapi() { "$PY" "$TOOLS/k8s_api.py" "$@"; }

# ---- every manifest of every shipped recipe, strictly -------------------------------------
for target in k8s rbg; do
	expect_rc 0 "$NPL" render --all --target "$target" "${SITE[@]}" -o "$T/all-$target"
	expect_grep "$T/err" "note: the hosts are not tuned"
	n=$(find "$T/all-$target" -name kustomization.yaml | wc -l)
	expect_eq "$n" "$("$NPL" list --ids | wc -l)" "$target bundles"
	run kval "$T/all-$target"
	[[ $rc == 0 ]] || fail "$target manifests do not validate: $(grep -A3 FAIL "$T/out" | head -40)"
	# every document is checked: per recipe a kustomization, the ConfigMap, a workload per role, Services
	(($(sed -n 's/^\([0-9]*\) passed.*/\1/p' "$T/out") >= 4 * n)) || fail "$target: too few documents checked: $(tail -1 "$T/out")"
	# Kubernetes' own types: every object and pod template, every pod Guaranteed; kustomize builds each
	run kapi "$T/all-$target"
	[[ $rc == 0 ]] || fail "$target objects by the API types: $(grep -m 20 FAIL "$T/out")"
	expect_grep "$T/out" "$n bundles, "
	grep -q "^skip: kubectl" "$T/out" && echo "skip: kubectl kustomize (no kubectl here): the objects are read by the API types only"
done
# --check compares with what render writes, for a target too
expect_rc 0 "$NPL" render --all --target k8s "${SITE[@]}" -o "$T/all-k8s" --check
echo '# edited' >>"$T/all-k8s/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms/services.yaml"
expect_rc 1 "$NPL" render --all --target k8s "${SITE[@]}" -o "$T/all-k8s" --check
# a bundle as the scripts' folder is: the manifest records each file, so an edit is told apart
# from an out-of-date file, and render does not overwrite it without --force
expect_grep "$T/out" "edited $T/all-k8s/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms/services.yaml"
expect_rc 1 "$NPL" render --all --target k8s "${SITE[@]}" -o "$T/all-k8s"
expect_grep "$T/err" "qwen3-8b-w8a8-1p-in3k5-out1k5-5ms/services.yaml"
expect_grep "$T/all-k8s/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms/services.yaml" "# edited"
expect_rc 0 "$NPL" render --all --target k8s "${SITE[@]}" -o "$T/all-k8s" --force
expect_nogrep "$T/all-k8s/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms/services.yaml" "# edited"

# the ConfigMap holds the scripts byte for byte (as YAML strings): the servers' scripts of every
# pd-disagg recipe are the ones the docker target writes as files from the same values, and so
# are those of a value that YAML would read otherwise (leading blanks, ': ', ' #', quotes, a tab,
# and the characters a YAML reader refuses raw or takes for a line break: DEL, C1 controls, NEL,
# U+2028, a BOM; libyaml's emitter escapes them)
expect_rc 0 "$NPL" render --all --target docker "${SITE[@]}" -o "$T/all-docker"
for v in "  lead: \"q\" #x	tab \\ 모델" "- item" "|" "x
y" $'del\x7f c1\u0080 nel\u0085 ls\u2028 ps\u2029 bom\ufeff'; do
	expect_rc 0 "$NPL" render deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms --target k8s "${SITE[@]}" \
		--env "prefill:NPL_ODD=$v" -o "$T/odd-k8s"
	expect_rc 0 "$NPL" render deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms --target docker "${SITE[@]}" \
		--env "prefill:NPL_ODD=$v" -o "$T/odd-docker"
	"$PY" -c '
import sys, yaml
cm = yaml.safe_load(open(sys.argv[1] + "/configmap.yaml"))["data"]
assert cm["prefill.sh"] == open(sys.argv[2] + "/prefill.sh").read(), "prefill.sh"
' "$T/odd-k8s" "$T/odd-docker" || fail "the ConfigMap's prefill.sh with NPL_ODD=[$v] is not the script"
done
# a site value with those characters in the manifests themselves: every file parses, and the
# model path comes back whole where the pods mount it
mp=$'/models/del\x7f nel\u0085 ls\u2028'
expect_rc 0 "$NPL" render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --target k8s --model-path "$mp" \
	--draft-model-path /models/d --ifname eth0 -o "$T/odd-path"
"$PY" - "$T/odd-path" "$mp" >"$T/odd-path.out" 2>&1 <<'EOF' || fail "a hostile model path in the manifests: $(cat "$T/odd-path.out")"
import glob, sys, yaml
def strings(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from strings(v)
    elif isinstance(x, str):
        yield x
hits = 0
for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    for doc in yaml.safe_load_all(open(f, encoding="utf-8")):
        hits += sum(s == sys.argv[2] for s in strings(doc))
assert hits >= 2, f"the model path is found {hits} times"
EOF
"$PY" - "$T/all-k8s" "$T/all-docker" >"$T/same" 2>&1 <<'EOF' || fail "ConfigMap scripts: $(cat "$T/same")"
import os, sys, yaml
n = 0
for rid in sorted(os.listdir(sys.argv[1])):
    cm = yaml.safe_load(open(f"{sys.argv[1]}/{rid}/configmap.yaml"))["data"]
    for name in ("prefill.sh", "decode.sh"):
        if name in cm:
            assert cm[name] == open(f"{sys.argv[2]}/{rid}/{name}").read(), f"{rid}/{name}"
            n += 1
assert n >= 28, n   # the 14 pd-disagg recipes
EOF

# ---- one broken field fails the validation: an unknown field, a wrong type, a bad enum -----
B=$T/all-k8s/deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms
R=$T/all-rbg/deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms
breaks=(
	"$B/workloads.yaml|0,/^    restartPolicy: RecreateGroupOnPodRestart/s//    restartPolicy: RecreateGroupOnPodRestrat/|/spec/leaderWorkerTemplate/restartPolicy: 'RecreateGroupOnPodRestrat' is not one of"
	"$B/workloads.yaml|0,/^        hostNetwork: true/s//        hostNetwork: true\n        hostNetworks: true/|Additional properties are not allowed ('hostNetworks' was unexpected)"
	"$B/workloads.yaml|0,/^  replicas: 1$/s//  replicas: one/|/spec/replicas: 'one' is not of type 'integer'"
	"$B/workloads.yaml|0,/^        enableServiceLinks: false/s//        enableServiceLinks: \"no\"/|/enableServiceLinks: 'no' is not of type 'boolean'"
	"$B/services.yaml|0,/^    port: 8000/s//    port: \"8000\"/|/spec/ports/0/port: '8000' is not of type 'integer'"
	"$B/services.yaml|0,/^  type: ClusterIP/s//  type: ClusterIp/|/spec/type: 'ClusterIp' is not one of"
	"$B/configmap.yaml|s/^data:/data:\n  bad key: x/|/data: 'bad key' does not match"
	"$B/kustomization.yaml|s/^resources:/resource:/|Additional properties are not allowed ('resource' was unexpected)"
	"$R/rolebasedgroup.yaml|s/restartPolicy: RecreateRoleInstanceOnPodRestart/restartPolicy: RecreateGroupOnPodRestart/|restartPolicy: 'RecreateGroupOnPodRestart' is not one of ['None', 'RecreateRoleInstanceOnPodRestart']"
	"$R/rolebasedgroup.yaml|0,/^    dependencies:/s//    dependsOn:/|Additional properties are not allowed ('dependsOn' was unexpected)"
	"$B/workloads.yaml|0,/^          - name: npulaunch$/s//          - name: npulaunch-typo/|mounts 'npulaunch-typo', which is no volume"
)
# each broken copy judged on its own, by one kval that loads the schemas once (--each)
broken=()
for i in "${!breaks[@]}"; do
	IFS='|' read -r file expr want <<<"${breaks[i]}"
	rm -rf "$T/broken-$i" && cp -r "$(dirname "$file")" "$T/broken-$i"
	sed -i "$expr" "$T/broken-$i/$(basename "$file")"
	cmp -s "$file" "$T/broken-$i/$(basename "$file")" && fail "the edit '$expr' changed nothing in $file"
	broken+=("$T/broken-$i")
done
kval --each "${broken[@]}" >"$T/each.out" 2>&1 || fail "kval --each: $(head -c 1500 "$T/each.out")"
for i in "${!breaks[@]}"; do
	IFS='|' read -r file expr want <<<"${breaks[i]}"
	out=$T/broken-$i.kval
	[[ $(tail -n 1 "$out" 2>/dev/null) == "exit 1" ]] || fail "a manifest broken by '$expr' passed the validation"
	grep -qF -- "$want" "$out" || fail "broken by '$expr': no [$want] in: $(head -c 1500 "$out")"
	(($(grep -c '^FAIL' "$out") == 1)) || fail "broken by '$expr': not exactly one document failed: $(grep '^FAIL' "$out")"
done

# ---- what a Kubernetes render refuses, with exit 2 -------------------------------------------
ID=deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms
expect_rc 2 "$NPL" render $ID --target k8s --ifname eth0 -o "$T/x"
expect_grep "$T/err" "error: render --target k8s of '$ID' needs --model-path"
[[ ! -e $T/x ]] || fail "a refused render wrote $T/x"
expect_rc 2 "$NPL" render $ID --target k8s --model-path /m -o "$T/x"
expect_grep "$T/err" "needs --ifname"
expect_rc 2 "$NPL" render $ID --target rbg "${SITE[@]}" --prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 -o "$T/x"
expect_grep "$T/err" "error: render --target rbg takes no --prefill-ip: the cluster gives each pod its address"
expect_rc 2 "$NPL" render $ID --target k8s "${SITE[@]}" --namespace LLM
expect_grep "$T/err" "error: --namespace 'LLM' is not a namespace name"
expect_rc 2 "$NPL" render $ID --target k8s "${SITE[@]}" --name-prefix a-prefix-of-forty-one-characters-is-longr
expect_grep "$T/err" "error: --name-prefix 'a-prefix-of-forty-one-characters-is-longr' is not a name prefix (1 to 40"
expect_rc 0 "$NPL" render $ID --target k8s "${SITE[@]}" --name-prefix a-prefix-of-forty-characters-is-the-most
# a mounted path the API server refuses in a mountPath (issue 25); under a claim, only its mount
for t in k8s rbg; do
	expect_rc 2 "$NPL" render $ID --target $t --model-path /data/a:b --ifname eth0 -o "$T/x"
	expect_grep "$T/err" "error: render --target $t: --model-path '/data/a:b' holds ':', which a container's mount cannot carry"
done
[[ ! -e $T/x ]] || fail "a refused render wrote $T/x"
expect_rc 0 "$NPL" render $ID --target k8s --model-path /models/a:b --model-volume pvc:m --model-mount /models --ifname eth0
expect_rc 2 "$NPL" render $ID --target k8s "${SITE[@]}" --model-volume pvc:models --model-path /data/m
expect_grep "$T/err" "error: render --target k8s: --model-path '/data/m' is not in the claim's mount /models (--model-mount)"
expect_rc 0 "$NPL" render $ID --target k8s "${SITE[@]}" --model-volume pvc:models
expect_rc 2 "$NPL" render $ID --target k8s "${SITE[@]}" --model-mount /m
expect_grep "$T/err" "--model-mount is where a claim is mounted"
expect_rc 2 "$NPL" render $ID --target k8s --model-path /models/m --ifname eth0 --container-runtime podman --strict
expect_grep "$T/err" "error: --container-runtime: render --target k8s has no use for it (the docker target's: the kubelet runs the containers); --strict refuses it"
expect_rc 0 "$NPL" render $ID --target k8s "${SITE[@]}" --container-runtime podman
expect_grep "$T/err" "note: --container-runtime: render --target k8s has no use for it"
expect_rc 2 "$NPL" render $ID --target kubernetes
expect_grep "$T/err" "unknown target 'kubernetes' (scripts, k8s, rbg, docker, slurm)"
printf 'model-path: /models/m\nifname: eth0\ngang: sure\n' >"$T/site.yaml"
expect_rc 2 "$NPL" render $ID --target rbg --site "$T/site.yaml"
expect_grep "$T/err" "site.yaml:3:7: error: 'gang' takes true or false, not 'sure'"

# ---- the cluster values reach the manifests -------------------------------------------------
expect_rc 0 "$NPL" render $ID --target k8s "${SITE[@]}" --namespace llm --name-prefix dsr1 --gang --tune \
	--npu-resource huawei.com/ascend-1980 --npu-unit card --node-selector pool=a3 --registry swr.example.com/mirror \
	--privileged=false --shm-size 32Gi --model-volume pvc:weights --model-mount /models -o "$T/v"
expect_nogrep "$T/err" "not tuned"
"$PY" - "$T/v" >"$T/v.txt" <<'EOF' || fail "cluster values: $(cat "$T/v.txt")"
import sys, yaml
d = sys.argv[1]
k = yaml.safe_load(open(f"{d}/kustomization.yaml"))
assert k["namespace"] == "llm", k
docs = [x for f in ("configmap.yaml", "workloads.yaml", "services.yaml") for x in yaml.safe_load_all(open(f"{d}/{f}"))]
assert all(x["metadata"]["namespace"] == "llm" for x in docs)
lws = {x["metadata"]["name"]: x for x in docs if x["kind"] == "LeaderWorkerSet"}
assert sorted(lws) == ["dsr1-decode", "dsr1-prefill"], sorted(lws)
dec = lws["dsr1-decode"]["spec"]
assert dec["replicas"] == 1 and dec["leaderWorkerTemplate"]["size"] == 2
pre = lws["dsr1-prefill"]["spec"]
assert pre["replicas"] == 2 and pre["leaderWorkerTemplate"]["size"] == 1
for t in (dec["leaderWorkerTemplate"]["leaderTemplate"], dec["leaderWorkerTemplate"]["workerTemplate"]):
    s = t["spec"]
    assert s["schedulerName"] == "volcano", s.get("schedulerName")
    assert s["nodeSelector"] == {"pool": "a3"}, s["nodeSelector"]
    c = s["containers"][0]
    assert c["image"] == "swr.example.com/mirror/lmsysorg/sglang:main-cann8.5.0-a3", c["image"]
    # 8 cards of a node of 8: the whole node's CPUs and memory (the A3 profile's), Guaranteed
    assert c["resources"]["limits"] == {"huawei.com/ascend-1980": "8", "cpu": "160", "memory": "1024Gi"}, c["resources"]
    assert c["resources"]["requests"] == c["resources"]["limits"]
    assert c["securityContext"]["privileged"] is False
    ic = s["initContainers"][0]
    assert ic["command"][1:] == ["/opt/npulaunch/decode.sh", "--tune-only"] and ic["securityContext"]["privileged"]
    vols = {v["name"]: v for v in s["volumes"]}
    assert vols["model"]["persistentVolumeClaim"] == {"claimName": "weights", "readOnly": True}
    assert vols["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "32Gi"}
    assert vols["tune-journal"]["hostPath"]["path"] == "/run/npulaunch"
    assert s["hostNetwork"] and s["dnsPolicy"] == "ClusterFirstWithHostNet"
# probes on rank 0 only
assert "readinessProbe" in dec["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
assert "readinessProbe" not in dec["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
assert "startupProbe" in pre["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
svc = {x["metadata"]["name"]: x["spec"] for x in docs if x["kind"] == "Service"}
assert sorted(svc) == ["dsr1-decode-0", "dsr1-prefill-0", "dsr1-prefill-1", "dsr1-router"], sorted(svc)
# a bootstrap port per prefill instance, on its leader
assert [p["port"] for p in svc["dsr1-prefill-1"]["ports"]] == [8000, 8999], svc["dsr1-prefill-1"]
assert svc["dsr1-prefill-1"]["selector"]["leaderworkerset.sigs.k8s.io/group-index"] == "1"
assert [p["port"] for p in svc["dsr1-router"]["ports"]] == [6688]
dep = [x for x in docs if x["kind"] == "Deployment"][0]
assert dep["spec"]["template"]["spec"]["containers"][0]["args"] == ["router"]
cm = [x for x in docs if x["kind"] == "ConfigMap"][0]
assert sorted(cm["data"]) == ["bench.sh", "decode.sh", "entrypoint.sh", "prefill.sh", "router.sh"]
# the router listens where its Service reaches it; the servers where their nodes are
assert "--host 0.0.0.0" in cm["data"]["router.sh"].replace("\t", "").replace("\\\n", "").replace("  ", " ") or "'0.0.0.0'" in cm["data"]["router.sh"]
print("ok")
EOF
# gang for a RoleBasedGroup is its annotation; the router depends on the servers
expect_rc 0 "$NPL" render $ID --target rbg "${SITE[@]}" --gang -o "$T/g"
expect_grep "$T/g/rolebasedgroup.yaml" "rbg.workloads.x-k8s.io/group-gang-scheduling: \"true\""
"$PY" -c '
import sys, yaml
g = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x["kind"] == "RoleBasedGroup"][0]
r = {x["name"]: x for x in g["spec"]["roles"]}
# under gang scheduling the PodGroup counts the router pod: a router created only once the
# servers are ready would hold their scheduling for ever; the wait of router.sh orders them
assert "dependencies" not in r["router"], r["router"]
assert r["decode"]["leaderWorkerPattern"]["size"] == 2 and r["prefill"]["replicas"] == 2
assert "readinessProbe" in r["decode"]["leaderWorkerPattern"]["leaderTemplatePatch"]["spec"]["containers"][0]
' "$T/g/rolebasedgroup.yaml" || fail "the RoleBasedGroup's roles"
expect_rc 0 "$NPL" render $ID --target rbg "${SITE[@]}" -o "$T/ng"
"$PY" -c '
import sys, yaml
g = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x["kind"] == "RoleBasedGroup"][0]
r = {x["name"]: x for x in g["spec"]["roles"]}
assert r["router"]["dependencies"] == ["prefill", "decode"], r["router"]
assert "annotations" not in g["metadata"] or "rbg.workloads.x-k8s.io/group-gang-scheduling" not in g["metadata"]["annotations"]
' "$T/ng/rolebasedgroup.yaml" || fail "the RoleBasedGroup without gang: the router after the servers"
# the plan records the target and the container, each value with its origin
"$PY" -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["target"] == "rbg", p.get("target")
assert p["container"]["image"]["origin"]["layer"] == "hardware", p["container"]["image"]
assert p["container"]["npu_resource"]["value"] == "huawei.com/Ascend910"
r = [x for x in p["roles"] if x["role"] == "router"][0]
h = [f for f in r["nodes"][0]["flags"] if f["flag"] == "--host"][0]
assert h["values"] == ["0.0.0.0"] and h["origin"] == {"layer": "rule", "rule": "entry-host", "why": "render --target rbg: the router'"'"'s and the PD-mixed server'"'"'s Services reach them from other pods"}, h
' "$T/g/manifest.json" || fail "the plan of a target"
# the note on stdout's form lands in the files' header too
expect_rc 0 "$NPL" render $ID --target k8s "${SITE[@]}"
expect_grep "$T/out" "==> kustomization.yaml <=="
expect_grep "$T/out" "# Note: the hosts are not tuned (render with --tune for a privileged init container"

# ---- the pods an operator runs: Guaranteed, placed, tolerated, with the site's start-up window --
# (issue 27) every pod template, servers' and router's, of both targets: requests equal to limits
# with whole CPUs (the hardware profile's per node, a pod on part of a node its share), the
# router's node selector, the tolerations, pull secrets and priority class; the start-up window in
# the startupProbe and the router's wait; the namespace made by the kustomization
for t in k8s rbg; do
	expect_rc 0 "$NPL" render $ID --target $t "${SITE[@]}" -o "$T/pd-$t"
	expect_rc 0 "$NPL" render $ID --target $t "${SITE[@]}" --namespace llm --server-cpus 96 --server-memory 768Gi \
		--router-cpus 2 --router-memory 3Gi --router-node-selector node-role.example.com/cpu= \
		--router-node-selector zone=b --toleration huawei.com/Ascend910=true:NoSchedule --toleration example.com/spot \
		--image-pull-secret swr-pull --image-pull-secret mirror-pull --priority-class llm-serving \
		--startup-timeout 5400 --tune -o "$T/op-$t"
	expect_rc 0 "$NPL" render qwen3-8b-w8a8-1p-in3k5-out1k5-37ms --target $t "${SITE[@]}" -o "$T/die-$t"
	run kapi "$T/pd-$t" "$T/op-$t" "$T/die-$t"
	[[ $rc == 0 ]] || fail "$t: the operator's values by the API types: $(grep -m 20 FAIL "$T/out")"
	run kval "$T/op-$t"
	[[ $rc == 0 ]] || fail "$t: the operator's values by the schemas: $(grep -m 20 FAIL "$T/out")"
	"$PY" - "$T" "$t" >"$T/op.txt" 2>&1 <<'EOF' || fail "$t: the operator's values: $(cat "$T/op.txt")"
import sys, yaml
T, t = sys.argv[1], sys.argv[2]
def pods(d):
    """(role, container-bearing pod spec, is a patch) of every pod template of the bundle"""
    out = []
    for f in ("workloads.yaml", "rolebasedgroup.yaml"):
        try:
            docs = list(yaml.safe_load_all(open(f"{d}/{f}")))
        except FileNotFoundError:
            continue
        for x in docs:
            if x["kind"] == "LeaderWorkerSet":
                lwt = x["spec"]["leaderWorkerTemplate"]
                for k in ("leaderTemplate", "workerTemplate"):
                    if k in lwt:
                        out.append((x["metadata"]["labels"]["app.kubernetes.io/component"], lwt[k]["spec"]))
            elif x["kind"] == "Deployment":
                out.append(("router", x["spec"]["template"]["spec"]))
            elif x["kind"] == "RoleBasedGroup":
                for r in x["spec"]["roles"]:
                    p = r.get("leaderWorkerPattern") or r.get("standalonePattern")
                    out.append((r["name"], p["template"]["spec"]))
    assert out, d
    return out
def res(c):
    r = c["resources"]
    assert r["limits"] == r["requests"], (c["name"], r)
    return r["limits"]
# defaults: the A3 profile's 160 CPUs and 1024Gi per node, the router's 4 and 8Gi; the startup
# window of 30 minutes
assert len(pods(f"{T}/pd-{t}")) >= 3 and "router" in [r for r, _ in pods(f"{T}/pd-{t}")]
for role, s in pods(f"{T}/pd-{t}"):
    for c in s["containers"] + s.get("initContainers", []):
        l = res(c)
        if role == "router":
            assert l == {"cpu": "4", "memory": "8Gi"}, l
            assert "nodeSelector" not in s, s.get("nodeSelector")
            assert {"name": "NPULAUNCH_WAIT_TIMEOUT", "value": "1800"} in c["env"], c["env"]
        else:
            assert l == {"huawei.com/Ascend910": "16", "cpu": "160", "memory": "1024Gi"}, l
            if "startupProbe" in c:
                assert c["startupProbe"]["failureThreshold"] * c["startupProbe"]["periodSeconds"] == 1800
    for k in ("tolerations", "imagePullSecrets", "priorityClassName"):
        assert k not in s, (role, k)
    assert s["containers"][0]["livenessProbe"]["exec"]["command"] == ["bash", "/opt/npulaunch/entrypoint.sh", "--check", role]
# one die of 16: its share, 10 CPUs and 64Gi
for role, s in pods(f"{T}/die-{t}"):
    if role != "router":
        assert res(s["containers"][0]) == {"huawei.com/Ascend910": "1", "cpu": "10", "memory": "64Gi"}
# the site's values, on every pod
n = 0
for role, s in pods(f"{T}/op-{t}"):
    n += 1
    assert s["tolerations"] == [
        {"key": "huawei.com/Ascend910", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
        {"key": "example.com/spot", "operator": "Exists"}], s["tolerations"]
    assert s["imagePullSecrets"] == [{"name": "swr-pull"}, {"name": "mirror-pull"}], s["imagePullSecrets"]
    assert s["priorityClassName"] == "llm-serving"
    for c in s["containers"] + s.get("initContainers", []):
        l = res(c)
        if role == "router":
            assert l == {"cpu": "2", "memory": "3Gi"}, l
            assert {"name": "NPULAUNCH_WAIT_TIMEOUT", "value": "5400"} in c["env"], c["env"]
        else:
            assert l == {"huawei.com/Ascend910": "16", "cpu": "96", "memory": "768Gi"}, l
            if "startupProbe" in c:
                assert c["startupProbe"]["failureThreshold"] * c["startupProbe"]["periodSeconds"] == 5400
    if role == "router":
        assert s["nodeSelector"] == {"node-role.example.com/cpu": "", "zone": "b"}, s["nodeSelector"]
    else:
        assert s["nodeSelector"] == {"accelerator": "huawei-Ascend910", "accelerator-type": "module-a3-16"}
        assert [c["name"] for c in s["initContainers"]] == ["tune"]
assert n >= 3
k = yaml.safe_load(open(f"{T}/op-{t}/kustomization.yaml"))
assert k["resources"][0] == "namespace.yaml", k["resources"]
ns = yaml.safe_load(open(f"{T}/op-{t}/namespace.yaml"))
assert ns["kind"] == "Namespace" and ns["metadata"]["name"] == "llm", ns
assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
# no namespace given: none made (kubectl's own)
assert "namespace.yaml" not in yaml.safe_load(open(f"{T}/pd-{t}/kustomization.yaml"))["resources"]
print("ok")
EOF
done
[[ ! -e $T/pd-k8s/namespace.yaml ]] || fail "a namespace.yaml without --namespace"
# the plan records where each value came from
"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1] + "/manifest.json"))["container"]
assert c["cpus"]["value"] == "96" and c["cpus"]["origin"] == {"layer": "site", "key": "server-cpus"}, c["cpus"]
assert c["memory"]["origin"]["layer"] == "site" and c["router_cpus"]["value"] == "2"
c = json.load(open(sys.argv[2] + "/manifest.json"))["container"]
assert c["cpus"]["value"] == "160" and c["cpus"]["origin"]["layer"] == "hardware", c["cpus"]
assert c["router_memory"]["value"] == "8Gi" and c["router_memory"]["origin"]["layer"] == "hardware"
' "$T/op-k8s" "$T/pd-k8s" || fail "the plan's container block: the resources and their origins"
# hostile or malformed values: refused with the flag or the file line, nothing written
bad=(
	"--server-cpus|1.5|error: --server-cpus '1.5' is not a number of CPUs"
	"--server-cpus|100001|error: --server-cpus '100001' is not a number of CPUs"
	"--router-cpus|-1|error: --router-cpus '-1' is not a number of CPUs"
	"--server-memory|1e9|error: --server-memory '1e9' is not a size in Ki, Mi, Gi or Ti"
	"--router-memory|8Gi\"; x|error: --router-memory '8Gi\"; x' is not a size"
	"--router-node-selector|zone|error: --router-node-selector 'zone' is not a node label KEY=VALUE"
	"--toleration|a=b:Sometimes|error: --toleration 'a=b:Sometimes' is not a toleration KEY[=VALUE][:EFFECT]"
	"--toleration|ключ|error: --toleration 'ключ' is not a toleration"
	"--image-pull-secret|-pull|error: --image-pull-secret '-pull' is not a secret name"
	"--priority-class|High|error: --priority-class 'High' is not a priority class name"
	"--startup-timeout|99999999999999999999|error: --startup-timeout '99999999999999999999' is not a start-up window in seconds"
	"--startup-timeout|5|error: --startup-timeout '5' is not a start-up window in seconds"
)
for b in "${bad[@]}"; do
	IFS='|' read -r flag val want <<<"$b"
	expect_rc 2 "$NPL" render $ID --target k8s "${SITE[@]}" "$flag" "$val" -o "$T/x"
	expect_grep "$T/err" "$want"
done
printf 'model-path: /models/m\nifname: eth0\ntoleration:\n  - a:NoSchedule\n  - "b\\nc"\n' >"$T/tol.yaml"
expect_rc 2 "$NPL" render $ID --target k8s --site "$T/tol.yaml" -o "$T/x"
expect_grep "$T/err" "tol.yaml:5:5: error: 'toleration' 'b"
[[ ! -e $T/x ]] || fail "a refused render wrote $T/x"
# the docker target has no use for them: said, refused with --strict
expect_rc 0 "$NPL" render $ID --target docker --model-path /models/m --ifname eth0 --prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 \
	--decode-ip 10.0.0.3 --decode-ip 10.0.0.4 --toleration a --startup-timeout 60
expect_grep "$T/err" "note: --toleration: render --target docker has no use for it (a Kubernetes value"
expect_grep "$T/err" "note: --startup-timeout: render --target docker has no use for it"
expect_rc 2 "$NPL" render $ID --target docker --model-path /models/m --ifname eth0 --prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 \
	--decode-ip 10.0.0.3 --decode-ip 10.0.0.4 --server-cpus 8 --strict -o "$T/x"
expect_grep "$T/err" "error: --server-cpus: render --target docker has no use for it"
# a hardware profile whose CPUs or memory are no such thing: refused where it says so
mkdir -p "$T/hw-mem"
sed 's/^  memory: 1024Gi$/  memory: lots/; s/^  router_cpus: 4$/  router_cpus: 0.5/' \
	"$NPL_SRC/recipes/hardware/ascend-a3.yaml" >"$T/hw-mem/a3.yaml"
expect_rc 5 "$NPL" --recipes "$T/hw-mem" render $ID --target k8s "${SITE[@]}" -o "$T/x"
expect_grep "$T/err" "a3.yaml:$(grep -n '^  memory: lots' "$T/hw-mem/a3.yaml" | cut -d: -f1):11: error: 'memory' is a size in Ki, Mi, Gi or Ti (like 1024Gi), not 'lots'"
expect_grep "$T/err" "error: 'router_cpus' is a whole number of CPUs from 1 to 100000, not '0.5'"

# ---- a rescheduled pod: the others resolve its name again (entrypoint.sh --check) -----------------
# The router and decode take the prefill's address at start (HCCL, memfabric and the router want
# addresses); a prefill rescheduled to another node has another. Each container's livenessProbe
# runs entrypoint.sh --check, which resolves the names again and fails when one moved, so the
# kubelet restarts the container and it starts with the new address.
"$PY" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["entrypoint.sh"], end="")' \
	"$T/pd-k8s/configmap.yaml" >"$T/ep.sh"
mkdir -p "$T/dns/bin" "$T/dns/tmp"
cat >"$T/dns/bin/getent" <<'EOF'
#!/usr/bin/env bash
# a stand-in cluster DNS: NAME ADDRESS lines of $NPL_DNS
[[ $1 == hosts ]] || exit 2
while read -r n a; do [[ $n == "$2" ]] && { echo "$a      $n"; exit 0; }; done <"$NPL_DNS"
exit 2
EOF
chmod +x "$T/dns/bin/getent"
{
	echo "deepseek-r1-prefill-0.deepseek-r1-prefill.llm 10.1.0.1"
	echo "deepseek-r1-prefill-1.deepseek-r1-prefill.llm 10.1.0.2"
	echo "deepseek-r1-decode-0.deepseek-r1-decode.llm 10.1.0.3"
	echo "deepseek-r1-decode-0-1.deepseek-r1-decode.llm 10.1.0.4"
} >"$T/dns/hosts"
ep() { env PATH="$T/dns/bin:$PATH" NPL_DNS="$T/dns/hosts" TMPDIR="$T/dns/tmp" NPULAUNCH_NAMESPACE=llm \
	NPULAUNCH_RESOLVE_TIMEOUT=0 bash "$T/ep.sh" "$@"; }
# the router starts: the addresses recorded (router.sh is not here: the exec fails after that)
run ep router
expect_eq "$(cat "$T/dns/tmp/npulaunch-addresses")" "PREFILL_IPS=10.1.0.1 10.1.0.2
DECODE_IPS=10.1.0.3 10.1.0.4
resolved" "the addresses the router's start recorded"
run ep --check router
expect_eq "$rc" 0 "--check with every name where it was"
# a prefill being replaced has no record for a while: no change yet
sed -i '/prefill-1/d' "$T/dns/hosts"
run ep --check router
expect_eq "$rc" 0 "--check while a name has no record"
# ... and comes back on another node: the check fails, saying which
echo "deepseek-r1-prefill-1.deepseek-r1-prefill.llm 10.1.0.9" >>"$T/dns/hosts"
run ep --check router
expect_eq "$rc" 1 "--check after a prefill moved"
expect_grep "$T/err" "entrypoint.sh: deepseek-r1-prefill-1.deepseek-r1-prefill.llm is now 10.1.0.9, not 10.1.0.2 (node 1 of PREFILL_IPS): restart to launch with it"
# a decode pod checks the prefill's too (ASCEND_MF_STORE_URL), with its own group's arguments absent
run ep --check decode
expect_eq "$rc" 1 "a decode pod's --check after a prefill moved"
# the restarted container records the new addresses: the check passes again
run ep router
run ep --check router
expect_eq "$rc" 0 "--check after the restart resolved anew"
# a container still resolving at its start (the record not complete), or with no record, has
# nothing to compare: the probe must not restart it while it waits for its peers' records
# (the router has its prefill addresses and waits for the decode's records)
sed -i '/^resolved$/d; /^DECODE_IPS=/d' "$T/dns/tmp/npulaunch-addresses"
run ep --check router
expect_eq "$rc" 0 "--check while the container is still resolving"
rm -f "$T/dns/tmp/npulaunch-addresses"
run ep --check router
expect_eq "$rc" 0 "--check without a record"
# a complete record that lacks a list is no record of this entrypoint's
printf 'DECODE_IPS=10.1.0.3 10.1.0.4\nresolved\n' >"$T/dns/tmp/npulaunch-addresses"
run ep --check router
expect_eq "$rc" 2 "--check with a record without PREFILL_IPS"
expect_grep "$T/err" "no address of PREFILL_IPS recorded"

# ---- the hardware profile's container block: checked as strictly as the rest ------------------
mkdir -p "$T/hw-bad" "$T/hw-none"
cat >"$T/hw-bad/a3.yaml" <<'EOF'
kind: hardware
id: ascend-a3
name: Ascend A3 Series Products
dies_per_card: 2
cards_per_node: 8
container:
  image: lmsysorg/sglang:x
  npu_unit: chip
  mounts: {/usr/local/Ascend/driver: Folder}
  devicse: [/dev/davinci0]
EOF
expect_rc 5 "$NPL" --recipes "$T/hw-bad" render $ID --target k8s "${SITE[@]}"
expect_grep "$T/err" "a3.yaml:8:13: error: 'npu_unit' is card or die (what the device plugin counts), not 'chip'"
expect_grep "$T/err" "a3.yaml:9:38: error: '/usr/local/Ascend/driver: Folder' in 'mounts' is not a host path and its kind (Directory, File or DirectoryOrCreate)"
expect_grep "$T/err" "a3.yaml:10:3: error: unknown key 'devicse' in 'container' (did you mean 'devices'?)"
# a profile without one: the image and the NPU resource must come from the site
sed '/^container:/,$d' "$NPL_SRC/recipes/hardware/ascend-a3.yaml" >"$T/hw-none/a3.yaml"
expect_rc 2 "$NPL" --recipes "$T/hw-none" render $ID --target rbg "${SITE[@]}"
expect_grep "$T/err" "error: render --target rbg needs --image: hardware profile 'ascend-a3' has no container.image"
expect_grep "$T/err" "error: render --target rbg needs --npu-resource: hardware profile 'ascend-a3' has no container.npu_resource"
expect_grep "$T/err" "error: render --target rbg needs --server-cpus: hardware profile 'ascend-a3' has no container.cpus"
expect_grep "$T/err" "error: render --target rbg needs --router-memory: hardware profile 'ascend-a3' has no container.router_memory"
expect_rc 0 "$NPL" --recipes "$T/hw-none" render $ID --target rbg "${SITE[@]}" --image sglang:npu \
	--npu-resource huawei.com/Ascend910 --npu-unit card --server-cpus 64 --server-memory 512Gi --router-cpus 1 \
	--router-memory 1Gi -o "$T/hw-none-out"
run kval "$T/hw-none-out"
[[ $rc == 0 ]] || fail "a render from site values alone: $(cat "$T/out")"

# ---- the entrypoint: npl_ names only, and shellcheck clean -----------------------------------
for v in $(grep -o '\b[A-Za-z_][A-Za-z0-9_]*=' "$NPL_SRC/templates/k8s/entrypoint.sh.tmpl" | tr -d = | sort -u); do
	[[ $v == npl_* ]] || fail "entrypoint.sh.tmpl assigns '$v': call it npl_$v"
done
if command -v shellcheck >/dev/null; then
	"$PY" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["entrypoint.sh"], end="")' \
		"$B/configmap.yaml" >"$T/entrypoint.sh"
	sc -s bash "$T/entrypoint.sh" >"$T/sc" 2>&1 || fail "shellcheck entrypoint.sh: $(head -30 "$T/sc")"
fi

# ---- goldens: 8-card mixed, 1P1D with a two-node decode, 4P1D (two-node prefills) -------------
# The role scripts in the ConfigMap are the scripts' own (their tests cover them): left out;
# the entrypoint compared as a file of its own; the version in the headers left out too.
golden_norm() {  # DIR OUT: the bundle's manifests as compared
	"$PY" - "$1" "$2" <<'EOF'
import os, re, sys, yaml
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
for f in sorted(os.listdir(src)):
    if not f.endswith(".yaml"):
        continue
    text = open(os.path.join(src, f)).read()
    if f == "configmap.yaml":
        # the entrypoint as a file of its own, to read; the role scripts as placeholders
        cm = yaml.safe_load(text)
        with open(os.path.join(out, "entrypoint.sh"), "w") as fp:
            fp.write(re.sub(r"npulaunch \d[\w.+-]*\w", "npulaunch VERSION", cm["data"]["entrypoint.sh"]))
        for k in cm["data"]:
            cm["data"][k] = "(entrypoint.sh)" if k == "entrypoint.sh" else "(the role script)"
        text = yaml.safe_dump(cm, sort_keys=False, width=1000)
    open(os.path.join(out, f), "w").write(re.sub(r"npulaunch \d[\w.+-]*\w", "npulaunch VERSION", text))
EOF
}
declare -A GOLD=([kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms]="" [deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms]="" \
	[shape-moe-w8a8-4p1d-72p-in32k-out1k-50ms]="--recipes $SHAPES")
for target in k8s rbg; do
	for id in "${!GOLD[@]}"; do
		# shellcheck disable=SC2086
		expect_rc 0 "$NPL" ${GOLD[$id]} render "$id" --target $target "${SITE[@]}" -o "$T/gold/$target/$id"
		golden_norm "$T/gold/$target/$id" "$T/norm/$target/$id"
		if [[ ${NPL_UPDATE_GOLDEN:-} == 1 ]]; then
			rm -rf "${GOLDEN:?}/$target/$id" && mkdir -p "$GOLDEN/$target" && cp -r "$T/norm/$target/$id" "$GOLDEN/$target/$id"
		fi
		diff -ru "$GOLDEN/$target/$id" "$T/norm/$target/$id" >"$T/diff" ||
			fail "$target $id differs from its golden (NPL_UPDATE_GOLDEN=1 to accept): $(head -40 "$T/diff")"
	done
done

# ---- as root: the pods on a simulated cluster ----------------------------------------------------
if [[ $(id -u) != 0 ]] || ! command -v ip >/dev/null || ! command -v nsenter >/dev/null; then
	echo "skip: the pod simulation needs root, ip and nsenter (network and mount namespaces)"
	finish
fi
{ echo '#!/usr/bin/env bash'; declare -f make_root; echo "NPL_STUB=$NPL_STUB"; echo 'make_root "$1"'; } >"$T/make-root.sh"
chmod +x "$T/make-root.sh"
export NPL_MAKE_ROOT=$T/make-root.sh

# sim TARGET NAME ARGS...: render into $T/sim/NAME and run its pods; the result in $T/sim/NAME.out
sim() {
	local target=$1 name=$2
	local -a tune=()
	shift 2
	[[ " $* " == *" --tune "* ]] && tune=(--tune)
	mkdir -p "$T/sim/$name.roots"
	"$NPL" "$@" --target "$target" -o "$T/sim/$name" >"$T/sim/$name.out" 2>&1 &&
		"$PY" "$TOOLS/k8s_sim.py" "$target" "$T/sim/$name" "$T/sim/$name.roots" "${tune[@]}" --dns-late 1.2 >>"$T/sim/$name.out" 2>&1
	echo "$?" >"$T/sim/$name.rc"
}
# every shape the shipped recipes have, and those beyond them (instances sharing a node, a
# four-node decode, two-node prefills)
runs=(
	"k8s mixed8 render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms ${SITE[*]}"
	"k8s mixed16 render kimi-k2.6-w4a8-16p-in64k-out1k-100ms ${SITE[*]}"
	"k8s mixed1 render qwen3.6-27b-w8a8-1p-in3k5-out1k5-50ms ${SITE[*]}"
	"k8s mixed2 render qwen3.6-35b-a3b-2p-in984k-out1k ${SITE[*]}"
	"k8s mixed1die render qwen3-8b-w8a8-1p-in3k5-out1k5-37ms ${SITE[*]}"
	"k8s mixed2card render qwen3-next-80b-a3b-instruct-w8a8-2p-in3k5-out1k5-50ms ${SITE[*]}"
	"k8s 1p1d render deepseek-r1-w4a8-1p1d-16p-in3k5-out1k5-50ms ${SITE[*]}"
	"k8s 2p1d render deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms ${SITE[*]}"
	"k8s 1p1d2n render deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms ${SITE[*]} --tune"
	"k8s 4p1d --recipes $SHAPES render shape-moe-w8a8-4p1d-72p-in32k-out1k-50ms ${SITE[*]}"
	"k8s shared --recipes $SHAPES render shape-moe-w8a8-4p1d-a2-24p-shared-50ms ${SITE[*]}"
	"k8s decode4n --recipes $SHAPES render shape-moe-w8a8-1p1d-40p-decode4n-50ms ${SITE[*]}"
	"rbg r-mixed16 render kimi-k2.6-w4a8-16p-in64k-out1k-100ms ${SITE[*]}"
	"rbg r-mixed8 render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms ${SITE[*]} --tune"
	"rbg r-2p1d render deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms ${SITE[*]}"
	"rbg r-4p1d --recipes $SHAPES render shape-moe-w8a8-4p1d-72p-in32k-out1k-50ms ${SITE[*]}"
	"rbg r-shared --recipes $SHAPES render shape-moe-w8a8-4p1d-a2-24p-shared-50ms ${SITE[*]}"
)
# the pods mostly wait (on DNS records, on the servers' /health): several deployments at once
mkdir -p "$T/sim"
for r in "${runs[@]}"; do
	# shellcheck disable=SC2086
	sim $r &
	while (($(jobs -rp | wc -l) >= 4)); do wait -n; done
done
wait
for r in "${runs[@]}"; do
	read -r _ name _ <<<"$r"
	[[ $(cat "$T/sim/$name.rc" 2>/dev/null) == 0 ]] || fail "simulated $r: $(tail -c 3000 "$T/sim/$name.out")"
done

# ... and the simulation fails what it must: an entrypoint that does not wait for a DNS record,
# and a router that does not wait for the servers
cp -r "$T/sim/1p1d2n" "$T/sim/noretry"
sed -i 's/((SECONDS - npl_t0 < npl_timeout)) ||/((SECONDS - npl_t0 < 0)) ||/' "$T/sim/noretry/configmap.yaml"
mkdir -p "$T/sim/noretry.roots"
run "$PY" "$TOOLS/k8s_sim.py" k8s "$T/sim/noretry" "$T/sim/noretry.roots" --dns-late 1.2
[[ $rc == 1 ]] || fail "an entrypoint that does not wait for the leader's record passed: $(tail -5 "$T/out")"
expect_grep "$T/out" "no address for deepseek-v3-2-prefill-0.deepseek-v3-2-prefill.default"
cp -r "$T/sim/2p1d" "$T/sim/nowait"
# (the router's Deployment: its container's env is the one at this depth)
sed -i '/^        - name: NPULAUNCH_WAIT_TIMEOUT$/{n;s/value: "1800"/value: "0"/}' "$T/sim/nowait/workloads.yaml"
grep -A1 -- '- name: NPULAUNCH_WAIT_TIMEOUT' "$T/sim/nowait/workloads.yaml" | grep -q 'value: "0"' ||
	fail "the router's NPULAUNCH_WAIT_TIMEOUT was not set to 0 in the copy"
mkdir -p "$T/sim/nowait.roots"
run "$PY" "$TOOLS/k8s_sim.py" k8s "$T/sim/nowait" "$T/sim/nowait.roots" --dns-late 1.2
[[ $rc == 1 ]] || fail "a router that does not wait for the servers passed: $(tail -5 "$T/out")"
expect_grep "$T/out" "the router started before every server answered /health"
# the tuning the init containers did is journaled on each node; tune --revert there puts it back
R1=$T/sim/1p1d2n.roots/node0
[[ -f $R1/run/npulaunch/tune-journal.json ]] || fail "no tuning journal on node0"
expect_eq "$(state_of "$R1")" "performance performance 0 0 50000 " "node0 tuned by the init container"
expect_rc 0 "$NPL" tune --revert --root "$R1"
expect_eq "$(state_of "$R1")" "schedutil schedutil 60 1 500000 " "node0 reverted"
finish
