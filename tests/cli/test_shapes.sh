# The recipe shapes of schema v2 where a command's behaviour is the point, on the tests' own
# recipes (tests/data/recipes/good/shapes): a recipe with a TTFT target and none for TPOT in
# list, the query, diff and verify (a recipe with no target at all: test_targets.sh); show --explain of the tp-size rule over pp-size and of a
# socket interface the recipe sets; deviations in show and show --json; the warning on a '$'
# in a literal value. The launches themselves are tests/golden/test_shapes.c's.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
cd "$NPL_DATA/recipes/good" || exit 1
S=(--recipes shapes)
B=$NPL_DATA/bench
TT=shape-dense-bf16-8p-in3k5-out1k5-ttft1s   # ttft: 1s, no tpot
TP=shape-moe-w8a8-8p-spec-null-50ms          # tpot: 50ms, no ttft

# every recipe of the folder is valid
expect_rc 0 "$NPL" "${S[@]}" validate
expect_grep "$T/err" " 0 errors, "

# a TTFT target and none for TPOT: '-' in list's TPOT column, null in list --json
expect_rc 0 "$NPL" "${S[@]}" list shape-dense
expect_eq "$(head -1 "$T/out" | awk '{print $6, $7}')" "TPOT TTFT" "list columns"
expect_eq "$(awk -v id=$TT '$1 == id {print $6, $7}' "$T/out")" "- 1s" "list TPOT/TTFT of a TTFT-only recipe"
expect_rc 0 "$NPL" "${S[@]}" list shape-dense --json
expect_eq "$(jq -r --arg id $TT '.[] | select(.id == $id) | "\(.tpot) \(.tpot_ms) \(.ttft) \(.ttft_ms)"' "$T/out")" \
	"null null 1s 1000" "list --json targets of a TTFT-only recipe"
# a TTFT budget selects it; a TPOT budget says why it does not qualify
expect_rc 0 "$NPL" "${S[@]}" show shape-dense --ttft 2s --json
expect_grep "$T/err" "npulaunch: Shape-Dense --ttft 2s: $TT ("
expect_eq "$(jq -r '.recipe.id' "$T/out")" $TT "--ttft 2s chooses the TTFT recipe"
expect_rc 3 "$NPL" "${S[@]}" show shape-dense --tpot 50ms
expect_grep "$T/err" "npulaunch: Shape-Dense --tpot 50ms: no recipe qualifies; the nearest:"
expect_grep "$T/err" "  $TT: no TPOT figure to meet the 50ms budget"
expect_rc 3 "$NPL" "${S[@]}" show shape-dense --ttft 500ms
expect_grep "$T/err" "  $TT: TTFT 1s exceeds the 500ms budget by 500ms"
# diff with a TPOT-only recipe: each target only on its side
expect_rc 1 "$NPL" "${S[@]}" diff $TT $TP
expect_grep "$T/out" "  + tpot 50ms"
expect_grep "$T/out" "  - ttft 1s"
expect_rc 1 "$NPL" "${S[@]}" diff $TT $TP --json
expect_eq "$(jq -r '.a, .b' "$T/out" | tr '\n' ' ')" "$TT $TP " "diff --json of the two"
expect_rc 0 "$NPL" "${S[@]}" diff $TT $TT

