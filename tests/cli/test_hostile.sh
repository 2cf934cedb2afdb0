# Values that are legal but dangerous to a shell reach SGLang literally: a
# table of them through --model-path, --draft-model-path, --set, --env and a
# site file; each rendered script runs with a stub server that records its
# argv and environment, and nothing else runs (no PWNED file, one launch).
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
make_root "$T/root"
mkdir -p "$T/cwd"
touch "$T/cwd/a" "$T/cwd/b"   # for a glob to match, were one left unquoted
ID=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
values=(
	'/models/with space'
	"/models/it's"
	'/models/"double"'
	'/models/$(touch PWNED)'
	'/models/`touch PWNED`'
	'/models/a;touch PWNED'
	'/models/a&&touch PWNED'
	'/models/a|touch PWNED'
	'/models/*'
	'/models/?[ab]'
	'/models/{a,b}'
	'/models/~root'
	'/models/$HOME'
	'/models/${IFS}x'
	'/models/back\slash'
	'/models/-dash'
	$'/models/tab\there'
	'/models/é—中文'
	'/models/$((1+1))'
	'/models/!'
	'/models/#hash'
	'/models/>out'
)
i=0
for v in "${values[@]}"; do
	i=$((i + 1))
	w="$v/draft"
	e="value: $v"
	expect_rc 0 "$NPL" render $ID --model-path "$v" --draft-model-path "$w" --ifname eth0 \
		--env "HOSTILE=$e" --set "served-model-name=$v" -o "$T/r$i"
	rm -f "$T/calls"
	(cd "$T/cwd" && env PATH="$T/root.bin:$PATH" NPULAUNCH_ROOT="$T/root" NPL_STUB_LOG="$T/calls" \
		bash "$T/r$i/pd-mixed.sh") >"$T/out" 2>"$T/err" || fail "value $i: the script failed: $(cat "$T/err")"
	expect_eq "$(grep -c . "$T/calls")" 1 "value $i: launches"
	got=$(jq -r '.argv | index("--model-path") as $i | .[$i + 1]' "$T/calls")
	expect_eq "$got" "$v" "value $i: --model-path"
	got=$(jq -r '.argv | index("--speculative-draft-model-path") as $i | .[$i + 1]' "$T/calls")
	expect_eq "$got" "$w" "value $i: --speculative-draft-model-path"
	got=$(jq -r '.argv | index("--served-model-name") as $i | .[$i + 1]' "$T/calls")
	expect_eq "$got" "$v" "value $i: --served-model-name"
	expect_eq "$(jq -r '.env.HOSTILE' "$T/calls")" "$e" "value $i: env"
	# and the manifest keeps it as data
	expect_eq "$(jq -r '.site["model-path"]' "$T/r$i/manifest.json")" "$v" "value $i: manifest"
	# and shellcheck sees nothing wrong either
	sc "$T/r$i/pd-mixed.sh" >/dev/null 2>&1 || fail "value $i: shellcheck"
done
[[ -e $T/cwd/PWNED || -e $T/PWNED || -e $T/r1/PWNED ]] && fail "a hostile value ran a command"
# the same from a site file, and through apply
cat >"$T/site.yaml" <<'YAML'
model-path: '/models/$(touch PWNED) and "quotes"'
draft-model-path: "/models/`touch PWNED`"
ifname: eth0
YAML
expect_rc 0 "$NPL" render $ID --site "$T/site.yaml" -o "$T/site"
rm -f "$T/calls"
(cd "$T/cwd" && env PATH="$T/root.bin:$PATH" NPULAUNCH_ROOT="$T/root" NPL_STUB_LOG="$T/calls" \
	bash "$T/site/pd-mixed.sh") >"$T/out" 2>"$T/err" || fail "site file: $(cat "$T/err")"
expect_eq "$(jq -r '.argv | index("--model-path") as $i | .[$i + 1]' "$T/calls")" '/models/$(touch PWNED) and "quotes"' "site file model path"
rm -f "$T/calls"
(cd "$T/cwd" && env PATH="$T/root.bin:$PATH" NPULAUNCH_ROOT="$T/root" NPL_STUB_LOG="$T/calls" \
	"$NPL" apply $ID --site "$T/site.yaml") >"$T/out" 2>"$T/err" || fail "apply: $(cat "$T/err")"
expect_eq "$(jq -r '.argv | index("--speculative-draft-model-path") as $i | .[$i + 1]' "$T/calls")" '/models/`touch PWNED`' "apply draft path"
[[ -e $T/cwd/PWNED ]] && fail "a hostile site value ran a command"
# what is not legal is refused before anything is written
expect_rc 2 "$NPL" render $ID --model-path $'/models/new\nline' -o "$T/nl"
expect_grep "$T/err" "--model-path must not contain a line break"
expect_rc 2 "$NPL" render $ID --model-path 'models/relative' -o "$T/nl"
expect_rc 2 "$NPL" render $ID --ifname 'eth0 x' -o "$T/nl"
expect_rc 2 "$NPL" render kimi-k2.6-w4a8-16p-in64k-out1k-100ms --node-ip '10.0.0.1;reboot' --node-ip 10.0.0.2 -o "$T/nl"
expect_rc 2 "$NPL" render kimi-k2.6-w4a8-16p-in64k-out1k-100ms --node-ip 10.0.0.1 --node-ip 'fe80::1%eth0' -o "$T/nl"
[[ -e $T/nl ]] && fail "a refused value left output"
finish
