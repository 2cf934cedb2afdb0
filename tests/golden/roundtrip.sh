#!/bin/bash
# The round trip of `npulaunch import` (issue 24): the 3 seed pages and the 8 older upstream pages
# of the test data imported into a fresh folder, validated, and then proved by the same tests
# that prove the hand-written recipes: each imported recipe rendered, run node by node on the
# simulated host, and what each node launched compared exactly with the pages' own records
# (tests/golden/expected for the seeds, tests/golden/upstream for SGLang's pages; derived from
# the pages by the derive-*.py scripts, not by npulaunch). The imported documents override the
# shipped ones of the same ids, so every launch checked comes from an imported file.
# Environment: NPL, NPL_DATA, NPL_TEST_GOLDEN, NPL_TEST_UPSTREAM (set by tests/CMakeLists.txt).
set -u
T=$(mktemp -d "${TMPDIR:-/tmp}/npl-roundtrip-XXXXXX")
trap 'rm -rf "$T"' EXIT
P=$NPL_DATA/pages
"$NPL" import "$P"/seeds/*.txt "$P"/upstream/deepseek_*.mdx "$P"/upstream/qwen3_*.mdx -o "$T/r" || exit 1
n=$(find "$T/r" -name '*.yaml' ! -name model.yaml | wc -l)
[[ $n == 58 ]] || { echo "FAIL: $n recipes imported, want 58" >&2; exit 1; }
"$NPL" --recipes "$T/r" validate >/dev/null || exit 1
rc=0
NPL_GOLDEN_RECIPES=$T/r "$NPL_TEST_GOLDEN" || rc=1
NPL_UPSTREAM_RECIPES=$T/r "$NPL_TEST_UPSTREAM" || rc=1

# The proof can fail: a flag, a variable and a node of three imported recipes changed, and the
# same records catch exactly those three.
cp -r "$T/r" "$T/m"
f1=$T/m/qwen3-8b/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms.yaml
f2=$T/m/deepseek-v3.2/model.yaml
f3=$T/m/deepseek-r1/deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms.yaml
sed -i 's/mem-fraction-static: 0.894/mem-fraction-static: 0.895/' "$f1"
sed -i 's/^\( *\)HCCL_BUFFSIZE: 1200$/\1HCCL_BUFFSIZE: 1201/' "$f2"
# two one-node prefills become one prefill over both nodes
sed -i '/^  prefill:$/,/^  decode:$/{s/instances: 2/instances: 1/; s/cards: 8/cards: 16/}' "$f3"
grep -q 'mem-fraction-static: 0.895' "$f1" && grep -q 'HCCL_BUFFSIZE: 1201' "$f2" &&
	grep -A2 '^  prefill:$' "$f3" | grep -q 'cards: 16' ||
	{ echo "FAIL: the recipes to change are not as imported" >&2; exit 1; }
NPL_UPSTREAM_RECIPES=$T/m "$NPL_TEST_UPSTREAM" >"$T/m.out" 2>&1 && { echo "FAIL: changed recipes passed" >&2; rc=1; }
failed=$(sed -n 's/^\[  FAILED  \] \([a-z0-9.-]*\)$/\1/p' "$T/m.out" | sort -u | tr '\n' ' ')
want="deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-50ms deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-26ms "
want+="deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-bs16 deepseek-v3.2-w8a8-1p1d-32p-in128k-out1k-bs8 "
want+="qwen3-8b-w8a8-1p-in3k5-out1k5-5ms "
[[ $failed == "$want" ]] || { echo "FAIL: the changed recipes failed as [$failed], want [$want]" >&2; rc=1; }
exit $rc
