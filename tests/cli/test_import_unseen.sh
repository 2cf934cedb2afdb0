# import of pages it was not written against (issue 24): other models' best-practice pages
# (tests/data/pages/unseen), imported as a new user would, with no hand edit; each recipe
# validates and renders, what a node would exec is the page's, drift finds them in sync, and a
# page that is not a recipe page is refused with its location.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

P=$NPL_DATA/pages/unseen
pages=("$P"/qwen3_32b.mdx "$P"/minimax_m2_5.mdx "$P"/mimo_v2_flash.mdx "$P"/glm_5_1.mdx)
site=(--model-path /m --draft-model-path /d --ifname eth0 --prefill-ip 10.0.0.1 --decode-ip 10.0.0.2)

expect_rc 0 "$NPL" import "${pages[@]}" -o "$T/r"
expect_grep "$T/err" "qwen3_32b.mdx: 3 recipes of qwen3-32b"
expect_grep "$T/err" "minimax_m2_5.mdx: 5 recipes of minimax-m2.5"
expect_grep "$T/err" "mimo_v2_flash.mdx: 4 recipes of mimo-v2-flash"
expect_grep "$T/err" "glm_5_1.mdx: 8 recipes of glm-5.1"
expect_grep "$T/err" "$P/glm_5_1.mdx:1356:1: warning: router-prefill: the page's router gives --prefill http://<your prefill ip1>:8000 8998 http://<your prefill ip2>:8000 8999, naming a node where no prefill server listens"
# an A2 section whose metadata was copied from the A3 one: --tp-size 4 is 4 A2 cards
expect_grep "$T/err" "$P/qwen3_32b.mdx:232:12: warning: cards: the page's metadata says 2 cards; its servers run on 4"
expect_eq "$(find "$T/r" -name '*.yaml' ! -name model.yaml | wc -l)" 20 "one recipe per section"
expect_rc 0 "$NPL" --recipes "$T/r" validate
expect_grep "$T/err" "0 errors"
for f in "$T"/r/[!g]*/*.yaml; do
	id=$(basename "$f" .yaml)
	[[ $id == model ]] && continue
	expect_rc 0 "$NPL" --recipes "$T/r" render "$id" -o "$T/b/$id" "${site[@]}"
done
expect_rc 0 "$NPL" --recipes "$T/r" drift "${pages[@]}"
expect_eq "$(grep -c '^= ' "$T/out")" 20 "drift of the imported recipes: every section in sync"

# ---- the A2 section: what its script runs, the slip recorded ----
id=qwen3-32b-w8a8-2p-in3k5-out1k5-55ms-a2
expect_rc 0 "$NPL" --recipes "$T/r" show "$id" --json "${site[@]}"
expect_eq "$(jq -r '.recipe.hardware, .recipe.cards, .roles[0].dies_per_instance' "$T/out" | tr '\n' ' ')" \
	"ascend-a2 4 4 " "the A2 section: hardware, cards and dies as its script runs"
expect_eq "$(jq -r '.recipe.deviations[0].what' "$T/out")" cards "the A2 section: the slip is a deviation"
# what the node would exec: the page's flags (page lines 299-301), the older --cuda-graph-bs
# read as argparse reads it
expect_grep "$T/b/$id/pd-mixed.sh" "--tp-size 4 \\"
expect_grep "$T/b/$id/pd-mixed.sh" "--max-prefill-tokens 35000 \\"
expect_grep "$T/b/$id/pd-mixed.sh" "--cuda-graph-bs-decode 16 32 64 72 88 90 92 94 96 97 98 99 100 101 \\"
b=$T/b/qwen3-32b-bf16-8p-in18k-out4k-6ms/pd-mixed.sh
expect_grep "$b" "--tp-size 16 \\"
expect_grep "$b" "--speculative-num-steps 4 \\"
expect_grep "$b" "--max-prefill-tokens 65536 \\"
# the deviation explains the page's 2 only: a page that moves to another count is drift
sed '232s/2/3/' "$P/qwen3_32b.mdx" >"$T/qwen3_32b.mdx"
expect_rc 1 "$NPL" --recipes "$T/r" drift "$T/qwen3_32b.mdx"
expect_grep "$T/out" "recipe metadata cards: page 3, recipe 4"

# ---- PYTHONPATH=${DRAFT_MODEL_PATH}:$PYTHONPATH is the site's draft model, not the page's path ----
expect_grep "$T/r/minimax-m2.5/model.yaml" "      site: draft-model-path"
id=minimax-m2.5-w8a8-8p-in3k5-out1k5-50ms
expect_rc 0 "$NPL" --recipes "$T/r" show "$id" --json "${site[@]}"
expect_eq "$(jq -r '.roles[0].nodes[0].env[] | select(.name == "PYTHONPATH") | "\(.op) \(.value)"' "$T/out")" \
	'prepend ${draft-model-path}' "PYTHONPATH: the draft model's folder, then the old value"
expect_grep "$T/b/$id/pd-mixed.sh" 'npl_env_join PYTHONPATH "$DRAFT_MODEL_PATH" : prepend'
[[ -z $(grep -rl 'path/to/draft-model-weights' "$T/b") ]] || fail "a page's placeholder path reached a script"
expect_grep "$T/b/$id/pd-mixed.sh" "--dp-size 16 \\"
expect_grep "$T/b/$id/pd-mixed.sh" "--fuseep-mode 2 \\"
expect_grep "$T/b/$id/pd-mixed.sh" "--max-running-requests 320 \\"
# the prefix-cache benchmark: 90% of 64k shared (page lines 232-245)
f=$T/r/minimax-m2.5/minimax-m2.5-w8a8-4p-in64k-out1k-prefix90-50ms.yaml
expect_grep "$f" "  dataset: generated-shared-prefix"
expect_grep "$f" "  prefix: 90"
b=$T/b/minimax-m2.5-w8a8-4p-in64k-out1k-prefix90-50ms/bench.sh
expect_grep "$b" "--gsp-system-prompt-len 58982"
expect_grep "$b" "--gsp-question-len 6554"

# ---- a TTFT target alone, and a 1P1D whose roles differ in size (prefill 4 cards, decode 8) ----
id=mimo-v2-flash-1p1d-12p-in16k-out1-ttft-5s
expect_rc 0 "$NPL" --recipes "$T/r" show "$id" --json "${site[@]}"
expect_eq "$(jq -c '.recipe | [.ttft, .tpot, .cards, .tier]' "$T/out")" '["5s",null,12,"high-throughput"]' \
	"the TTFT section: its target, no TPOT, its tier"
expect_eq "$(jq -c '[.roles[] | select(.tp_size) | [.role, .cards_per_instance, .tp_size]]' "$T/out")" \
	'[["prefill",4,8],["decode",8,16]]' "the TTFT section: prefill on 4 cards, decode on 8"
b=$T/b/$id
# --cuda-graph-backend-prefill=disabled is one flag with its value (page line 131)
expect_grep "$b/prefill.sh" "--cuda-graph-backend-prefill disabled \\"
# speculative decoding where the page has it, on decode only
expect_grep "$b/decode.sh" "--speculative-algorithm EAGLE \\"
expect_grep "$b/decode.sh" "--enable-multi-layer-eagle \\"
expect_nogrep "$b/prefill.sh" "--speculative-algorithm"
expect_grep "$b/router.sh" "--health-check-interval-secs 3600"
expect_grep "$b/router.sh" "--mini-lb"
expect_grep "$b/bench.sh" "--request-rate 0.4 \\"
expect_grep "$b/bench.sh" "--random-output-len 1 \\"
expect_grep "$T/b/mimo-v2-flash-1p1d-12p-in16k-out1k-tpot-20ms/decode.sh" "--max-running-requests 32 \\"

# ---- GLM-5.1: two prefill instances of two nodes each, by arithmetic on the node index ----
id=glm-5.1-w4a8-2p1d-48p-in128k-out1k-prefix90-50ms
ips=(--prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 --prefill-ip 10.0.0.3 --prefill-ip 10.0.0.4 --decode-ip 10.0.1.1 --decode-ip 10.0.1.2)
expect_rc 0 "$NPL" --recipes "$T/r" show "$id" --json --model-path /m --ifname eth0 "${ips[@]}"
expect_eq "$(jq -c '.roles[0] | [.role, .instances, .nodes_per_instance, .tp_size, .pp_size]' "$T/out")" \
	'["prefill",2,2,4,8]' "GLM-5.1 2P1D: two prefill instances of two nodes, tp 4 x pp 8"
# per prefill node (page lines 1260-1262): its instance, rank, rendezvous and bootstrap port
expect_eq "$(jq -c '[.roles[0].nodes[] | [.instance, .rank, (.flags[] | select(.flag == "--dist-init-addr") | .values[0]),
	(.flags[] | select(.flag == "--disaggregation-bootstrap-port") | .values[0])]]' "$T/out")" \
	'[[0,0,"${prefill-ip[0]|url}:5000","8998"],[0,1,"${prefill-ip[0]|url}:5000","8998"],[1,0,"${prefill-ip[2]|url}:5000","8999"],[1,1,"${prefill-ip[2]|url}:5000","8999"]]' \
	"GLM-5.1 2P1D: each prefill node's rendezvous and bootstrap port as the page's arithmetic gives them"
expect_rc 0 "$NPL" --recipes "$T/r" render "$id" -o "$T/glm" --model-path /m --ifname eth0 "${ips[@]}"
expect_grep "$T/glm/router.sh" '--prefill http://"${PREFILL_HOSTS[2]}":8000 8999'
expect_grep "$T/r/glm-5.1/$id.yaml" "  router-prefill: "
# every section renders with the addresses its shape needs
for f in "$T"/r/glm-5.1/glm*.yaml; do
	id=$(basename "$f" .yaml)
	case $id in
	*-16p-*) a=(--node-ip 10.0.2.1 --node-ip 10.0.2.2) ;;
	*-1p1d-*) a=(--prefill-ip 10.0.0.1 --prefill-ip 10.0.0.2 --decode-ip 10.0.1.1 --decode-ip 10.0.1.2) ;;
	*) a=("${ips[@]}") ;;
	esac
	expect_rc 0 "$NPL" --recipes "$T/r" render "$id" -o "$T/b/$id" --model-path /m --ifname eth0 "${a[@]}"
done
expect_grep "$T/b/glm-5.1-w4a8-16p-in3k5-out1k5-50ms/pd-mixed.sh" "--cuda-graph-max-bs-decode 16 \\"
expect_grep "$T/b/glm-5.1-w4a8-4p1d-48p-in64k-out1k-prefix90-50ms/router.sh" '--prefill http://"${PREFILL_HOSTS[3]}":8000 9001'
expect_eq "$(sed -n 's/^ttft: //p' "$T/r/glm-5.1/glm-5.1-w4a8-1p1d-32p-in128k-out1k-56.4ms.yaml")" '"13.1s"' "TPOT and TTFT together"

# ---- a router sent to a node that serves nothing: the instance's first node, with a deviation ----
# GLM-5.1's 2P1D page (best-practices/glm_5_1.mdx at 19264f4a) gives "--prefill
# http://<your prefill ip2>:8000 8999" for the instance that listens at ip3 (ip2 is rank 1 of
# the first); the same slip made on the 2-node prefill of DeepSeek-V3.2's page
sed '201s/<your prefill ip>/<your prefill ip2>/' "$NPL_DATA/pages/upstream-2026/deepseek_v3_2.mdx" >"$T/router.mdx"
expect_rc 0 "$NPL" import "$T/router.mdx" -o "$T/rt"
expect_grep "$T/err" "$T/router.mdx:198:1: warning: router-prefill: the page's router gives --prefill http://<your prefill ip2>:8000 8998, naming a node where no prefill server listens; the recipe's router goes to each instance's first node (http://<your prefill ip1>:8000 8998)"
expect_rc 0 "$NPL" --recipes "$T/rt" render deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms -o "$T/rtb" "${site[@]}" \
	--prefill-ip 10.0.0.3 --decode-ip 10.0.0.4
expect_grep "$T/rtb/router.sh" '--prefill http://"${PREFILL_HOSTS[0]}":8000 8998'
expect_rc 0 "$NPL" --recipes "$T/rt" drift "$T/router.mdx"
expect_eq "$(grep -c '^= ' "$T/out")" 3 "the router's slip, as import judged it, is no drift"
expect_rc 1 "$NPL" drift "$T/router.mdx"
expect_grep "$T/out" "router flag --prefill: page http://<your prefill ip2>:8000 8998, recipe http://<your prefill ip1>:8000 8998"
# a decode node for a prefill is not that slip: refused, located
sed '201s/<your prefill ip>/<your decode ip2>/' "$NPL_DATA/pages/upstream-2026/deepseek_v3_2.mdx" >"$T/router2.mdx"
expect_rc 5 "$NPL" import "$T/router2.mdx" -o "$T/none"
expect_grep "$T/err" "$T/router2.mdx:198:1: error: router: cannot express the page's flag --prefill (http://<your decode ip2>:8000 8998)"

# ---- not a recipe page: refused where it starts, nothing written ----
# SGLang's older combined page (docs/docs/hardware-platforms/ascend-npus/Best Practice on Ascend
# NPU.mdx at 263f1b86): prose first, no front matter, metadata as "Model: Deepseek R1" and no
# quantization. Its opening lines and one section, verbatim but for the shortened script, are
# found as a section and refused at its heading, not as "no recipe section" at 1:1
{
	printf '%s\n' "This section describes the best practice data of mainstream LLM models such as DeepSeek and Qwen on the Ascend NPU. If" \
		"you encounter issues or have any questions, please [open an issue](https://github.com/sgl-project/sglang/issues)." \
		"" "## DeepSeek Series Models" "" "### DeepSeek-R1 2K-2K 50ms on A3 8 Cards Mixed Mode" "" "Model: Deepseek R1" "" \
		"Hardware: Atlas 800I A3 8Card" "" "DeployMode: PD Mixed" "" "Dataset: random" "" "Input Output Length: 2K+2K" "" \
		"TPOT: 50ms" "" "#### Model Deployment" "" '```shell Command' 'MODEL_PATH=xxx' \
		'python3 -m sglang.launch_server --model-path ${MODEL_PATH} \' '--tp 16' '```'
} >"$T/combined.mdx"
expect_rc 5 "$NPL" import "$T/combined.mdx" -o "$T/none"
expect_grep "$T/err" "$T/combined.mdx:6:5: error: the section gives no Model: a recipe needs one"
# Hy3's page deploys but measures nothing (no dataset, target or benchmark): refused at its
# section, and nothing of the pages beside it is written
expect_rc 5 "$NPL" import "$P/hy3.mdx" "$P/qwen3_32b.mdx" -o "$T/none"
expect_grep "$T/err" "$P/hy3.mdx:17:5: error: the section has no benchmark: a recipe needs one"
[[ ! -e $T/none ]] || fail "a refused page wrote $T/none"
expect_rc 5 "$NPL" import "$NPL_DATA/pages/upstream-2026/knowledge_base.mdx" -o "$T/none"
expect_grep "$T/err" "knowledge_base.mdx:1:1: error: no recipe section in this page"
[[ ! -e $T/none ]] || fail "a refused page wrote $T/none"

finish
