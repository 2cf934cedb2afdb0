# render: files and modes, standard output, --site files, --all byte-identical and
# clean under shellcheck, --check (stale, missing, extra; writes nothing),
# unknown recipes, and scripts that refuse to start before touching the host.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
ID=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms

# -o DIR: the role script, bench.sh and manifest.json, with their modes
expect_rc 0 "$NPL" render $ID --model-path /m --draft-model-path /d --ifname eth0 -o "$T/one"
expect_eq "$(cd "$T/one" && stat -c '%n %a' -- * | tr '\n' ' ')" \
	"bench.sh 755 manifest.json 644 pd-mixed.sh 755 " "files of render -o"
expect_grep "$T/one/pd-mixed.sh" "MODEL_PATH=/m  # --model-path"
expect_grep "$T/one/pd-mixed.sh" "exec python3 -m sglang.launch_server \\"
expect_eq "$(head -c 19 "$T/one/pd-mixed.sh")" "#!/usr/bin/env bash" "shebang"
[[ -e $T/one/prefill.sh ]] && fail "a pd-mixed recipe rendered prefill.sh"

# a disaggregated recipe: prefill, decode, router
expect_rc 0 "$NPL" render deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms -o "$T/dis"
expect_eq "$(cd "$T/dis" && echo *)" "bench.sh decode.sh manifest.json prefill.sh router.sh" "disagg files"
# values not given are named in a note and left as variables
expect_grep "$T/err" "not given: --model-path (MODEL_PATH), --ifname (IFNAME), --prefill-ip (PREFILL_IPS), --decode-ip (DECODE_IPS)"
expect_grep "$T/dis/prefill.sh" "read -r -d '' -a PREFILL_IPS <<< \"\${PREFILL_IPS:-}\" || true"

# without -o: every file on stdout under a line naming it
expect_rc 0 "$NPL" render $ID
expect_eq "$(grep '^==> ' "$T/out" | tr '\n' ' ')" "==> pd-mixed.sh <== ==> bench.sh <== ==> manifest.json <== " "stdout headers"

# --site FILE, and flags win over it
cat >"$T/site.yaml" <<'YAML'
model-path: /from/site
draft-model-path: /from/site-draft
ifname: bond0
YAML
expect_rc 0 "$NPL" render $ID --site "$T/site.yaml" --model-path /from/flag -o "$T/site"
expect_grep "$T/site/pd-mixed.sh" "MODEL_PATH=/from/flag  # --model-path"
expect_grep "$T/site/pd-mixed.sh" "DRAFT_MODEL_PATH=/from/site-draft  # --draft-model-path"
expect_grep "$T/site/pd-mixed.sh" "IFNAME=bond0  # --ifname"
printf 'model_path: /x\n' >"$T/bad-site.yaml"
expect_rc 2 "$NPL" render $ID --site "$T/bad-site.yaml"
expect_grep "$T/err" "$T/bad-site.yaml:1:1: error: unknown site key 'model_path' (did you mean 'model-path'?)"
expect_rc 2 "$NPL" render $ID --model-path relative/path
expect_grep "$T/err" "error: --model-path must be an absolute path, not 'relative/path'"
expect_rc 2 "$NPL" render $ID --ifname 'eth0;reboot'
expect_rc 2 "$NPL" render kimi-k2.6-w4a8-16p-in64k-out1k-100ms --node-ip 10.0.0.1
expect_grep "$T/err" "needs 2 addresses in rank order, got 1"

# unknown recipe: exit 3 with a suggestion; bad usage: exit 2
expect_rc 3 "$NPL" render kimi-k2.6-w4a8-8p-in3k5-out1k5-21ms
expect_grep "$T/err" "no recipe or model 'kimi-k2.6-w4a8-8p-in3k5-out1k5-21ms' (did you mean 'kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms'?)"
expect_rc 2 "$NPL" render $ID --bogus
expect_rc 2 "$NPL" render
expect_rc 2 "$NPL" render --all $ID -o "$T/x"
expect_rc 2 "$NPL" render $ID --check