# verify judges TTFT alone: pass.jsonl's last record has median TTFT 948.1 ms (target 1s)
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $TT
grep -q '^  median TTFT  *948.10 ms  *1000.00 ms  *ok$' "$T/out" || fail "TTFT row: $(cat "$T/out")"
grep -q '^  median TPOT  *18.42 ms  *-  *$' "$T/out" || fail "TPOT row is not judged: $(cat "$T/out")"
expect_grep "$T/out" "verdict: PASS"
# a TPOT far above any target does not matter, nor does a TPOT that was not measured
sed 's/"median_tpot_ms": 18.42/"median_tpot_ms": 999.0/' "$B/pass.jsonl" >"$T/slow.jsonl"
expect_rc 0 "$NPL" "${S[@]}" verify "$T/slow.jsonl" $TT
grep -q '^  median TPOT  *999.00 ms  *-  *$' "$T/out" || fail "slow TPOT row: $(cat "$T/out")"
expect_grep "$T/out" "verdict: PASS"
sed 's/"median_tpot_ms": [0-9.]*, //' "$B/pass.jsonl" >"$T/notpot.jsonl"
grep -q median_tpot "$T/notpot.jsonl" && fail "notpot.jsonl still has median_tpot_ms"
expect_rc 0 "$NPL" "${S[@]}" verify "$T/notpot.jsonl" $TT
expect_grep "$T/out" "verdict: PASS"
# a TTFT over the target is a miss
sed 's/"median_ttft_ms": 948.1,/"median_ttft_ms": 1500.0,/' "$B/pass.jsonl" >"$T/late.jsonl"
expect_rc 1 "$NPL" "${S[@]}" verify "$T/late.jsonl" $TT
expect_grep "$T/out" "verdict: MISS: median TTFT 1500.0 ms exceeds the 1000 ms target"
expect_rc 0 "$NPL" "${S[@]}" verify "$B/pass.jsonl" $TT --json
expect_eq "$(jq -r '.checks[] | select(.name == "median TPOT" or .name == "median TTFT") | "\(.name)=\(.target)=\(.ok)"' "$T/out" | tr '\n' ' ')" \
	"median TPOT=null=null median TTFT=1000=true " "verify --json: TPOT not judged, TTFT judged"
expect_eq "$(jq -r '"\(.verdict) \(.valid) \(.pass)"' "$T/out")" "pass true true" "verify --json verdict"

# show --explain: tp-size is the instance's dies over pp-size
PP=shape-moe-w8a8-1p1d-16p-pp4-50ms
expect_rc 0 "$NPL" "${S[@]}" show $PP --explain
sed -n '/^prefill.sh/,/^decode.sh/p' "$T/out" >"$T/prefill"
grep -Eq -- '--tp-size 4 +# rule tp-size: 2 dies per card x 8 cards / pp-size 4$' "$T/prefill" ||
	fail "prefill tp-size derivation: $(grep -- --tp-size "$T/prefill")"
grep -Eq -- '--pp-size 4 +# recipe shapes/pp.yaml:15:7$' "$T/prefill" || fail "prefill pp-size origin: $(cat "$T/prefill")"
sed -n '/^decode.sh/,/^router.sh/p' "$T/out" >"$T/decode"
grep -Eq -- '--tp-size 8 +# .*pp-size 2' "$T/decode" || fail "decode tp-size: $(grep -- --tp-size "$T/decode")"
expect_grep "$T/out" "prefill 1 x 8 cards (tp-size 4, 1 node each); decode 1 x 8 cards (tp-size 8, 1 node each)"

# show --explain: the recipe is the origin of prefill's socket interface, the site of decode's
IF=shape-moe-w8a8-1p1d-16p-ifname-50ms
expect_rc 0 "$NPL" "${S[@]}" show $IF --explain --ifname eth9
sed -n '/^prefill.sh/,/^decode.sh/p' "$T/out" >"$T/prefill"
sed -n '/^decode.sh/,/^router.sh/p' "$T/out" >"$T/decode"
grep -Eq 'env +HCCL_SOCKET_IFNAME=lo +# recipe shapes/ifname.yaml:14:7$' "$T/prefill" ||
	fail "prefill HCCL_SOCKET_IFNAME origin: $(grep IFNAME "$T/prefill")"
grep -Eq 'env +GLOO_SOCKET_IFNAME=lo +# recipe shapes/ifname.yaml:15:7$' "$T/prefill" ||
	fail "prefill GLOO_SOCKET_IFNAME origin: $(grep IFNAME "$T/prefill")"
