# drift as a catalogue maintainer runs it: the shipped recipes against the pages they were
# written from (in sync: exit 0), then against copies of a page edited the ways upstream moves
# (a flag's value, an exported variable, a section retitled, a section dropped, one added), each
# difference named where it is; --json; an alias; pages that cannot be read.
. "$(dirname "$0")/lib.sh"

P=$NPL_DATA/pages

# ---- the catalogue against its own pages: nothing differs ----
expect_rc 0 "$NPL" drift "$P"/seeds/*.txt "$P"/upstream/deepseek_r1.mdx "$P"/upstream/deepseek_v3_2.mdx \
	"$P"/upstream/qwen3_*.mdx
expect_grep "$T/out" "= Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms -> qwen3-8b-w8a8-1p-in3k5-out1k5-5ms (by id)"
expect_grep "$T/out" "= Kimi-K2.6 W4A8 8P IN3K5 OUT1K5 20ms -> kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms (by id)"
expect_grep "$T/out" "= DeepSeek-R1 W8A8 2P1D 32P IN3K5 OUT1K5 16ms -> deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-16ms (by id)"
expect_eq "$(grep -c '^= ' "$T/out")" 58 "58 sections in sync"
expect_eq "$(tail -n 1 "$T/out")" "in sync" "the verdict"

# ---- the seed recipes (the specification) against the newest pages of their models: how upstream moved ----
N=$P/upstream-2026
expect_rc 1 "$NPL" drift "$N/kimi_k2_6.mdx" "$N/qwen3_5_397b.mdx" "$N/deepseek_v4_flash.mdx"
expect_eq "$(grep -c '^= Qwen3.5-397B-A17B' "$T/out")" 10 "the newest Qwen3.5 page deploys as the seed page"
expect_grep "$T/out" "~ Kimi-K2.6 W4A8 1P1D 16P IN128K OUT1K 100ms -> kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms (by id)"
expect_grep "$T/out" "    decode node 1 env SGLANG_ENABLE_SPEC_V2: page 1, recipe (none)"
expect_grep "$T/out" "    router unset http_proxy: page (none), recipe (set)"
expect_grep "$T/out" "    prefill node 1 env SGLANG_ENABLE_SPEC_V2: page 1, recipe (none)"
expect_nogrep "$T/err" "has no use for it"
# the newest DeepSeek-V3.2 page spells attention DP the new way (--attn-dp-size, SGLang after 001067ff):
# read, not refused (exit 5), and named as a difference from the recipe's --dp-size --enable-dp-attention
expect_rc 1 "$NPL" drift "$N/deepseek_v3_2.mdx"
expect_nogrep "$T/err" "is not an option of"
expect_grep "$T/out" "    decode node 1 flag --attn-dp-size: page 8, recipe (none)"
expect_grep "$T/out" "    decode node 1 flag --enable-dp-attention: page (none), recipe (set)"

# ---- a page that moved ----
pg=$T/qwen3_8b.mdx
sed -e '192s/--mem-fraction-static 0.894/--mem-fraction-static 0.9/' \
	-e '176s/SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1/SGLANG_ENABLE_OVERLAP_PLAN_STREAM=0/' \
	-e '127s/OUT1K5 5ms/OUT1K5 6ms/' "$P/upstream/qwen3_8b.mdx" >"$pg"
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
	expect_eq "$(jq -r '.pages[0].sections[1].at' "$T/out")" "$pg:127:5" "--json place of the section"
fi

# a section dropped upstream, another added: the recipe no section has, the section no recipe has
awk 'NR >= 222 && NR < 320 { next } { print }' "$P/upstream/qwen3_8b.mdx" |
	sed '127s/OUT1K5 5ms/OUT1K5 5ms NEW/; 128,200s/--max-running-requests 1 /--max-running-requests 1 /' >"$T/cut.mdx"
sed -i '127s/### Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms NEW/### Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms/' "$T/cut.mdx"
expect_rc 1 "$NPL" drift "$T/cut.mdx"
expect_grep "$T/out" "- qwen3-8b-w8a8-1p-in6k-out1k5-bs16: no section of the page corresponds to it"
sed '127s/IN3K5 OUT1K5 5ms/IN9K OUT1K5 5ms/; s/^\*\*Dataset\*\*: 3.5k+1.5k$/**Dataset**: 3.5k+1.5k/' \
	"$P/upstream/qwen3_8b.mdx" >"$T/new.mdx"
sed -i '/^### Qwen3-8B W8A8 1P IN9K OUT1K5 5ms$/,/^### /{s/^\*\*Dataset\*\*: .*/**Dataset**: 9k+1.5k/}' "$T/new.mdx"
expect_rc 1 "$NPL" drift "$T/new.mdx"
expect_grep "$T/out" "+ Qwen3-8B W8A8 1P IN9K OUT1K5 5ms: no recipe corresponds to it"
expect_grep "$T/out" "- qwen3-8b-w8a8-1p-in3k5-out1k5-5ms: no section of the page corresponds to it"

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
sed '192s/--mem-fraction-static 0.894/--mem-fraction-statc 0.894/' "$P/upstream/qwen3_8b.mdx" >"$T/typo.mdx"
expect_rc 5 "$NPL" drift "$T/typo.mdx"
expect_grep "$T/err" "$T/typo.mdx:"
expect_grep "$T/err" "--mem-fraction-statc is not an option of sglang.launch_server"
sed '190s/$/ \&\& rm -rf \/tmp\/x/' "$P/upstream/qwen3_8b.mdx" >"$T/shell.mdx"
expect_rc 5 "$NPL" drift "$T/shell.mdx"
expect_grep "$T/err" "$T/shell.mdx:190:"
expect_rc 5 "$NPL" drift "$P/upstream/glossary.mdx"
expect_grep "$T/err" "no recipe section"
expect_rc 5 "$NPL" drift "$T/no-such-page.mdx"
expect_rc 2 "$NPL" drift
expect_rc 2 "$NPL" drift --bogus "$pg"

finish
