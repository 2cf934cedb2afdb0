# Values with Unicode line breaks, controls and bytes that are not UTF-8 (issue 25, items 2 and
# 3), through every channel that carries a value (flags, --set, --env, a site file, a recipe of a
# --recipes folder and the folder's own path, a page that import reads and its file name) into
# every output (the scripts, k8s, rbg, docker, slurm, show --json, manifest.json, the recipes
# import writes). What JSON and YAML can carry (any Unicode character; YAML
# readers of 1.1, PyYAML, go-yaml and so kubectl, take U+0085, U+2028 and U+2029 for line breaks)
# reaches every output as exactly the value given: each bundle, read back (YAML by PyYAML, JSON by
# json, scripts byte for byte), equals the bundle of a value with a space in its place, the space
# replaced; the scripts pass shellcheck and launch it. What they cannot carry (bytes that are not
# UTF-8: a stray byte, an overlong form, a surrogate) is refused with a message that names where
# it was given, exit 2 (5 for a recipe or a page), and nothing written.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
need_python yaml
ID=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
RECIPE=$NPL_SRC/recipes/kimi-k2.6/$ID.yaml
make_root "$T/root"

# compare BASE HOSTILE VALUE: every file of HOSTILE is the file of BASE with each marker pair's
# space ("P1 P2") replaced by VALUE ("P1<VALUE>P2"), as read back: YAML by PyYAML (every
# document), JSON by json (manifest.json's sha256 of the files aside), anything else byte for byte
cat >"$T/compare.py" <<'PY'
import json, os, sys, yaml
base, hostile, value = sys.argv[1], sys.argv[2], os.fsencode(sys.argv[3])
marks = [b"P1", b"D1", b"S1", b"E1", b"R1", b"N1", b"F1", b"M1", b"L1", b"B1", b"T1", b"G1", b"H1"]
pairs = [(m + b" " + m[:1] + b"2", m + value + m[:1] + b"2") for m in marks]
def subst(x):
    if isinstance(x, bytes):
        for a, b in pairs:
            x = x.replace(a, b)
        return x
    if isinstance(x, str):
        return os.fsdecode(subst(os.fsencode(x)))
    if isinstance(x, list):
        return [subst(i) for i in x]
    if isinstance(x, dict):
        return {subst(k): subst(v) for k, v in x.items()}
    return x
bad = 0
def files(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)
if files(base) != files(hostile):
    print("files differ: %s vs %s" % (files(base), files(hostile)))
    sys.exit(1)
for f in files(base):
    a = open(os.path.join(base, f), "rb").read()
    b = open(os.path.join(hostile, f), "rb").read()
    try:
        if f.endswith(".yaml"):
            # what kubectl reads: UTF-8 text, every document
            a = list(yaml.safe_load_all(a.decode()))
            b = list(yaml.safe_load_all(b.decode("utf-8")))
        elif f.endswith(".json"):
            a = json.loads(a.decode())
            b = json.loads(b.decode("utf-8"))
            for j in (a, b):
                j.pop("files", None)
    except Exception as e:
        print("%s: not read back: %s" % (f, str(e).splitlines()[0]))
        bad = 1
        continue
    if subst(a) != b:
        print("%s: not the value given" % f)
        if isinstance(b, bytes):
            sa, sb = subst(a).split(b"\n"), b.split(b"\n")
            for i in range(min(len(sa), len(sb))):
                if sa[i] != sb[i]:
                    print("  want %r\n  got  %r" % (sa[i][:200], sb[i][:200]))
                    break
        bad = 1
    elif not f.endswith((".yaml", ".json")) and value not in b and b"P1 P2" in a:
        print("%s: the value is not there" % f)
        bad = 1
sys.exit(bad)
PY
# json_same BASE HOSTILE VALUE: show --json of each, read back, the same as compare says
json_same() {
	mkdir -p "$T/j1" "$T/j2"
	cp "$1" "$T/j1/plan.json"
	cp "$2" "$T/j2/plan.json"
	"$PY" "$T/compare.py" "$T/j1" "$T/j2" "$3"
}

