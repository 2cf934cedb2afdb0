# drift as a catalogue maintainer runs it: the shipped recipes against the pages they were
# written from (in sync: exit 0), then against copies of a page edited the ways upstream moves
# (a flag's value, an exported variable, a section retitled, a section dropped, one added), each
# difference named where it is; --json; an alias; pages that cannot be read.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"

P=$NPL_DATA/pages

# ---- the catalogue against its own pages: nothing differs ----
# the 22 seed recipes against the seed pages, the other 39 against the newest pages of their
# models (SGLang's 2026 layout; issue 24); MiMo-V2.5-Pro's page has no section title: its recipe
# is the one imported from that page without one (by provenance)
N=$P/upstream-2026
expect_rc 0 "$NPL" drift "$P"/seeds/*.txt "$N"/deepseek_r1.mdx "$N"/deepseek_v3_2.mdx "$N"/glm_5_2.mdx \
	"$N"/mimo_v2_5_pro.mdx "$N"/qwen3_235b_a22b.mdx "$N"/qwen3_30b_a3b.mdx "$N"/qwen3_6_*.mdx "$N"/qwen3_8b.mdx "$N"/qwen3_next_*.mdx
expect_grep "$T/out" "= Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms -> qwen3-8b-w8a8-1p-in3k5-out1k5-5ms (by id)"
expect_grep "$T/out" "= Kimi-K2.6 W4A8 8P IN3K5 OUT1K5 20ms -> kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms (by id)"
expect_grep "$T/out" "= DeepSeek-R1 W8A8 2P1D 32P IN3K5 OUT1K5 20ms -> deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-20ms (by id)"
expect_grep "$T/out" "= GLM-5.2 W4A8 3P1D 32P IN16K OUT1K 50ms -> glm-5.2-w4a8-3p1d-32p-in16k-out1k-50ms (by id)"
# the page's "TPOT: 10000ms" is the recipe's end-to-end target, read alike by import and drift
expect_grep "$T/out" "= Qwen3-30B-A3B BF16 1P IN1K OUT100 -> qwen3-30b-a3b-bf16-1p-in1k-out100 (by id)"
expect_grep "$T/out" "= (untitled) -> mimo-v2.5-pro-mxfp4-1p1d-8p-in16k-out1k (by provenance)"
expect_eq "$(grep -c '^= ' "$T/out")" 61 "61 sections in sync"
expect_eq "$(tail -n 1 "$T/out")" "in sync" "the verdict"

# ---- a catalogue written from the older layout against the newest pages: how upstream moved,
# each retitled or renamed recipe found by its title less the model's name, or by shape. (The
# models are renamed in both pages so that the shipped recipes, already the newest, stay out; the
# older page titles its Qwen3-30B recipes in lower case, "qwen3 30b w8a8 ...", which keeps its ids.)
mkdir -p "$T/before"
for f in deepseek_r1 qwen3_30b_a3b; do
	sed 's/DeepSeek-R1/DeepSeek-R9/g; s/Qwen3-30B/Qwen3-31B/g' "$P/upstream/$f.mdx" >"$T/old-$f.mdx"
	sed 's/DeepSeek-R1/DeepSeek-R9/g; s/Qwen3-30B/Qwen3-31B/g' "$N/$f.mdx" >"$T/new-$f.mdx"
done
"$NPL" import "$T"/old-*.mdx -o "$T/before" 2>/dev/null || fail "import of the older pages"
expect_rc 1 "$NPL" --recipes "$T/before" drift "$T"/new-*.mdx
expect_grep "$T/out" "~ DeepSeek-R9 W8A8 2P1D 32P IN3K5 OUT1K5 20ms -> deepseek-r9-w8a8-2p1d-32p-in3k5-out1k5-16ms (by shape)"
expect_grep "$T/out" "~ Qwen3-31B-A3B W8A8 1P IN6K OUT1K5 BS16 -> qwen3-30b-w8a8-1p-in6k-out1k5-bs16 (by title)"
expect_grep "$T/out" "~ Qwen3-31B-A3B W8A8 1P IN3K5 OUT1K5 50ms -> qwen3-30b-w8a8-1p-in3k5-out1k5-50ms-aime25 (by shape)"
expect_grep "$T/out" "+ Qwen3-31B-A3B BF16 1P IN1K OUT100: no recipe corresponds to it"
# the old ids are aliases of the recipes that replaced them
expect_rc 0 "$NPL" show deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-16ms
expect_grep "$T/err" "'deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-16ms' is now deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-20ms"

# ---- the seed recipes (the specification) against the newest pages of their models: how upstream moved ----
expect_rc 1 "$NPL" drift "$N/kimi_k2_6.mdx" "$N/qwen3_5_397b.mdx" "$N/deepseek_v4_flash.mdx"
expect_eq "$(grep -c '^= Qwen3.5-397B-A17B' "$T/out")" 10 "the newest Qwen3.5 page deploys as the seed page"
expect_grep "$T/out" "~ Kimi-K2.6 W4A8 1P1D 16P IN128K OUT1K 100ms -> kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms (by id)"
expect_grep "$T/out" "    decode node 1 env SGLANG_ENABLE_SPEC_V2: page 1, recipe (none)"
expect_grep "$T/out" "    router unset http_proxy: page (none), recipe (set)"
expect_grep "$T/out" "    prefill node 1 env SGLANG_ENABLE_SPEC_V2: page 1, recipe (none)"
expect_nogrep "$T/err" "has no use for it"
# the newest DeepSeek-V3.2 page spells attention DP the new way (--attn-dp-size, SGLang after
# 001067ff; the shipped recipes follow it: in sync above); the older page's --dp-size
# --enable-dp-attention is named as the difference
expect_rc 1 "$NPL" drift "$P/upstream/deepseek_v3_2.mdx"
expect_nogrep "$T/err" "is not an option of"
expect_grep "$T/out" "    decode node 1 flag --attn-dp-size: page (none), recipe 8"
expect_grep "$T/out" "    decode node 1 flag --enable-dp-attention: page (set), recipe (none)"

# ---- a page that moved ----
pg=$T/qwen3_8b.mdx
sed -e '194s/--mem-fraction-static 0.894/--mem-fraction-static 0.9/' \
	-e '177s/SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1/SGLANG_ENABLE_OVERLAP_PLAN_STREAM=0/' \
	-e '128s/OUT1K5 5ms/OUT1K5 6ms/' "$N/qwen3_8b.mdx" >"$pg"
grep -q 'mem-fraction-static 0.9 ' "$pg" || fail "the edit of the page did not take"
expect_rc 1 "$NPL" drift "$pg"
expect_grep "$T/out" "~ Qwen3-8B W8A8 1P IN3K5 OUT1K5 6ms -> qwen3-8b-w8a8-1p-in3k5-out1k5-5ms (by shape)"
expect_grep "$T/out" "pd-mixed node 1 flag --mem-fraction-static: page 0.9, recipe 0.894"
expect_grep "$T/out" "pd-mixed node 1 env SGLANG_ENABLE_OVERLAP_PLAN_STREAM: page 0, recipe 1"
expect_grep "$T/out" "recipe metadata title: page Qwen3-8B W8A8 1P IN3K5 OUT1K5 6ms, recipe Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms"
expect_grep "$T/out" "= Qwen3-8B W8A8 1P IN3K5 OUT1K5 37ms"
expect_eq "$(tail -n 1 "$T/out")" "out of sync" "the verdict"
if command -v jq >/dev/null; then
	expect_rc 1 "$NPL" drift "$pg" --json
	expect_eq "$(jq -r '.in_sync' "$T/out")" false "--json in_sync"
	expect_eq "$(jq -r '.pages[0].sections[1] | "\(.recipe) \(.by)"' "$T/out")" \
		"qwen3-8b-w8a8-1p-in3k5-out1k5-5ms shape" "--json match"
	expect_eq "$(jq -r '.pages[0].sections[1].differences[] | select(.name == "mem-fraction-static") |
		"\(.kind) \(.role) \(.node) \(.page) \(.recipe)"' "$T/out")" "flag pd-mixed 0 0.9 0.894" "--json difference"
	expect_eq "$(jq -r '.pages[0].sections[1].at' "$T/out")" "$pg:128:5" "--json place of the section"
fi

# a section dropped upstream, another added: the recipe no section has, the section no recipe has
awk 'NR >= 226 { next } { print }' "$N/qwen3_8b.mdx" >"$T/cut.mdx"
expect_rc 1 "$NPL" drift "$T/cut.mdx"
expect_grep "$T/out" "- qwen3-8b-w8a8-1p-in6k-out1k5-bs16: no section of the page corresponds to it"
sed '128s/IN3K5 OUT1K5 5ms/IN9K OUT1K5 5ms/' "$N/qwen3_8b.mdx" >"$T/new.mdx"
sed -i '/^### Qwen3-8B W8A8 1P IN9K OUT1K5 5ms$/,/^### /{s/^\*\*Dataset\*\*: .*/**Dataset**: 9k+1.5k/}' "$T/new.mdx"
expect_rc 1 "$NPL" drift "$T/new.mdx"
expect_grep "$T/out" "+ Qwen3-8B W8A8 1P IN9K OUT1K5 5ms: no recipe corresponds to it"
expect_grep "$T/out" "- qwen3-8b-w8a8-1p-in3k5-out1k5-5ms: no section of the page corresponds to it"