grep -Eq 'env +HCCL_SOCKET_IFNAME=eth9 +# site --ifname \(rule socket-ifname\)$' "$T/decode" ||
	fail "decode HCCL_SOCKET_IFNAME origin: $(grep IFNAME "$T/decode")"
grep -Eq 'env +GLOO_SOCKET_IFNAME=eth9 +# site --ifname \(rule socket-ifname\)$' "$T/decode" ||
	fail "decode GLOO_SOCKET_IFNAME origin: $(grep IFNAME "$T/decode")"
expect_rc 0 "$NPL" "${S[@]}" show $IF --json --ifname eth9
expect_eq "$(jq -r '.roles[] | select(.role == "prefill") | .nodes[0].env[] | select(.name == "HCCL_SOCKET_IFNAME") | "\(.value) \(.origin.layer)"' "$T/out" 2>/dev/null)" \
	"lo recipe" "show --json: prefill's HCCL_SOCKET_IFNAME from the recipe"

# deviations: in show, located, and in show --json as .recipe.deviations
G=shape-moe-w8a8-8p-in64k-out1k-gsp-50ms
expect_rc 0 "$NPL" "${S[@]}" show $G
expect_grep "$T/out" "fuseep-mode: the page writes --fuseep_mode 2, which SGLang's argparse refuses; the flag is --fuseep-mode"
expect_grep "$T/out" "tp: the page writes --tp 16; the registry's name is --tp-size"
expect_rc 0 "$NPL" "${S[@]}" show $G --json
# a list of {what, why} or a mapping what: why; either way both, in the recipe's order
expect_eq "$(jq -r '.recipe.deviations | if type == "object" then to_entries | map("\(.key)=\(.value)")
	else map("\(.what)=\(.why)") end | join("|")' "$T/out")" \
	"fuseep-mode=the page writes --fuseep_mode 2, which SGLang's argparse refuses; the flag is --fuseep-mode|tp=the page writes --tp 16; the registry's name is --tp-size" \
	"show --json .recipe.deviations"
# a recipe without deviations has none
expect_rc 0 "$NPL" "${S[@]}" show $TP --json
expect_eq "$(jq -r '.recipe.deviations // [] | length' "$T/out")" 0 "no deviations"

# a '$' in a literal value: a located warning that it reaches the program as written
# (that it reaches the program literally is tests/golden/test_shapes.c's)
expect_rc 0 "$NPL" "${S[@]}" show shape-moe-w8a8-8p-env-build-50ms
expect_grep "$T/err" "npulaunch: shapes/env-build.yaml:16:18: warning: "
expect_grep "$T/err" "of 'SHAPE_LITERAL' looks like a shell reference, but values reach the program literally"

# prepending to PATH and replacing PATH deploy differently, and diff says so
mkdir -p "$T/pp"
cp shapes/model.yaml shapes/env-build.yaml "$T/pp/"
sed 's|PATH: {prepend: /opt/vendor/bin}|PATH: /opt/vendor/bin|; s/ENV-BUILD/ENV-PLAIN/' shapes/env-build.yaml >"$T/pp/plain.yaml"
grep -q '^  PATH: /opt/vendor/bin$' "$T/pp/plain.yaml" || fail "plain.yaml does not replace PATH"
expect_rc 1 "$NPL" --recipes "$T/pp" diff shape-moe-w8a8-8p-env-build-50ms shape-moe-w8a8-8p-env-plain-50ms
expect_grep "$T/out" "PATH"
expect_nogrep "$T/out" "(they deploy the same)"

# a recipe with neither target is valid (MiMo-V2.5-Pro's page has none; tests/cli/test_targets.sh)
mkdir -p "$T/nt"
grep -v '^ttft:' shapes/dense-ttft.yaml >"$T/nt/r.yaml"
cp shapes/dense-model.yaml "$T/nt/"
expect_rc 0 "$NPL" --recipes "$T/nt" validate
finish