# the channels: A (flags, --set, --env), B (a site file, a recipe of a folder whose path holds the
# value), C (A's flags without --set and --env); each target with the values it reads
target_args() {  # TARGET CHANNEL VALUE: the arguments of render
	local v=$3
	case $1 in
	scripts) ;;
	k8s | rbg) printf '%s\0' --target "$1" --image reg/sglang:1 ;;
	docker) printf '%s\0' --target docker --image reg/sglang:1 ;;
	slurm) printf '%s\0' --target slurm ;;
	esac
	if [[ $2 == [AC] ]]; then
		printf '%s\0' --model-path "/m/P1${v}P2" --draft-model-path "/d/D1${v}D2" --ifname eth0
		[[ $2 == A ]] && printf '%s\0' --set "served-model-name=S1${v}S2" --env "HOSTILE=E1${v}E2"
		[[ $1 == slurm ]] && printf '%s\0' --slurm-log-dir "/l/L1${v}L2" --slurm-npulaunch "/n/N1${v}N2/npulaunch"
	else
		printf '%s\0' --site "$T/site-$1.yaml" --recipes "$T/F1${v}F2"
	fi
	return 0
}
# ystr TEXT: TEXT as a YAML double-quoted scalar of ASCII only (JSON's escapes, which YAML reads)
ystr() {
	"$PY" -c 'import json, os, sys; print(json.dumps(os.fsdecode(os.fsencode(sys.argv[1]))))' "$1"
}
# site_file TARGET VALUE: the B channel's site file (JSON's escapes: YAML reads them) and recipe
site_file() {
	local v=$2
	{
		printf '%s: %s\n' ifname eth0
		case $1 in
		k8s | rbg)
			printf 'model-volume: pvc:weights\n'
			printf 'model-mount: %s\n' "$(ystr "/w/M1${v}M2")"
			printf 'model-path: %s\n' "$(ystr "/w/M1${v}M2/B1${v}B2")"
			;;
		*) printf 'model-path: %s\n' "$(ystr "/m/B1${v}B2")" ;;
		esac
		case $1 in
		k8s | rbg) printf 'draft-model-path: %s\n' "$(ystr "/w/M1${v}M2/D1${v}D2")" ;;
		*) printf 'draft-model-path: %s\n' "$(ystr "/d/D1${v}D2")" ;;
		esac
		[[ $1 == slurm ]] && printf 'slurm-log-dir: %s\n' "$(ystr "/l/L1${v}L2")"
	} >"$T/site-$1.yaml"
	rm -rf "$T"/F1*F2
	mkdir -p "$T/F1${v}F2"
	# a sysctl's value is said in comments too (the untuned hosts' note)
	sed -e "s|^env:\$|tuning:\n  sysctl:\n    vm.swappiness: $(ystr "T1${v}T2" | sed 's/[\\&|]/\\&/g')\nenv:\n  RECIPE_VAR: $(ystr "R1${v}R2" | sed 's/[\\&|]/\\&/g')|" \
		-e "s|^flags:\$|flags:\n  served-model-name: $(ystr "N1${v}N2" | sed 's/[\\&|]/\\&/g')|" \
		"$RECIPE" >"$T/F1${v}F2/r.yaml"
}

# ---- what JSON and YAML carry: exactly the value given, everywhere ------------------------------
values=($'\u0085' $'\u2028' $'\u2029' $'\u0080' $'\u009b' $'\x7f')
names=(U+0085 U+2028 U+2029 U+0080 U+009B DEL)
targets=(scripts k8s rbg docker slurm)
for t in "${targets[@]}"; do
	for ch in A B; do
		[[ $ch == B ]] && site_file "$t" ' '
		mapfile -d '' -t args < <(target_args "$t" $ch ' ')
		expect_rc 0 "$NPL" render $ID "${args[@]}" -o "$T/base-$t-$ch"
	done
done
mapfile -d '' -t args < <(target_args scripts A ' ')
expect_rc 0 "$NPL" show $ID "${args[@]}" --json
cp "$T/out" "$T/base-show.json"
for i in "${!values[@]}"; do
	v=${values[i]} n=${names[i]}
	for t in "${targets[@]}"; do
		for ch in A B; do
			[[ $ch == B ]] && site_file "$t" "$v"
			mapfile -d '' -t args < <(target_args "$t" $ch "$v")
			rm -rf "$T/h"
			expect_rc 0 "$NPL" render $ID "${args[@]}" -o "$T/h"
			[[ -d $T/h ]] || continue
			run "$PY" "$T/compare.py" "$T/base-$t-$ch" "$T/h" "$v"
			[[ $rc == 0 ]] || fail "$n through $ch, --target $t: $(head -c 1500 "$T/out")"
			# the shell files pass shellcheck
			mapfile -t sh < <(find "$T/h" -name '*.sh' -o -name '*.sbatch')
			sc "${sh[@]}" >"$T/sc.out" 2>&1 || fail "$n through $ch, --target $t: shellcheck: $(head -c 1000 "$T/sc.out")"
			# and the role script launches it
			if [[ $t == scripts ]]; then
				rm -f "$T/calls"
				(cd "$T/h" && env PATH="$T/root.bin:$PATH" NPULAUNCH_ROOT="$T/root" NPL_STUB_LOG="$T/calls" \
					bash ./pd-mixed.sh) >"$T/s.out" 2>"$T/s.err" || fail "$n through $ch: pd-mixed.sh failed: $(cat "$T/s.err")"
				if [[ $ch == A ]]; then
					expect_eq "$(jq -r '.argv | index("--model-path") as $i | .[$i + 1]' "$T/calls")" "/m/P1${v}P2" "$n: --model-path launched"
					expect_eq "$(jq -r '.argv | index("--served-model-name") as $i | .[$i + 1]' "$T/calls")" "S1${v}S2" "$n: --served-model-name launched"
					expect_eq "$(jq -r .env.HOSTILE "$T/calls")" "E1${v}E2" "$n: --env launched"
				else
					expect_eq "$(jq -r .env.RECIPE_VAR "$T/calls")" "R1${v}R2" "$n: the recipe's env launched"
				fi
			fi
		done
	done
	mapfile -d '' -t args < <(target_args scripts A "$v")
	expect_rc 0 "$NPL" show $ID "${args[@]}" --json
	cp "$T/out" "$T/h-show.json"
	run json_same "$T/base-show.json" "$T/h-show.json" "$v"
	[[ $rc == 0 ]] || fail "$n: show --json: $(cat "$T/out")"