# ---- a page with no section title (MiMo-V2.5-Pro's): its recipe is the one imported from a page of
# that name without one; a flag of the decode node and the second benchmark's rate moved ----
mkdir -p "$T/mimo"
sed -e 's/--mem-fraction-static 0.88 /--mem-fraction-static 0.87 /' -e 's/--request-rate inf/--request-rate 2/' \
	"$N/mimo_v2_5_pro.mdx" >"$T/mimo/mimo_v2_5_pro.mdx"
grep -q 'mem-fraction-static 0.87 ' "$T/mimo/mimo_v2_5_pro.mdx" || fail "the edit of the MiMo page did not take"
expect_rc 1 "$NPL" drift "$T/mimo/mimo_v2_5_pro.mdx"
expect_grep "$T/out" "~ (untitled) -> mimo-v2.5-pro-mxfp4-1p1d-8p-in16k-out1k (by provenance)"
expect_grep "$T/out" "    decode node 1 flag --mem-fraction-static: page 0.87, recipe 0.88"
expect_grep "$T/out" "    bench 2 flag --request-rate: page 2, recipe inf"
expect_eq "$(grep -c '^    ' "$T/out")" 2 "two differences"
# a page of another name: no recipe was imported from it; located, exit 5
cp "$N/mimo_v2_5_pro.mdx" "$T/mimo/other.mdx"
expect_rc 5 "$NPL" drift "$T/mimo/other.mdx"
expect_grep "$T/err" "$T/mimo/other.mdx:13:5: error: the page's deployment has no section title, and no recipe was imported"

