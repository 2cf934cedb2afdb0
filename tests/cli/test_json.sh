# Every command's --json against its schema, docs/json/CMD.schema.json (the contract that
# docs/json.md describes), in the situations that give each variant of the document: success and
# failure, every mode. Each run must print exactly one JSON document on standard output (messages
# go to standard error) that its schema accepts; a run that fails before it has anything to
# report prints nothing on standard output. The schemas themselves must be valid draft 2020-12
# and strict (every object closed, its required fields named), every command that `npulaunch
# help` lists (but help) must have one and be run here, and the checker must refuse documents
# that break a schema.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
SCHEMAS=$NPL_SRC/docs/json
CHECK=$NPL_SRC/tests/tools/json_check.py
K20=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
K50=kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms
KP=kimi-k2.6-w4a8-1p1d-16p-in64k-out1k5-prefix90-100ms
PD=deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms
KSITE=(--model-path /m --draft-model-path /d --ifname eth0)
PDSITE=(--model-path /m --ifname eth0 --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2)

need_python jsonschema

# the schemas: valid, strict, one per command that reports, each described in docs/json.md
run "$PY" "$CHECK" --lint "$SCHEMAS"
[[ $rc == 0 ]] || fail "the schemas: $(cat "$T/out" "$T/err")"
expect_rc 0 "$NPL" help
mapfile -t cmds < <(sed -n '/^Commands:/,/^$/s/^  \([a-z]\{1,\}\)  .*/\1/p' "$T/out")
((${#cmds[@]} >= 14)) || fail "help lists ${#cmds[@]} commands: ${cmds[*]}"
for c in "${cmds[@]}"; do
	[[ $c == help ]] && continue
	[[ -f $SCHEMAS/$c.schema.json ]] || fail "no schema docs/json/$c.schema.json for $c --json"
done
for s in "$SCHEMAS"/*.schema.json; do
	c=$(basename "$s" .schema.json)
	# manifest.schema.json: the document render writes and the commands read (test_manifest.sh)
	[[ $c == manifest ]] || printf '%s\n' "${cmds[@]}" | grep -qx -- "$c" || fail "docs/json/$c.schema.json is no command's"
	grep -qF "json/$c.schema.json" "$NPL_SRC/docs/json.md" || fail "docs/json.md does not describe json/$c.schema.json"
done

# json SCHEMA WANT-EXIT CMD...: run CMD (its --json given), keep standard output for the checker
declare -A seen
ndoc=0
: >"$T/list"
json() {
	local schema=$1 want=$2
	shift 2
	run "$@"
	[[ $rc == "$want" ]] || fail "$* exited $rc, want $want; stderr: $(head -c 1500 "$T/err")"
	ndoc=$((ndoc + 1))
	cp "$T/out" "$T/doc$ndoc"
	printf '%s\t%s\t%s\n' "$schema" "$T/doc$ndoc" "$*" >>"$T/list"
	seen[$schema]=1
}
# nojson WANT-EXIT CMD...: a run that fails before it reports: nothing on standard output
nojson() {
	local want=$1
	shift
	run "$@"
	[[ $rc == "$want" ]] || fail "$* exited $rc, want $want; stderr: $(head -c 1500 "$T/err")"
	[[ -s $T/out ]] && fail "$* printed on standard output: $(head -c 300 "$T/out")"
	[[ -s $T/err ]] || fail "$* said nothing on standard error"
}

# list: recipes, a query, a query that keeps none, models, profiles
json list 0 "$NPL" list --json
json list 0 "$NPL" list kimi-k2.6 --tpot 50ms --cards 8 --json
json list 0 "$NPL" list --model Kimi-K2.6 --mode pd-disagg --json
json list 0 "$NPL" list kimi-k2.6 --tpot 1ms --json
expect_eq "$(cat "$T/out")" "[]" "list with a query that keeps nothing"
json list 0 "$NPL" list --models --json
json list 0 "$NPL" list --profiles --json
nojson 2 "$NPL" list --ids --json
nojson 3 "$NPL" list kimi --json

# validate: the database, a folder with errors, site files good and bad
json validate 0 "$NPL" validate --json
json validate 5 "$NPL" validate "$NPL_DATA/recipes/bad" --json
printf 'model-path: /data/m\nprefill-ip: [10.0.0.1, 10.0.0.2]\n' >"$T/site-ok.yaml"
printf 'model-path: relative\nbogus: 1\n' >"$T/site-bad.yaml"
json validate 0 "$NPL" validate --site "$T/site-ok.yaml" --json
json validate 2 "$NPL" validate --site "$T/site-bad.yaml" --site "$T/site-ok.yaml" --json
# validate reports on standard output what the others say on standard error: the summary stays there
expect_grep "$T/err" "validate: 2 site files"

# show: every recipe shipped and every deployment shape of the tests, by id; a query, the
# nearest, site values (IPv6 too) and overrides
while read -r id; do
	json show 0 "$NPL" show "$id" --json
done < <("$NPL" list --ids)
while read -r id; do
	json show 0 "$NPL" --recipes "$NPL_DATA/recipes/good" show "$id" --json
done < <("$NPL" --recipes "$NPL_DATA/recipes/good" list --ids | grep -v -e '^kimi-k2.6-w4a8' -e '^deepseek-' -e '^qwen3')
json show 0 "$NPL" show kimi-k2.6 --tpot 20ms --json
expect_grep "$T/err" "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms (TPOT 20ms"
json show 0 "$NPL" show kimi-k2.6 --tpot 1ms --nearest --json
json show 0 "$NPL" show $PD --model-path /m --ifname eth0 --prefill-ip 10.0.0.1 --decode-ip fd00::2 --json
json show 0 "$NPL" show $K20 "${KSITE[@]}" --set --max-running-requests=3 --set pd-mixed:--foo=1 \
	--env X=1 --unset-env SGLANG_NPU_USE_MLAPO --allow-unknown-flag --json
json show 0 "$NPL" show $K20 --slurm-partition p --image reg/img:1 --json
nojson 3 "$NPL" show no-such-recipe --json
nojson 4 "$NPL" show qwen3.5-397b-a17b --tpot 20ms --json

# render: to standard output (each file's text), into a folder, --check current and with every
# state, --all, the other targets
json render 0 "$NPL" render $K20 --json
json render 0 "$NPL" render $K20 "${KSITE[@]}" -o "$T/b" --json
json render 0 "$NPL" render $K20 "${KSITE[@]}" -o "$T/b" --check --json
echo '# edited' >>"$T/b/bench.sh"
touch "$T/b/mine.sh"
json render 1 "$NPL" render $PD "${PDSITE[@]}" -o "$T/b" --check --json
for s in stale edited missing extra; do
	grep -q "\"state\":[[:space:]]*\"$s\"" "$T/out" || fail "render --check --json has no $s file: $(head -c 2000 "$T/out")"
done
json render 0 "$NPL" render --all -o "$T/all" --json
json render 0 "$NPL" render --all -o "$T/all" --check --json
json render 0 "$NPL" render $PD --target k8s --model-path /m --ifname eth0 --json
json render 0 "$NPL" render $PD --target docker --model-path /m --ifname eth0 -o "$T/docker" --json
json render 0 "$NPL" render $K20 --target slurm "${KSITE[@]}" --slurm-gres npu -o "$T/slurm" --json
nojson 2 "$NPL" render $K20 -o "" --json

# diff: different, the same, roles only in one, unsets and sources that differ
json diff 1 "$NPL" diff $K20 $K50 --json
json diff 0 "$NPL" diff $K20 $K20 --json
json diff 1 "$NPL" diff $K20 $PD --json
json diff 1 "$NPL" diff $K20 deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms --json
json diff 1 "$NPL" diff $K20 qwen3-30b-a3b-w8a8-1p-in3k5-out1k5-10ms --json
json diff 1 "$NPL" diff 'kimi-k2.6 --tpot 20ms' 'kimi-k2.6 --tpot 50ms' --json
nojson 3 "$NPL" diff $K20 no-such-recipe --json

# apply --dry-run on a fake host: a server that would start, one missing its site values, each
# role of a PD recipe (the router and the benchmark tune nothing), pinned CPUs
make_root "$T/root"
export PATH="$T/root.bin:$PATH"
json apply 0 "$NPL" apply $K20 "${KSITE[@]}" --root "$T/root" --dry-run --cpus 0-1 --json
json apply 2 "$NPL" apply $K20 --root "$T/root" --dry-run --json
expect_grep "$T/err" "a real run would stop on"
for role in prefill decode router bench; do
	ip=10.0.0.1
	[[ $role == decode ]] && ip=10.0.0.2
	json apply 0 env NPULAUNCH_NODE_IP=$ip "$NPL" apply $PD --role $role "${PDSITE[@]}" \
		--root "$T/root" --dry-run --json
done
nojson 2 "$NPL" apply $K20 "${KSITE[@]}" --root "$T/root" --json

# preflight on the fake host (no NPU, no model: checks fail)
json preflight 1 "$NPL" preflight $K20 "${KSITE[@]}" --root "$T/root" --json
json preflight 1 env NPULAUNCH_NODE_IP=10.0.0.2 "$NPL" preflight $PD --role decode "${PDSITE[@]}" --root "$T/root" --json
json preflight 0 "$NPL" preflight $PD --role router "${PDSITE[@]}" --root "$T/root" --json

# tune: --check that differs, --dry-run, another hardware's profile, --apply (a recipe's profile,
# the default's), --check that matches, --revert
json tune 1 "$NPL" tune --check --root "$T/root" --json
expect_grep "$T/err" "tune: 5 of 5 settings differ"
json tune 0 "$NPL" tune --dry-run --root "$T/root" --json
json tune 1 "$NPL" tune --hardware ascend-a2 --root "$T/root" --json
json tune 0 "$NPL" tune --apply $K20 --root "$T/root" --json
json tune 0 "$NPL" tune --apply --root "$T/root" --json
json tune 0 "$NPL" tune --check --root "$T/root" --json
json tune 0 "$NPL" tune --revert --root "$T/root" --json
# a journal named relative to the current folder is reported as named
json tune 0 env -C "$T" "$NPL" tune --apply --root "$T/root" --journal my-journal.json --json
json tune 0 env -C "$T" "$NPL" tune --revert --root "$T/root" --journal my-journal.json --json
mkdir -p "$T/bare"
nojson 1 "$NPL" tune --check --root "$T/bare" --json
nojson 1 "$NPL" tune --revert --root "$T/bare" --json

# wait and status against servers on loopback: ready, refused, still warming
start_http ok
OK=$port
start_http warm 1000000
WARM=$port
json wait 0 "$NPL" wait "http://127.0.0.1:$OK" --timeout 10 --json
json wait 0 "$NPL" wait "http://127.0.0.1:$OK" --probe generate --timeout 10 --json
json wait 1 "$NPL" wait "http://127.0.0.1:$OK" "http://127.0.0.1:1" "http://u:secret@127.0.0.1:$WARM" --timeout 1 --json
expect_grep "$T/err" "wait: 2 of 3 servers not ready"
expect_nogrep "$T/out" "secret"
start_http ok
P=$port
start_http ok
E=$port
mkdir -p "$T/recipes"
# a deployment whose servers are the stubs (the decode server still warming)
cat >"$T/recipes/ports.yaml" <<YAML
kind: recipe
title: Kimi-K2.6 W4A8 1P1D 16P JSON 100ms
model: kimi-k2.6
hardware: ascend-a3
cards: 16
mode: pd-disagg
quantization: W4A8 INT8
dataset: 8k+1k
tpot: 100ms
ports: {prefill: $P, decode: $WARM, entry: $E, bootstrap: 18998}
speculative: {steps: 3}
bench: {dataset: random, input: 8000, output: 1000, concurrency: 1, prompts: 1}
YAML
ID=kimi-k2.6-w4a8-1p1d-16p-json-100ms
LSITE=(--model-path /m --draft-model-path /d --ifname lo --prefill-ip 127.0.0.1 --decode-ip 127.0.0.1)
json status 1 "$NPL" --recipes "$T/recipes" status $ID "${LSITE[@]}" --timeout 2 --json
expect_grep "$T/err" "status: 1 of 3 endpoints down"
sed -i "s/decode: $WARM,/decode: $OK,/" "$T/recipes/ports.yaml"
json status 0 "$NPL" --recipes "$T/recipes" status $ID "${LSITE[@]}" --timeout 2 --json
json status 1 "$NPL" status "$T/b" --timeout 0.5 --json
nojson 2 "$NPL" --recipes "$T/recipes" status $ID --model-path /m --json

# bench: dry run; runs of a stand-in bench_serving that writes a record, writes nothing, fails
json bench 0 "$NPL" bench $K20 --dry-run --json
mkdir -p "$T/fakebin"
printf '#!/bin/bash\necho "the benchmark talks"\nwhile (($#)); do [[ $1 == --output-file ]] && out=$2; shift; done\nsed -n 2p "%s" >>"$out"\n' \
	"$NPL_DATA/bench/pass.jsonl" >"$T/fakebin/python"
chmod +x "$T/fakebin/python"
json bench 0 env PATH="$T/fakebin:$PATH" "$NPL" bench "$T/b" --json
expect_grep "$T/err" "the benchmark talks"
json bench 1 env NPL_STUB_LOG="$T/calls" "$NPL" bench $K20 --output-file "$T/none.jsonl" --json
json bench 1 env NPL_STUB_LOG="$T/calls" NPL_STUB_EXIT=3 "$NPL" bench $K20 --output-file "$T/none.jsonl" --json

# verify: a pass, a TPOT miss, a TTFT miss, an invalid run, the bundle's own results
json verify 0 "$NPL" verify "$NPL_DATA/bench/pass.jsonl" $K20 --json
json verify 1 "$NPL" verify "$NPL_DATA/bench/tpot-miss.jsonl" $K20 --json
json verify 1 "$NPL" verify "$NPL_DATA/bench/ttft-miss.jsonl" $KP --json
json verify 1 "$NPL" verify "$NPL_DATA/bench/zero-output.jsonl" $K20 --max-failed 2.5 --json
json verify 0 "$NPL" verify "$T/b" --json
nojson 2 "$NPL" verify "$NPL_DATA/bench/broken.jsonl" $K20 --json

# version: with its database, and with a database that does not load
json version 0 "$NPL" version --json
mkdir -p "$T/badrecipes" && printf 'kind: recipe\ntitle: [\n' >"$T/badrecipes/x.yaml"
json version 5 "$NPL" --recipes "$T/badrecipes" version --json

# import: a page written, checked, one that cannot be read; drift: in sync, and a page that moved
json import 0 "$NPL" import "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx" -o "$T/imported" --json
json import 0 "$NPL" import "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx" -o "$T/imported" --check --json
sed 's/--mem-fraction-static 0.894/--mem-fraction-static 0.9/' "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx" >"$T/moved.mdx"
json import 1 "$NPL" import "$T/moved.mdx" -o "$T/imported" --check --json
json import 5 "$NPL" import "$NPL_DATA/pages/upstream/glossary.mdx" -o "$T/imported" --json
json drift 0 "$NPL" drift "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx" "$NPL_DATA/pages/upstream-2026/deepseek_r1.mdx" --json
json drift 1 "$NPL" drift "$T/moved.mdx" --json

# every command that reports was run
for c in "${cmds[@]}"; do
	[[ $c == help || -n ${seen[$c]:-} ]] || fail "no --json run of $c"
done

# every document against its schema, in one go
run "$PY" "$CHECK" "$SCHEMAS" "$T/list"
[[ $rc == 0 ]] || fail "documents that break their schema:
$(grep '^FAIL' "$T/out" | head -n 40)"
tail -n 1 "$T/out"

# the checker can fail: documents that break a schema, output that is not one document, and a
# schema that is not strict are each refused
bad() {
	local schema=$1 what=$2
	ndoc=$((ndoc + 1))
	cat >"$T/doc$ndoc"
	printf '%s\t%s\t%s\n' "$schema" "$T/doc$ndoc" "$what" >"$T/badlist"
	run "$PY" "$CHECK" "$SCHEMAS" "$T/badlist"
	[[ $rc == 1 ]] || fail "the checker took $what: $(cat "$T/out" "$T/err")"
}
bad verify "a number as a string" <<'JSON'
{"recipe": "r", "file": "f", "record": 1, "records": 1, "line": 1, "verdict": "pass", "valid": true, "pass": true,
 "checks": [{"name": "median TPOT", "key": "median_tpot", "value": "18.42 ms", "unit": "ms", "target": 20, "comparison": "<=", "ok": true}],
 "reasons": []}
JSON
bad verify "a list as one string" <<'JSON'
{"recipe": "r", "file": "f", "record": 1, "records": 1, "line": 1, "verdict": "miss", "valid": true, "pass": false,
 "checks": [], "reasons": "no TPOT was measured; no TTFT was measured"}
JSON
bad list "an unknown field" <<'JSON'
[{"id": "a", "name": "A", "dies_per_card": 2, "cards_per_node": 8, "recipes": 1, "extra": 1}]
JSON
bad wait "a missing field" <<'JSON'
{"ready": true, "timeout_s": 1, "servers": [{"url": "http://127.0.0.1:1", "ready": true, "after_s": 0.1, "error": null}]}
JSON
bad tune "a state not in the enum" <<'JSON'
{"mode": "undo", "restored": 1, "journal": "/run/npulaunch/tune-journal.json"}
JSON
bad version "two documents" <<'JSON'
{"version": "1", "database": null}
{"version": "1", "database": null}
JSON
bad version "a message before the document" <<'JSON'
npulaunch: note: hello
{"version": "1", "database": null}
JSON
mkdir -p "$T/loose"
sed 's/"additionalProperties": false/"additionalProperties": true/' "$SCHEMAS/wait.schema.json" >"$T/loose/wait.schema.json"
run "$PY" "$CHECK" --lint "$T/loose"
[[ $rc == 1 ]] || fail "the lint took a schema that is not strict: $(cat "$T/out")"
finish