done

# ---- a page imported: its file name (in each recipe's heading comment) and a value of its shell ----
PAGE=$NPL_DATA/pages/upstream/qwen3_8b.mdx
page_with() {  # VALUE: the page, named and changed with VALUE; prints its path
	rm -rf "$T/pg"
	mkdir -p "$T/pg"
	sed "s/^export HCCL_OP_EXPANSION_MODE=AIV\$/&\nexport HOSTILE_VAR='H1${1}H2'/" "$PAGE" >"$T/pg/qwen3_8b G1${1}G2.mdx"
	printf '%s' "$T/pg/qwen3_8b G1${1}G2.mdx"
}
expect_rc 0 "$NPL" import "$(page_with ' ')" -o "$T/imp-base"
expect_grep "$T/imp-base/qwen3-8b/model.yaml" 'HOSTILE_VAR: "H1 H2"'
for i in "${!values[@]}"; do
	v=${values[i]} n=${names[i]}
	rm -rf "$T/imp"
	expect_rc 0 "$NPL" import "$(page_with "$v")" -o "$T/imp"
	run "$PY" "$T/compare.py" "$T/imp-base" "$T/imp" "$v"
	[[ $rc == 0 ]] || fail "$n through a page, import: $(head -c 1500 "$T/out")"
done

# ---- what they cannot carry: refused where it was given, nothing written -----------------------
bad=($'\xff' $'\xc0\xaf' $'\xed\xa0\x80')
bad_names=(0xff 'overlong 0xc0 0xaf' 'surrogate 0xed 0xa0 0x80')
bad_said=('\xff' '\xc0\xaf' '\xed\xa0\x80')   # as messages write them
for i in "${!bad[@]}"; do
	v=${bad[i]} n=${bad_names[i]} e=${bad_said[i]}
	for t in "${targets[@]}"; do
		mapfile -d '' -t base < <(target_args "$t" C x)
		refused() {  # WHAT RC MESSAGE ARGS...: render and show --json refuse ARGS over the base
			local what=$1 want=$2 msg=$3
			shift 3
			rm -rf "$T/h"
			expect_rc "$want" "$NPL" render $ID "${base[@]}" "$@" -o "$T/h"
			expect_grep "$T/err" "$msg"
			[[ -e $T/h ]] && fail "$n through $what, --target $t: a refusal left output"
			[[ -s $T/out ]] && fail "$n through $what, --target $t: a refusal printed: $(head -c 300 "$T/out")"
			if [[ $t == scripts ]]; then
				expect_rc "$want" "$NPL" show $ID "${base[@]}" "$@" --json
				expect_grep "$T/err" "$msg"
				[[ -s $T/out ]] && fail "$n through $what: show --json printed: $(head -c 300 "$T/out")"
			fi
		}
		refused --model-path 2 "npulaunch: error: --model-path is not UTF-8 text" --model-path "/m/a${v}b"
		refused --draft-model-path 2 "npulaunch: error: --draft-model-path is not UTF-8 text" --draft-model-path "/m/a${v}b"
		refused --set 2 ": --set served-model-name=a${e}b is not UTF-8 text" --set "served-model-name=a${v}b"
		refused --env 2 ": --env HOSTILE=a${e}b is not UTF-8 text" --env "HOSTILE=a${v}b"
		if [[ $t == slurm ]]; then
			refused --slurm-log-dir 2 "npulaunch: error: --slurm-log-dir is not UTF-8 text" --slurm-log-dir "/l/a${v}b"
			refused --slurm-npulaunch 2 "npulaunch: error: --slurm-npulaunch is not UTF-8 text" --slurm-npulaunch "/n/a${v}b"
		fi
		if [[ $t == k8s ]]; then
			refused --model-mount 2 "npulaunch: error: --model-mount is not UTF-8 text" --model-volume pvc:w --model-mount "/w/a${v}b"
		fi
		# a site file with the bytes raw (YAML has no escape that gives them)
		printf 'model-path: /m/a%sb\n' "$v" >"$T/bad-site.yaml"
		refused "a site file" 2 "bad-site.yaml:1:" --site "$T/bad-site.yaml"
		# a recipe with them, and a recipes folder whose path holds them
		rm -rf "$T/badr" "$T"/F1*F2
		mkdir -p "$T/badr"
		sed "s|^env:\$|env:\n  RECIPE_VAR: R1${v}R2|" "$RECIPE" >"$T/badr/r.yaml"
		refused "a recipe" 5 "badr/r.yaml:" --recipes "$T/badr"
		mkdir -p "$T/F1${v}F2"
		cp "$RECIPE" "$T/F1${v}F2/r.yaml"
		refused "a recipes folder" 5 "is not UTF-8 text" --recipes "$T/F1${v}F2"
	done
	# a page with the bytes, and a page whose file name holds them (import --json names it)
	rm -rf "$T/imp"
	p=$(page_with x)
	sed -i "s/^export HOSTILE_VAR=.*/export HOSTILE_VAR='H1${v}H2'/" "$p"
	expect_rc 5 "$NPL" import "$p" -o "$T/imp"
	expect_grep "$T/err" "qwen3_8b G1xG2.mdx:76:"
	expect_grep "$T/err" "does not start a UTF-8 character"
	p=$(page_with x)
	mv "$p" "$T/pg/q${v}.mdx"
	expect_rc 5 "$NPL" import "$T/pg/q${v}.mdx" -o "$T/imp" --json
	expect_grep "$T/err" "/pg/q${e}.mdx': its path is not UTF-8 text"
	jq -e '.written == false and .pages == []' "$T/out" >/dev/null ||
		fail "$n in a page's name: import --json printed: $(head -c 300 "$T/out")"
	[[ -e $T/imp ]] && fail "$n through a page: a refusal left output"