# --all: one folder per recipe, byte-identical twice, shellcheck-clean
expect_rc 0 "$NPL" render --all -o "$T/a1"
expect_rc 0 "$NPL" render --all -o "$T/a2"
expect_eq "$(find "$T/a1" -mindepth 1 -maxdepth 1 -type d | wc -l)" 61 "recipe folders"
diff -r "$T/a1" "$T/a2" >/dev/null || fail "two runs of render --all differ"
if command -v shellcheck >/dev/null; then
	sc "$T"/a1/*/*.sh >"$T/sc" 2>&1 || fail "shellcheck: $(head -c 3000 "$T/sc")"
else
	fail "shellcheck is not installed (the README's first command installs it)"
fi

# --check: clean, then a one-byte edit, a deleted file and an extra file; never writes
expect_rc 0 "$NPL" render --all -o "$T/a1" --check
snap() { find "$T/a1" -printf '%p %s %m %T@\n' | sort; }
sed -i '5s/^#/#!/' "$T/a1/$ID/pd-mixed.sh"
rm "$T/a1/deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms/bench.sh"
touch "$T/a1/$ID/notes.txt"
mkdir "$T/a1/old-recipe"
before=$(snap)
expect_rc 1 "$NPL" render --all -o "$T/a1" --check
expect_eq "$(cat "$T/out")" "missing $T/a1/deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms/bench.sh
edited $T/a1/$ID/pd-mixed.sh
extra $T/a1/kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms/notes.txt
extra $T/a1/old-recipe/" "--check report"
expect_eq "$(snap)" "$before" "--check changed the folder"
# a file where the folder belongs: said so, as render says it, not every file "missing"
echo user-data >"$T/afile"
expect_rc 1 "$NPL" render --all -o "$T/afile" --check
expect_grep "$T/err" "npulaunch: error: '$T/afile' exists and is not a directory: nothing to compare"
expect_eq "$(cat "$T/out")" "" "render --check into a file: standard output"
expect_eq "$(cat "$T/afile")" user-data "the file render --check was pointed at"
# a single recipe folder checks the same way
expect_rc 0 "$NPL" render $ID --model-path /m --draft-model-path /d --ifname eth0 -o "$T/one" --check
chmod 644 "$T/one/pd-mixed.sh"
expect_rc 1 "$NPL" render $ID --model-path /m --draft-model-path /d --ifname eth0 -o "$T/one" --check
expect_eq "$(cat "$T/out")" "stale $T/one/pd-mixed.sh" "mode change is stale"
# the benchmark's results in a bundle (npulaunch bench's, bench_serving's own) are no difference,
# also in a folder whose name is a glob pattern; a .jsonl in a subfolder still is
mkdir -p "$T/g[1]*"
expect_rc 0 "$NPL" render $ID --model-path /m --draft-model-path /d --ifname eth0 -o "$T/g[1]*"
touch "$T/g[1]*/bench-results.jsonl" "$T/g[1]*/sglang_1205_1600_3500_1500.jsonl"
expect_rc 0 "$NPL" render $ID --model-path /m --draft-model-path /d --ifname eth0 -o "$T/g[1]*" --check
mkdir "$T/g[1]*/old"
touch "$T/g[1]*/old/x.jsonl"
expect_rc 1 "$NPL" render $ID --model-path /m --draft-model-path /d --ifname eth0 -o "$T/g[1]*" --check
expect_eq "$(cat "$T/out")" "extra $T/g[1]*/old/" "a folder of results is extra"

# --templates DIR: the shipped templates from disk give the same bytes; an edited one shows
expect_rc 0 "$NPL" --templates "$NPL_SRC/templates" render --all -o "$T/a2" --check
cp -r "$NPL_SRC/templates" "$T/tmpl"
sed -i 's/^set -euo pipefail$/set -euo pipefail  # edited/' "$T/tmpl/bench.sh.tmpl"
expect_rc 0 "$NPL" render $ID --templates "$T/tmpl" -o "$T/edited"
expect_grep "$T/edited/bench.sh" "set -euo pipefail  # edited"
rm "$T/tmpl/_env.sh.tmpl"
expect_rc 1 "$NPL" render $ID --templates "$T/tmpl" -o "$T/broken"
expect_grep "$T/err" "cannot read '$T/tmpl/_env.sh.tmpl': No such file or directory"
[[ -e $T/broken ]] && fail "a template error left $T/broken behind"

