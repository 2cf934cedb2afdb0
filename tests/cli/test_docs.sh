# Every example of README.md, docs/*.md and the man page runs as shown (tests/tools/doc_examples.py
# says how): in a sandbox with a rendered PD bundle in deploy/, a site file, results files and a
# fake host root; as root each in a network namespace of its own, so no probe leaves the machine.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
S=$T/sandbox
mkdir -p "$S"
make_root "$S/root"
cat >"$S/site.yaml" <<'YAML'
model-path: /data/models/Kimi-K2.6-W4A8
draft-model-path: /data/models/Kimi-K2.6-EAGLE3
ifname: enp189s0f0
prefill-ip: 10.0.0.11
decode-ip: 10.0.0.12
YAML
expect_rc 0 "$NPL" render kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms --site "$S/site.yaml" -o "$S/deploy"
# the cluster's site file docs/kubernetes.md shows, as it shows it: its worked example renders with it
awk '/^# k8s-site.yaml:/ { on = 1 } on && /^```/ { exit } on' "$NPL_SRC/docs/kubernetes.md" >"$S/k8s-site.yaml"
grep -q '^startup-timeout: ' "$S/k8s-site.yaml" || fail "docs/kubernetes.md shows no k8s-site.yaml with the operator's values"
cp "$NPL_DATA/bench/pass.jsonl" "$S/results.jsonl"
cp "$NPL_DATA/bench/pass.jsonl" "$S/bench-results.jsonl"
cp "$NPL_DATA/bench/pass.jsonl" "$S/deploy/bench-results.jsonl"
mkdir -p "$S/my-recipes"
cp "$NPL_SRC"/recipes/qwen3-8b/*.yaml "$S/my-recipes/"
sed -i 's/^id: qwen3-8b$/id: my-qwen3-8b/; s/^model: qwen3-8b$/model: my-qwen3-8b/; s/^title: Qwen3-8B/title: My-Qwen3-8B/' "$S"/my-recipes/*.yaml
# upstream pages for the import and drift examples
mkdir -p "$S/best-practices" "$S/docs/best-practices"
cp "$NPL_DATA"/pages/upstream-2026/glm_5_2.mdx "$NPL_DATA"/pages/upstream-2026/qwen3_8b.mdx "$NPL_DATA"/pages/upstream-2026/mimo_v2_5_pro.mdx "$S/"
cp "$NPL_DATA"/pages/upstream-2026/deepseek_r1.mdx "$NPL_DATA"/pages/upstream-2026/qwen3_8b.mdx "$S/best-practices/"
cp "$NPL_DATA"/pages/upstream-2026/deepseek_r1.mdx "$NPL_DATA"/pages/upstream-2026/qwen3_8b.mdx "$S/docs/best-practices/"
python3 "$NPL_SRC/tests/tools/doc_examples.py" "$NPL_SRC" "$NPL" "$S" >"$T/report" 2>&1 || fail "$(grep -A3 '^FAIL' "$T/report"; tail -n 1 "$T/report")"
tail -n 1 "$T/report"
finish