done

# ---- what the user typed reaches the terminal escaped in usage errors too, and --json output is
# UTF-8 or nothing: an -o path --json would carry is refused before anything is written
K=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
hostile=$'\e]0;t\a\e[2J\xc2\x9b31m'
for argv in "render x${hostile}" "x${hostile}" "render $K --bogus${hostile}" "render $K --tpot ${hostile}" \
	"show $K --set ${hostile}" "render $K -o ${hostile}/../.."; do
	read -r -a a <<<"$argv"
	"$NPL" "${a[@]}" >/dev/null 2>"$T/esc.err"
	if LC_ALL=C grep -q $'\e\\|\a\\|\xc2\x9b' "$T/esc.err"; then
		fail "npulaunch ${argv@Q}: a control reached the terminal: $(od -c "$T/esc.err" | head -3)"
	fi
done
expect_rc 2 "$NPL" render $K -o "$T/o"$'\xff' --json
expect_grep "$T/err" "-o '$T/o\\xff' is not UTF-8 text: the byte 0xff"
[[ -e $T/o$'\xff' ]] && fail "render --json wrote a bundle it cannot name in JSON"
expect_eq "$(wc -c <"$T/out")" 0 "what render --json printed for an -o it cannot carry"
expect_rc 2 "$NPL" import "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx" -o "$T/i"$'\xff' --json
expect_grep "$T/err" "is not UTF-8 text"
# tune names its journal in the document: a root it cannot carry is refused before the host is
# touched (the journal stays, to be reverted without --json)
R=$T/root$'\xff'
mkdir -p "$R/proc/sys/vm" && echo 60 >"$R/proc/sys/vm/swappiness"
mkdir -p "$R/run/npulaunch" && printf 'kept\n' >"$R/run/npulaunch/tune-journal.json"
for mode in --revert --apply; do
	expect_rc 2 "$NPL" tune $mode --root "$R" --json
	expect_grep "$T/err" "--root '$T/root\\xff' is not UTF-8 text: the byte 0xff"
	expect_eq "$(wc -c <"$T/out")" 0 "what tune $mode --json printed for a root it cannot carry"
done
expect_eq "$(cat "$R/run/npulaunch/tune-journal.json" "$R/proc/sys/vm/swappiness")" "kept
60" "the host after tune --json refused its root"
# anything no check catches: no document at all, exit 1, never one no JSON reader takes
expect_rc 1 "$NPL" bench $K --dry-run --output-file "r"$'\xff'".jsonl" --json
expect_grep "$T/err" "npulaunch: bench: --json: the document would hold text that is not UTF-8"
expect_eq "$(wc -c <"$T/out")" 0 "what bench --json printed"
finish
