# import as a new user runs it: pages of each form into a recipe folder, the files as the
# schema documents them, valid, and in sync with their pages by drift; a page of another model
# with a new hardware name; --commit; --check; what cannot be read or expressed is located and
# nothing is written. (The round trip against the pages' own records, node by node on the
# simulated host, is golden.imported: tests/golden/roundtrip.sh.)
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

P=$NPL_DATA/pages
pages=("$P"/seeds/*.txt "$P"/upstream/deepseek_r1.mdx "$P"/upstream/deepseek_v3_2.mdx "$P"/upstream/qwen3_*.mdx)

expect_rc 0 "$NPL" import "${pages[@]}" -o "$T/r" --commit 0b1b66a3bc50de3c5becde4cf1a4ed7fdf5cb6a4
expect_grep "$T/err" "qwen3_8b.mdx: 3 recipes of qwen3-8b"
expect_grep "$T/err" "000_78a205449ed7d349.txt: 9 recipes of kimi-k2.6"
expect_eq "$(find "$T/r" -name '*.yaml' ! -name model.yaml | wc -l)" 58 "one recipe per section"
expect_eq "$(find "$T/r" -name model.yaml | wc -l)" 11 "one model file per page"
# the files read like the hand-written ones: metadata, provenance, only what differs
f=$T/r/qwen3-8b/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms.yaml
expect_grep "$f" "title: \"Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms\""
expect_grep "$f" "hardware: ascend-a3"
expect_grep "$f" "  section: \"Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms\""
expect_grep "$f" "  commit: \"0b1b66a3bc50de3c5becde4cf1a4ed7fdf5cb6a4\""
expect_grep "$f" "  mem-fraction-static: 0.894"
expect_grep "$f" "  max-running-requests: 1"
expect_nogrep "$f" "attention-backend"
expect_grep "$T/r/qwen3-8b/model.yaml" "  attention-backend: ascend"
expect_grep "$T/r/qwen3-8b/model.yaml" "  STREAMS_PER_DEVICE: null"
# the tier is the page's table that lists the section: a Markdown row linking its anchor, an
# HTML row (the older layout), a seed page's row by its metadata, or a seed page's one tier
expect_grep "$T/r/qwen3-30b-a3b/qwen3-30b-w8a8-1p-in3k5-out1k5-10ms.yaml" "tier: low-latency"
expect_grep "$T/r/qwen3-30b-a3b/qwen3-30b-w8a8-1p-in3k5-out1k5-50ms-aime25.yaml" "tier: high-throughput"
for id in kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms deepseek-v4-flash-w8a8-8p-in8k-out1k-50ms \
	qwen3.5-397b-a17b-w4a8-8p-in3k5-out1k5-22.2ms; do
	m=${id%%-w4a8*}
	m=${m%%-w8a8*}
	expect_eq "$(sed -n 's/^tier: //p' "$T/r/$m/$id.yaml")" "$(sed -n 's/^tier: //p' "$NPL_SRC/recipes/$m/$id.yaml")" "tier of $id"
done
# a page's slips become deviations, said on stderr
expect_grep "$T/err" "warning: draft-model-path: the page gives the draft model's path as 'xxx'"
expect_grep "$T/r/qwen3-30b-a3b/qwen3-30b-w8a8-1p-in3k5-out1k5-10ms.yaml" "  draft-model-path: "
expect_grep "$T/r/qwen3.6-27b/qwen3.6-27b-2p-in64k-out1k-prefix90-50ms.yaml" "    dies: 2"
expect_rc 0 "$NPL" --recipes "$T/r" validate
expect_grep "$T/err" "0 errors"
# every section in sync with its imported recipe; the older pages lack the recipes the shipped
# catalogue (the newest pages) adds beside them, which drift lists, as it must
expect_rc 1 "$NPL" --recipes "$T/r" drift "${pages[@]}"
expect_eq "$(grep -c '^= ' "$T/out")" 58 "drift of the imported recipes: every section in sync"
expect_eq "$(grep -c '^[~+] ' "$T/out")" 0 "drift of the imported recipes: no section differs or is new"
expect_eq "$(grep '^- ' "$T/out" | cut -d: -f1 | tr '\n' ' ')" \
	"- deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-20ms - qwen3-30b-a3b-bf16-1p-in1k-out100 - qwen3-30b-a3b-w8a8-1p-in3k5-out1k5-10ms - qwen3-30b-a3b-w8a8-1p-in3k5-out1k5-50ms - qwen3-30b-a3b-w8a8-1p-in6k-out1k5-bs16 - qwen3.6-27b-1p-in64k-out1k-prefix90-50ms - qwen3.6-27b-w8a8-1p-in64k-out1k-50ms - qwen3.6-35b-a3b-1p-in1024x1024-30-out1024-50ms - qwen3.6-35b-a3b-1p-in1080p-30-out256-50ms - qwen3.6-35b-a3b-1p-in128k-out1k-50ms - qwen3.6-35b-a3b-1p-in254k-out1k - qwen3.6-35b-a3b-1p-in3k5-out1k5-50ms - qwen3.6-35b-a3b-1p-in64k-out1k-50ms - qwen3.6-35b-a3b-1p-in64k-out1k-prefix90-50ms - qwen3.6-35b-a3b-2p-in984k-out1k - qwen3-next-80b-a3b-instruct-w8a8-1p-in3k5-out1k5-20ms " \
	"drift of the imported recipes: the shipped ones the older pages do not have"
# --check: the same import is current; an edited file is not
expect_rc 0 "$NPL" import "${pages[@]}" -o "$T/r" --commit 0b1b66a3bc50de3c5becde4cf1a4ed7fdf5cb6a4 --check
sed -i 's/mem-fraction-static: 0.894/mem-fraction-static: 0.9/' "$f"
expect_rc 1 "$NPL" import "${pages[@]}" -o "$T/r" --commit 0b1b66a3bc50de3c5becde4cf1a4ed7fdf5cb6a4 --check
expect_grep "$T/out" "qwen3-8b-w8a8-1p-in3k5-out1k5-5ms.yaml"
# what a maintainer adds, the ids a recipe replaced and its notes, a re-import keeps
g=$T/r/qwen3-8b/qwen3-8b-w8a8-1p-in3k5-out1k5-37ms.yaml
printf 'aliases:\n- qwen3-8b-old-37ms\nnotes: "measured again on our cluster"\n' >>"$g"
expect_rc 0 "$NPL" import "$P/upstream/qwen3_8b.mdx" -o "$T/r" --commit 0b1b66a3bc50de3c5becde4cf1a4ed7fdf5cb6a4
expect_grep "$g" "- qwen3-8b-old-37ms"
expect_grep "$g" "notes: \"measured again on our cluster\""
expect_grep "$f" "mem-fraction-static: 0.894"  # the page's value again: the edit was not a kept key
expect_rc 0 "$NPL" import "$P/upstream/qwen3_8b.mdx" -o "$T/r" --commit 0b1b66a3bc50de3c5becde4cf1a4ed7fdf5cb6a4 --check
expect_rc 0 "$NPL" --recipes "$T/r" show qwen3-8b-old-37ms
expect_grep "$T/err" "'qwen3-8b-old-37ms' is now qwen3-8b-w8a8-1p-in3k5-out1k5-37ms"
# a file it cannot read as YAML is not overwritten blindly
printf 'aliases: [unclosed\n' >>"$g"
expect_rc 5 "$NPL" import "$P/upstream/qwen3_8b.mdx" -o "$T/r"
expect_grep "$T/err" "$g:"
expect_grep "$T/err" "nothing written"
sed -i '$d' "$g"
sed -i 's/mem-fraction-static: 0.894/mem-fraction-static: 0.9/' "$f"  # the edit again, for drift below
expect_rc 1 "$NPL" --recipes "$T/r" drift "$P/upstream/qwen3_8b.mdx"
expect_grep "$T/out" "flag --mem-fraction-static: page 0.894, recipe 0.9"

# ---- a model npulaunch has never seen, on hardware named as the glossary names it ----
sed -e 's/Qwen3-8B/Acme-9B/g' -e 's/Ascend A3 Series Products/Atlas 800I A3/' "$P/upstream/qwen3_8b.mdx" >"$T/acme_9b.mdx"
expect_rc 0 "$NPL" import "$T/acme_9b.mdx" -o "$T/new"
expect_grep "$T/new/acme-9b/model.yaml" "name: Acme-9B"
expect_grep "$T/new/acme-9b/acme-9b-w8a8-1p-in3k5-out1k5-5ms.yaml" "hardware: ascend-a3"
expect_rc 0 "$NPL" --recipes "$T/new" render acme-9b-w8a8-1p-in3k5-out1k5-5ms -o "$T/bundle" --model-path /m \
	--draft-model-path /d --ifname eth0
expect_grep "$T/bundle/pd-mixed.sh" "mem-fraction-static"

# ---- a "TPOT" no output token takes (Qwen3-30B-A3B BF16, 10000ms): the end-to-end target ----
expect_rc 0 "$NPL" import "$P/upstream-2026/qwen3_30b_a3b.mdx" -o "$T/e2e"
expect_grep "$T/err" "qwen3_30b_a3b.mdx:45:11: warning: e2e: the page gives TPOT 10000ms, a time no output token takes"
f=$T/e2e/qwen3-30b-a3b/qwen3-30b-a3b-bf16-1p-in1k-out100.yaml
expect_grep "$f" 'e2e: "10000ms"'
expect_nogrep "$f" "tpot:"
expect_grep "$T/e2e/qwen3-30b-a3b/qwen3-30b-a3b-w8a8-1p-in3k5-out1k5-10ms.yaml" 'tpot: "10ms"'

# ---- a page with the addresses of its authors' cluster instead of placeholders ----
sed -e 's/<your prefill ip1>/10.2.0.1/g; s/<your prefill ip2>/10.2.0.2/g; s/<your prefill ip>/10.2.0.1/g' \
	-e 's/<your decode ip1>/10.2.0.3/g; s/<your decode ip2>/10.2.0.4/g; s/<your decode ip>/10.2.0.3/g' \
	"$P/upstream-2026/deepseek_r1.mdx" >"$T/deepseek_r1.mdx"
expect_rc 0 "$NPL" import "$T/deepseek_r1.mdx" -o "$T/lit"
expect_grep "$T/err" "$T/deepseek_r1.mdx:83:8: warning: address-10.2.0.1: the page names 10.2.0.1, an address of the authors' own cluster, for a prefill node; the recipe takes the node's address from the site (--prefill-ip)"
f=$T/lit/deepseek-r1/deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms.yaml
expect_grep "$f" "  address-10.2.0.4: \"the page names 10.2.0.4, an address of the authors' own cluster, for a decode node"
[[ -z $(grep -rh '10\.2\.0\.\|100\.64\.' "$T/lit" | grep -v '^  address-') ]] || fail "an address of the page's cluster reached a recipe"
expect_rc 0 "$NPL" drift "$T/deepseek_r1.mdx"
expect_eq "$(grep -c '^= ' "$T/out")" 7 "a page with its cluster's addresses deploys as the recipes"
# one that is no node's (a service of theirs) cannot be told apart: an error, not a guess
sed '83a export MY_SERVICE=http://10.9.9.9:8080' "$P/upstream/deepseek_r1.mdx" >"$T/service.mdx"
expect_rc 5 "$NPL" import "$T/service.mdx" -o "$T/none"
expect_grep "$T/err" "the page names the address 10.9.9.9, which no node of its deployment has"

# ---- a multi-node server with no rendezvous: the rule's, with a deviation ----
sed '104d' "$P/upstream/deepseek_v3_2.mdx" >"$T/deepseek_v3_2.mdx"
expect_rc 0 "$NPL" import "$T/deepseek_v3_2.mdx" -o "$T/rv"
expect_grep "$T/err" "$T/deepseek_v3_2.mdx:99:9: warning: rendezvous: the page's prefill server runs on several nodes with no --dist-init-addr"
expect_grep "$T/rv/deepseek-v3.2/deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms.yaml" "  rendezvous: "
expect_rc 0 "$NPL" --recipes "$T/rv" validate
expect_rc 1 "$NPL" --recipes "$T/rv" drift "$T/deepseek_v3_2.mdx"
expect_grep "$T/out" "prefill node 1 flag --dist-init-addr: page (none), recipe <your prefill ip1>:5000"

# ---- a node list shorter than --nnodes: the missing node runs the first's launch at its rank ----
sed "78s/.*/P_IP=('<your prefill ip1>')/" "$P/upstream-2026/deepseek_v3_2.mdx" >"$T/short.mdx"
expect_rc 0 "$NPL" import "$T/short.mdx" -o "$T/short"
expect_grep "$T/err" "$T/short.mdx:101:9: warning: nodes: the page lists 1 prefill node but its server runs --nnodes 2"
expect_grep "$T/short/deepseek-v3.2/deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms.yaml" "  nodes: "
expect_rc 0 "$NPL" drift "$T/short.mdx"
expect_eq "$(grep -c '^= ' "$T/out")" 3 "the shortened page deploys as the recipes"

# ---- what cannot be read or expressed: located, nothing written ----
sed '192s/--mem-fraction-static 0.894/--mem-fraction-statc 0.894/' "$P/upstream/qwen3_8b.mdx" >"$T/typo.mdx"
expect_rc 5 "$NPL" import "$T/typo.mdx" -o "$T/none"
expect_grep "$T/err" "$T/typo.mdx:192:5: error: --mem-fraction-statc is not an option"
expect_grep "$T/err" "nothing written"
[[ ! -e $T/none ]] || fail "a failed import wrote $T/none"
sed "s/Atlas 800I A3/Atlas 9000 Z9/" "$P/upstream/qwen3_8b.mdx" >"$T/hw.mdx"
expect_rc 5 "$NPL" import "$T/hw.mdx" -o "$T/none"
expect_grep "$T/err" "no hardware profile is named 'Atlas 9000 Z9'"
sed '190s/$/ \&\& rm -rf \/tmp\/x/' "$P/upstream/qwen3_8b.mdx" >"$T/shell.mdx"
expect_rc 5 "$NPL" import "$T/shell.mdx" -o "$T/none"
expect_grep "$T/err" "$T/shell.mdx:190:31: error: cannot read a redirection"
# two pages of one model (the older and the newer layout) in one run: the second is refused by
# name, before anything is written (the commit said only "cannot create a file next to
# .../model.yaml: File exists")
expect_rc 5 "$NPL" import "$P/upstream-2026/qwen3_8b.mdx" "$P/upstream/qwen3_8b.mdx" -o "$T/none"
expect_grep "$T/err" "$P/upstream/qwen3_8b.mdx: error: model qwen3-8b is also the model of $P/upstream-2026/qwen3_8b.mdx, imported in this run"
[[ ! -e $T/none ]] || fail "a refused import of two pages of one model wrote $T/none"
# a page in good order beside a broken one: nothing of either is written
expect_rc 5 "$NPL" import "$P/upstream/qwen3_8b.mdx" "$T/typo.mdx" -o "$T/none"
[[ ! -e $T/none ]] || fail "a failed import wrote part of its pages"
# a page that is not UTF-8 text (found by fuzz_page: libyaml's emitter then freed an event twice)
sed '192s/0.894/0.89\xce/' "$P/upstream/qwen3_8b.mdx" >"$T/bytes.mdx"
expect_rc 5 "$NPL" import "$T/bytes.mdx" -o "$T/none"
expect_grep "$T/err" "$T/bytes.mdx:192:31: error: not a text page: the byte 0xce here does not start a UTF-8 character"
expect_rc 5 "$NPL" drift "$T/bytes.mdx"
expect_rc 5 "$NPL" import "$P/upstream/glossary.mdx" -o "$T/none"
expect_grep "$T/err" "no recipe section"
expect_rc 2 "$NPL" import "$P/upstream/qwen3_8b.mdx"
expect_rc 2 "$NPL" import -o "$T/none"
expect_rc 2 "$NPL" import "$P/upstream/qwen3_8b.mdx" -o "$T/none" --commit 'HEAD; rm -rf /'
expect_grep "$T/err" "is not a commit id"

finish