# a script whose site value is missing stops before it touches the host
make_root "$T/root"
before=$(state_of "$T/root")
expect_rc 2 env -i PATH="$T/root.bin:/usr/bin:/bin" NPULAUNCH_ROOT="$T/root" NPULAUNCH_PREFLIGHT=0 NPL_STUB_LOG="$T/calls" \
	bash "$T/dis/prefill.sh"
expect_grep "$T/err" "prefill.sh: MODEL_PATH is not set: set MODEL_PATH= at the top of prefill.sh, export MODEL_PATH, or render again with --model-path"
expect_eq "$(state_of "$T/root")" "$before" "host state after a refused start"
[[ -e $T/calls ]] && fail "a refused start launched something"
# exported values fill the variables; a node that is not listed stops too
expect_rc 2 env -i PATH="$T/root.bin:/usr/bin:/bin" NPULAUNCH_ROOT="$T/root" NPULAUNCH_PREFLIGHT=0 NPL_STUB_LOG="$T/calls" \
	MODEL_PATH=/m IFNAME=eth0 PREFILL_IPS=10.0.0.1 DECODE_IPS=10.0.0.2 NPULAUNCH_NODE_IP=10.9.9.9 \
	bash "$T/dis/prefill.sh"
expect_grep "$T/err" "prefill.sh: this host (10.9.9.9) is not in PREFILL_IPS (10.0.0.1): run prefill.sh on one of those nodes, or set NPULAUNCH_NODE_IP"
expect_eq "$(state_of "$T/root")" "$before" "host state after an unknown node"
expect_rc 0 env -i PATH="$T/root.bin:/usr/bin:/bin" NPULAUNCH_ROOT="$T/root" NPULAUNCH_PREFLIGHT=0 NPL_STUB_LOG="$T/calls" \
	MODEL_PATH=/m IFNAME=eth0 PREFILL_IPS=10.0.0.1 DECODE_IPS=10.0.0.2 NPULAUNCH_NODE_IP=10.0.0.1 \
	bash "$T/dis/prefill.sh"
expect_eq "$(state_of "$T/root")" "performance performance 0 0 50000 " "host state after a start"
expect_grep "$T/calls" '"--model-path","/m"'
# without NPULAUNCH_NODE_IP the node is found among the addresses hostname -I prints
printf '#!/bin/sh\n[ "$1" = -I ] && echo "192.168.7.7 10.0.0.2 fe80::1 "\n' >"$T/root.bin/hostname"
chmod +x "$T/root.bin/hostname"
rm -f "$T/calls"
expect_rc 0 env -i PATH="$T/root.bin:/usr/bin:/bin" NPULAUNCH_ROOT="$T/root" NPULAUNCH_PREFLIGHT=0 NPL_STUB_LOG="$T/calls" \
	MODEL_PATH=/m IFNAME=eth0 PREFILL_IPS=10.0.0.1 DECODE_IPS=10.0.0.2 bash "$T/dis/decode.sh"
expect_grep "$T/calls" '"--disaggregation-mode","decode","--host","10.0.0.2"'
expect_rc 2 env -i PATH="$T/root.bin:/usr/bin:/bin" NPULAUNCH_ROOT="$T/root" NPULAUNCH_PREFLIGHT=0 NPL_STUB_LOG="$T/calls" \
	MODEL_PATH=/m IFNAME=eth0 PREFILL_IPS=10.0.0.1 DECODE_IPS=10.0.0.2 bash "$T/dis/prefill.sh"
expect_grep "$T/err" "this host (192.168.7.7 10.0.0.2 fe80::1) is not in PREFILL_IPS (10.0.0.1)"
finish