# ---- an id upstream renamed: an alias keeps it, and drift finds the recipe by it ----
mkdir -p "$T/r/qwen3-8b"
sed 's/^title: .*/title: Qwen3-8B W8A8 1P IN3K5 OUT1K5 5.5ms/' \
	"$NPL_SRC/recipes/qwen3-8b/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms.yaml" >"$T/r/qwen3-8b/renamed.yaml"
printf 'aliases: [qwen3-8b-w8a8-1p-in3k5-out1k5-6ms]\n' >>"$T/r/qwen3-8b/renamed.yaml"
expect_rc 0 "$NPL" --recipes "$T/r" show qwen3-8b-w8a8-1p-in3k5-out1k5-6ms
expect_grep "$T/err" "'qwen3-8b-w8a8-1p-in3k5-out1k5-6ms' is now qwen3-8b-w8a8-1p-in3k5-out1k5-5.5ms"
expect_rc 1 "$NPL" --recipes "$T/r" drift "$pg"
expect_grep "$T/out" "~ Qwen3-8B W8A8 1P IN3K5 OUT1K5 6ms -> qwen3-8b-w8a8-1p-in3k5-out1k5-5.5ms (by alias)"

# ---- what cannot be read: located, exit 5 ----
sed '194s/--mem-fraction-static 0.894/--mem-fraction-statc 0.894/' "$N/qwen3_8b.mdx" >"$T/typo.mdx"
expect_rc 5 "$NPL" drift "$T/typo.mdx"
expect_grep "$T/err" "$T/typo.mdx:"
expect_grep "$T/err" "--mem-fraction-statc is not an option of sglang.launch_server"
sed '191s/$/ \&\& rm -rf \/tmp\/x/' "$N/qwen3_8b.mdx" >"$T/shell.mdx"
expect_rc 5 "$NPL" drift "$T/shell.mdx"
expect_grep "$T/err" "$T/shell.mdx:191:"
expect_rc 5 "$NPL" drift "$P/upstream/glossary.mdx"
expect_grep "$T/err" "no recipe section"
expect_rc 5 "$NPL" drift "$T/no-such-page.mdx"
expect_rc 2 "$NPL" drift
expect_rc 2 "$NPL" drift --bogus "$pg"

finish
