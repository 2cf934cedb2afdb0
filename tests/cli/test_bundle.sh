# render -o as a bundle: an empty -o is refused; the manifest records what render wrote (sha256);
# files of an earlier bundle are removed, the user's own files kept, edited files refused without
# --force and named; --check tells stale from edited; a bundle is replaced whole or not at all
# under SIGINT, SIGTERM, SIGKILL and a full file system; leftovers of a killed run are cleaned by
# the next, and only those it proves its own (a marker), never a look-alike of the user's; a folder
# exchanged keeps its ACLs and extended attributes, and one a process works in is not exchanged;
# concurrent renders into one folder are serialised by a lock.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
PD=kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms
DIS=deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms
PD_FILES="bench.sh manifest.json pd-mixed.sh"
DIS_FILES="bench.sh decode.sh manifest.json prefill.sh router.sh"

# files DIR: the names in DIR, hidden ones too, on one line
files() { (cd "$1" && ls -A | tr '\n' ' ' | sed 's/ $//'); }

# whole [-k NAME]... DIR...: "" when each DIR holds exactly the files its manifest records (and
# the user's files named with -k), each recorded script with the recorded sha256; else what is
# wrong (a few processes for any number of folders: the signal loop checks 58 at a time)
whole() {
	local keep=() d k want got
	while [[ $1 == -k ]]; do
		keep+=("$2")
		shift 2
	done
	want=$( (jq -r 'input_filename as $f | .files | keys[] | "\($f | rtrimstr("/manifest.json"))/\(.)"' \
		"${@/%//manifest.json}" 2>&1
		for d in "$@"; do for k in "${keep[@]}"; do echo "$d/$k"; done; done) | LC_ALL=C sort)
	# a marker a run killed in its swap left is the next run's to remove (leftovers)
	got=$(find "$@" -mindepth 1 -maxdepth 1 ! -name .npulaunch-stage -printf '%h/%f\n' | LC_ALL=C sort)
	[[ $want == "$got" ]] || { diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -5; return; }
	jq -r 'input_filename as $f | .files | to_entries[] | select(.key != "manifest.json")
		| "\(.value.sha256)  \($f | rtrimstr("manifest.json"))\(.key)"' "${@/%//manifest.json}" |
		sha256sum -c --quiet 2>&1 | head -5
}

# leftovers DIR: staging folders and markers below DIR
leftovers() { find "$1" \( -name '.npulaunch-tmp-*' -o -name '.npulaunch-stage' \) -print | sort | head -20; }
MARK='npulaunch: a render'"'"'s staging folder; the next render into this folder removes it'
# stage DIR: a staging folder as a killed run leaves it (marked, a file or two in it)
stage() {
	mkdir -p "$1/old" && printf '%s\n' "$MARK" >"$1/.npulaunch-stage" && chmod 600 "$1/.npulaunch-stage" &&
		touch "$1/pd-mixed.sh" "$1/old/bench.sh"
}

# ---- 12: an empty -o is a usage error, not "/" or the current folder
mkdir "$T/cwd"
cd "$T/cwd" || exit 1
expect_rc 2 "$NPL" render $PD -o ""
expect_grep "$T/err" "npulaunch: render: -o needs a folder, not an empty name"
expect_rc 2 "$NPL" render --all -o ""
expect_rc 2 "$NPL" render --all --output= --check
cd - >/dev/null || exit 1
expect_eq "$(files "$T/cwd")" "" "files written by render -o ''"
[[ -e /$PD ]] && fail "render --all -o '' wrote into /"
# nor a name of the root, "$OUT/" with OUT unset (issue 25): refused before anything is written.
# A recipe folder of one recipe keeps a failure here from filling / with 61 bundles.
mkdir -p "$T/one/m"
printf 'kind: model\nid: root-probe\nname: Root Probe\n' >"$T/one/m/model.yaml"
sed 's/^model: .*/model: root-probe/; s/^title: .*/title: root probe w8a8 1p 9ms/' \
	"$NPL_SRC/recipes/qwen3-8b/qwen3-8b-w8a8-1p-in3k5-out1k5-5ms.yaml" >"$T/one/m/probe.yaml"
for o in / // /. "$T/.." "$(dirname "$T")/../" ; do
	[[ $(realpath -m "$o") == / ]] || continue
	expect_rc 2 "$NPL" --recipes "$T/one" render root-probe-w8a8-1p-9ms -o "$o"
	expect_grep "$T/err" "names the root folder: give a folder of its own"
	expect_rc 2 "$NPL" import "$NPL_DATA/pages/upstream-2026/qwen3_8b.mdx" -o "$o"
done
(cd / && "$NPL" --recipes "$T/one" render root-probe-w8a8-1p-9ms -o . >/dev/null 2>&1) && fail "render -o . in / was not refused"
[[ -e /root-probe-w8a8-1p-9ms || -e /qwen3-8b ]] && { rm -rf /root-probe-w8a8-1p-9ms /qwen3-8b; fail "a render or import wrote into /"; }

# ---- 14: the manifest records every file with its sha256
expect_rc 0 "$NPL" render $PD -o "$T/b"
expect_eq "$(files "$T/b")" "$PD_FILES" "first bundle"
expect_eq "$(jq -r '.files | keys | join(" ")' "$T/b/manifest.json")" "$PD_FILES" "recorded files"
expect_eq "$(whole "$T/b")" "" "first bundle whole"
expect_eq "$(jq -r '.files["pd-mixed.sh"].sha256' "$T/b/manifest.json")" \
	"$(sha256sum <"$T/b/pd-mixed.sh" | cut -c1-64)" "recorded sha256 of pd-mixed.sh"
# the user's own files beside the bundle, and a folder of theirs
echo "my notes" >"$T/b/notes.txt"
mkdir "$T/b/mine" && echo keep >"$T/b/mine/file"
# another recipe into the same folder: the earlier bundle's pd-mixed.sh goes, the user's files stay
expect_rc 0 "$NPL" render $DIS -o "$T/b"
expect_eq "$(files "$T/b")" "bench.sh decode.sh manifest.json mine notes.txt prefill.sh router.sh" \
	"second bundle beside the user's files"
expect_eq "$(whole -k mine -k notes.txt "$T/b")" "" "second bundle whole"
expect_eq "$(cat "$T/b/notes.txt" "$T/b/mine/file")" "my notes
keep" "the user's files"
# and back (a bundle without user files is exchanged whole: its folder keeps its mode)
rm -r "$T/b/notes.txt" "$T/b/mine"
chmod 0750 "$T/b"
expect_rc 0 "$NPL" render $PD -o "$T/b"
expect_eq "$(files "$T/b")" "$PD_FILES" "back to the first recipe"
expect_eq "$(stat -c %a "$T/b")" 750 "mode of the bundle folder"

# an edited script is refused, named, and nothing changes; --force overwrites it
echo "# my change" >>"$T/b/pd-mixed.sh"
snap() { (cd "$1" && find . -printf '%p %s %m %T@\n' | sort; cat ./*); }
before=$(snap "$T/b")
expect_rc 1 "$NPL" render $PD --model-path /other -o "$T/b"
expect_grep "$T/err" "npulaunch: $T/b/pd-mixed.sh: error: changed since npulaunch rendered it: render with --force to overwrite it"
expect_eq "$(snap "$T/b")" "$before" "a refused render changed the bundle"
cp "$T/b/pd-mixed.sh" "$T/edited.sh"
expect_rc 0 "$NPL" render $PD --force -o "$T/b"
expect_eq "$(whole "$T/b")" "" "forced bundle whole"
cmp -s "$T/b/pd-mixed.sh" "$T/edited.sh" && fail "--force kept the edited script"
expect_rc 0 "$NPL" render $PD -o "$T/b"
# an edited script that the new bundle lacks is kept, with a warning, never deleted
echo "# my change" >>"$T/b/pd-mixed.sh"
expect_rc 0 "$NPL" render $DIS -o "$T/b"
expect_grep "$T/err" "npulaunch: $T/b/pd-mixed.sh: warning: kept: changed since npulaunch rendered it, and the new bundle has no such file"
expect_eq "$(files "$T/b")" "bench.sh decode.sh manifest.json pd-mixed.sh prefill.sh router.sh" "edited script kept"
expect_eq "$(tail -1 "$T/b/pd-mixed.sh")" "# my change" "the kept script"
expect_eq "$(whole -k pd-mixed.sh "$T/b")" "" "bundle beside a kept script"
# a hand-edited manifest is an edit too
rm "$T/b/pd-mixed.sh"
sed -i "s|\"$DIS\"|\"$DIS-mine\"|" "$T/b/manifest.json"
expect_rc 1 "$NPL" render $DIS -o "$T/b"
expect_grep "$T/err" "npulaunch: $T/b/manifest.json: error: changed since npulaunch rendered it: render with --force to overwrite it"
expect_rc 0 "$NPL" render $DIS -o "$T/b" --force

# a folder that is not a bundle: the user's files at the bundle's names are not overwritten
mkdir "$T/mine"
echo "my own bench" >"$T/mine/bench.sh"
echo "notes" >"$T/mine/README"
expect_rc 1 "$NPL" render $PD -o "$T/mine"
expect_grep "$T/err" "npulaunch: $T/mine/bench.sh: error: not written by npulaunch: render with --force to overwrite it"
expect_eq "$(files "$T/mine")" "README bench.sh" "a refused render wrote"
expect_rc 0 "$NPL" render $PD -o "$T/mine" --force
expect_eq "$(files "$T/mine")" "README $PD_FILES" "forced render beside the user's file"
# a manifest without a record (an older npulaunch's): nothing is deleted, identical files are no edit
expect_rc 0 "$NPL" render $PD -o "$T/old"
jq 'del(.files)' "$T/old/manifest.json" >"$T/m" && mv "$T/m" "$T/old/manifest.json"
echo "#!/bin/sh" >"$T/old/router.sh"
expect_rc 1 "$NPL" render $PD -o "$T/old"
expect_grep "$T/err" "npulaunch: $T/old/manifest.json: error: not in the record of this folder's manifest (an older npulaunch kept none): render with --force to overwrite it"
expect_nogrep "$T/err" "pd-mixed.sh"
expect_rc 0 "$NPL" render $DIS -o "$T/old" --force
expect_eq "$(cat "$T/old/router.sh")" "$(cat "$T/b/router.sh")" "router.sh overwritten with --force"
expect_eq "$(files "$T/old")" "bench.sh decode.sh manifest.json pd-mixed.sh prefill.sh router.sh" \
	"an unrecorded file is never deleted"

# a tampered record never deletes what npulaunch did not write, even with the right sha256
expect_rc 0 "$NPL" render $PD -o "$T/t/b"
echo victim >"$T/t/victim"
echo mine >"$T/t/b/mine"
h=$(sha256sum <"$T/t/victim" | cut -c1-64)
hm=$(sha256sum <"$T/t/b/mine" | cut -c1-64)
jq --arg h "$h" --arg hm "$hm" '.files["../victim"] = {sha256: $h} | .files["/etc/passwd"] = {sha256: $h}
	| .files["."] = {sha256: $h} | .files["mine"] = {sha256: "0"} | .files["bench.sh"] = 7' \
	"$T/t/b/manifest.json" >"$T/m" && mv "$T/m" "$T/t/b/manifest.json"
# (the manifest no longer has its recorded sha256: its record is not trusted, nothing is deleted)
expect_rc 1 "$NPL" render $DIS -o "$T/t/b"
expect_grep "$T/err" "npulaunch: $T/t/b/manifest.json: error: changed since npulaunch rendered it"
expect_rc 0 "$NPL" render $DIS -o "$T/t/b" --force
expect_eq "$(cat "$T/t/victim" "$T/t/b/mine")" "victim
mine" "files named by a tampered record"
expect_eq "$(files "$T/t/b")" "bench.sh decode.sh manifest.json mine pd-mixed.sh prefill.sh router.sh" \
	"bundle after a tampered record"
# special files are never opened: a FIFO as the manifest or as a script does not hang render
mkdir "$T/fifo" && mkfifo "$T/fifo/manifest.json" "$T/fifo/pd-mixed.sh"
expect_rc 1 timeout 10 "$NPL" render $PD -o "$T/fifo"
expect_grep "$T/err" "npulaunch: $T/fifo/pd-mixed.sh: error: not written by npulaunch"
expect_rc 0 timeout 10 "$NPL" render $PD -o "$T/fifo" --force
expect_eq "$(whole "$T/fifo")" "" "bundle over FIFOs"
# through a symlink, and into the current folder (both updated in place, the link kept)
mkdir "$T/real" && ln -s real "$T/link"
expect_rc 0 "$NPL" render $PD -o "$T/link"
expect_rc 0 "$NPL" render $DIS -o "$T/link"
[[ -L $T/link ]] || fail "render replaced the symlink"
expect_eq "$(files "$T/real")" "$DIS_FILES" "bundle through a symlink"
cd "$T/real" || exit 1
expect_rc 0 "$NPL" render $PD -o .
expect_rc 0 "$NPL" render $PD --model-path /m -o "$T/real"
cd - >/dev/null || exit 1
expect_eq "$(whole "$T/real")" "" "bundle rendered into the current folder"
expect_eq "$(leftovers "$T/real")" "" "leftovers"

# ---- --check: stale (as rendered, out of date), edited (changed by hand), missing, extra
expect_rc 0 "$NPL" render $PD -o "$T/c"
expect_rc 0 "$NPL" render $PD -o "$T/c" --check
expect_rc 1 "$NPL" render $PD --model-path /new -o "$T/c" --check
expect_eq "$(cat "$T/out")" "stale $T/c/pd-mixed.sh
stale $T/c/manifest.json" "--check of an out-of-date bundle"
echo "# edit" >>"$T/c/bench.sh"
echo "{}" >"$T/c/manifest.json"
expect_rc 1 "$NPL" render $PD -o "$T/c" --check
expect_eq "$(cat "$T/out")" "edited $T/c/bench.sh
edited $T/c/manifest.json" "--check of an edited bundle"
expect_rc 0 "$NPL" render $PD -o "$T/c" --force
chmod 0644 "$T/c/pd-mixed.sh"
expect_rc 1 "$NPL" render $PD -o "$T/c" --check
expect_eq "$(cat "$T/out")" "stale $T/c/pd-mixed.sh" "--check of a mode change"
expect_rc 0 "$NPL" render $PD -o "$T/c"
expect_eq "$(stat -c %a "$T/c/pd-mixed.sh")" 755 "a mode change is put right without --force"

# ---- 15: leftovers of a killed run are cleaned by the next: only what is provably its own
expect_rc 0 "$NPL" render --all -o "$T/all"
stage "$T/all/.npulaunch-tmp-4242-0"
stage "$T/all/$PD/.npulaunch-tmp-4242-1"
mkdir -m 700 "$T/all/.npulaunch-tmp-4242-2" # killed between making it and marking it: empty
printf '%s\n' "$MARK" >"$T/all/$PD/.npulaunch-stage" && chmod 600 "$T/all/$PD/.npulaunch-stage" # killed in the swap
expect_rc 0 "$NPL" render $PD -o "$T/all/$PD"
expect_eq "$(leftovers "$T/all/$PD")" "" "leftovers after a single render"
expect_eq "$(whole "$T/all/$PD")" "" "the bundle after a single render"
expect_rc 0 "$NPL" render --all -o "$T/all"
expect_eq "$(leftovers "$T/all")" "" "leftovers after render --all"
# ... and what merely looks like one stays, the user's: hidden files and folders named like an
# older version's temporaries, a staging name that holds no marker, or a marker that is not one
# (other text, a symlink, a second name of a marker); the bundle goes in file by file around them
K=$T/keep
expect_rc 0 "$NPL" render $PD -o "$K"
mkdir -p "$K/.manifest.json.golden" "$K/.npulaunch-tmp-1-1" "$K/.npulaunch-tmp-1-2" "$K/.npulaunch-tmp-1-3" \
	"$K/.npulaunch-tmp-1-4" "$K/.npulaunch-tmp-1-5" "$K/.npulaunch-tmp-user" "$K/.npulaunch-tmp-1-7" \
	"$K/.npulaunch-tmp-1-8"
mkdir -m 700 "$K/.npulaunch-tmp-mine" # empty, but not named as npulaunch names its own
printf 'npulaunch: a' >"$K/.npulaunch-tmp-1-7/.npulaunch-stage" # the start of a marker: not one
chmod 600 "$K/.npulaunch-tmp-1-7/.npulaunch-stage"
printf '%s\n' "$MARK" >"$K/.npulaunch-tmp-1-8/.npulaunch-stage" # the marker's text, not its mode
echo mine >"$K/.pd-mixed.sh.backup"
echo mine >"$K/.manifest.json.golden/m"
echo mine >"$K/.bench.sh.AbC123"
echo mine >"$K/.npulaunch-tmp-1-1/notes"
printf '%s\n' "$MARK" >"$T/mark-elsewhere"
ln -s "$T/mark-elsewhere" "$K/.npulaunch-tmp-1-2/.npulaunch-stage"
echo other >"$K/.npulaunch-tmp-1-3/.npulaunch-stage"
ln "$T/mark-elsewhere" "$K/.npulaunch-tmp-1-4/.npulaunch-stage"
touch "$K/.npulaunch-tmp-1-5/x" && ln -s "$K/.npulaunch-tmp-1-5" "$K/.npulaunch-tmp-1-6"
echo mine >"$K/.npulaunch-stage"
(cd "$K" && find . -mindepth 1 ! -name '*.sh' ! -name manifest.json -print0 | LC_ALL=C sort -z | xargs -0 ls -ld --time-style=+ ) >"$T/keep.before"
expect_rc 0 "$NPL" render $PD --model-path /other -o "$K"
(cd "$K" && find . -mindepth 1 ! -name '*.sh' ! -name manifest.json -print0 | LC_ALL=C sort -z | xargs -0 ls -ld --time-style=+ ) >"$T/keep.after"
expect_eq "$(diff "$T/keep.before" "$T/keep.after")" "" "what a render kept of the user's"
expect_eq "$(cat "$K/.pd-mixed.sh.backup" "$K/.manifest.json.golden/m" "$K/.npulaunch-stage")" "mine
mine
mine" "the user's look-alikes"
expect_eq "$(jq -r '.site["model-path"]' "$K/manifest.json")" /other "the bundle beside them"
: >"$K/.npulaunch-stage" # the user's empty file of that name
expect_rc 0 "$NPL" render $PD -o "$K"
[[ -e $K/.npulaunch-stage ]] || fail "a render removed the user's empty .npulaunch-stage"
bundles=("$T/all"/*/)
expect_eq "$(whole "${bundles[@]%/}")" "" "bundles of render --all"

# ---- 15: a signal during render --all leaves each bundle wholly old or wholly new, no temporaries
S=$T/sig
expect_rc 0 "$NPL" render --all --model-path /v0 -o "$S"
t0=$(date +%s%N)
"$NPL" render --all --model-path /timing -o "$T/timing" 2>/dev/null
dur=$((($(date +%s%N) - t0) / 1000)) # microseconds
runs=12 old=0 new=0 mixed=0
for ((i = 1; i <= runs; i++)); do
	case $((i % 3)) in 0) sig=INT ;; 1) sig=TERM ;; 2) sig=KILL ;; esac
	"$NPL" render --all --model-path "/v$i" -o "$S" 2>/dev/null &
	pid=$!
	# spread over the run, a little past its usual end
	sleep "$(awk -v d=$dur -v i=$i -v n=$runs 'BEGIN { printf "%.6f", d * i / n * 1.2 / 1e6 }')"
	kill -$sig $pid 2>/dev/null
	wait $pid
	bundles=("$S"/*/)
	w=$(whole "${bundles[@]%/}")
	[[ -z $w ]] || fail "after SIG$sig at run $i: $w"
	# every bundle from one run: the whole set lands together (SIGKILL: each bundle whole)
	paths=$(jq -r '.site["model-path"]' "${bundles[@]/%/manifest.json}" | sort | uniq -c)
	n=$(wc -l <<<"$paths")
	if ((n > 1)) && [[ $sig == KILL ]]; then
		mixed=$((mixed + 1))
	elif ((n > 1)); then
		fail "after SIG$sig at run $i: bundles of $n runs: $(tr '\n' ' ' <<<"$paths")"
	elif [[ $paths == *" /v$i" ]]; then
		new=$((new + 1))
	else
		old=$((old + 1))
	fi
	if [[ $sig != KILL ]]; then
		expect_eq "$(leftovers "$S")" "" "leftovers after SIG$sig at run $i"
	else
		# the next run cleans what SIGKILL left (and lands whole)
		expect_rc 0 "$NPL" render --all --model-path "/v$i" -o "$S"
		expect_eq "$(leftovers "$S")" "" "leftovers after the run that follows SIGKILL at run $i"
	fi
done
echo "signals: $old runs left the old bundles, $new the new ones; SIGKILL mixed bundles of two runs $mixed times" >&2

# ---- 15: a re-render keeps what the folder is: its ACLs, extended attributes, mode and owner
if command -v setfacl >/dev/null && setfacl -m u:65534:rwx "$T" 2>/dev/null; then
	setfacl -b "$T"
	A=$T/acl
	expect_rc 0 "$NPL" render $PD -o "$A"
	setfacl -m u:65534:rwx,g::r-x "$A" && setfacl -d -m u:65534:r-x "$A"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.team", b"serving")' "$A" 2>/dev/null && xattr=1 || xattr=
	attrs() { stat -c '%a %u %g %i' "$1"; getfacl -cpn "$1" 2>/dev/null; [[ -z $xattr ]] ||
		python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.team"))' "$1"; }
	before=$(attrs "$A")
	expect_rc 0 "$NPL" render $PD --model-path /acl -o "$A"
	expect_eq "$(jq -r '.site["model-path"]' "$A/manifest.json")" /acl "the re-rendered bundle"
	# the inode may change (the folder is exchanged whole); all else stays
	expect_eq "$(attrs "$A" | sed '1s/ [0-9]*$//')" "$(sed '1s/ [0-9]*$//' <<<"$before")" "the folder's ACLs and attributes after a re-render"
	# the owning group has what its ACL entry gives it (r-x), not the mask's write bit
	expect_eq "$(getfacl -cpn "$A" | grep '^group::')" "group::r-x" "the owning group's entry"
	# a file written there takes the folder's default ACL, as one written in place would
	expect_grep <(getfacl -cpn "$A/pd-mixed.sh") "user:65534:r-x"
	# ... and a parent's default ACL does not reach a folder that had none
	P=$T/pacl
	expect_rc 0 "$NPL" render $PD -o "$P/b"
	setfacl -d -m u:65534:rwx "$P"
	before=$(attrs "$P/b")
	expect_rc 0 "$NPL" render $PD --model-path /pacl -o "$P/b"
	expect_eq "$(attrs "$P/b" | sed '1s/ [0-9]*$//')" "$(sed '1s/ [0-9]*$//' <<<"$before")" "a folder under a parent's default ACL"
	expect_eq "$(jq -r '.site["model-path"]' "$P/b/manifest.json")" /pacl "the bundle under a parent's default ACL"
else
	echo "SKIP: no setfacl, or a file system without ACLs: the ACL cases are not run"
fi
# ... and its file attributes (chattr): no atime updates, synchronous folder updates
C=$T/flags
expect_rc 0 "$NPL" render $PD -o "$C"
if chattr +A +D "$C" 2>/dev/null; then
	before=$(lsattr -d "$C" | cut -d' ' -f1)
	expect_rc 0 "$NPL" render $PD --model-path /flags -o "$C"
	expect_eq "$(jq -r '.site["model-path"]' "$C/manifest.json")" /flags "the re-rendered bundle"
	expect_eq "$(lsattr -d "$C" | cut -d' ' -f1)" "$before" "the folder's file attributes (lsattr) after a re-render"
else
	echo "SKIP: a file system without file attributes (chattr): that case is not run"
fi

# ---- 15: a process working in the folder keeps it: its results are not exchanged away
U=$T/use
expect_rc 0 "$NPL" render $PD -o "$U"
ino=$(stat -c %i "$U")
(cd "$U" && exec sleep 60) &
sleeper=$!
while [[ $(readlink "/proc/$sleeper/cwd") != "$U" ]]; do sleep 0.05; done
expect_rc 0 "$NPL" render $PD --model-path /use -o "$U"
expect_eq "$(stat -c %i "$U")" "$ino" "the folder a process works in (its inode)"
expect_eq "$(readlink "/proc/$sleeper/cwd")" "$U" "the working folder of the process inside"
expect_eq "$(jq -r '.site["model-path"]' "$U/manifest.json")" /use "the bundle a process works in"
expect_eq "$(whole "$U")" "" "the bundle a process works in"
kill $sleeper && wait $sleeper 2>/dev/null
# ... and a file open there (bash reads its script as it runs: bench.sh holds it open)
# shellcheck disable=SC2217  # sleep does not read it: the point is that it holds the file open
sleep 60 <"$U/bench.sh" &
sleeper=$!
while [[ $(readlink "/proc/$sleeper/fd/0") != "$U/bench.sh" ]]; do sleep 0.05; done
ino=$(stat -c %i "$U")
expect_rc 0 "$NPL" render $PD --model-path /open -o "$U"
expect_eq "$(stat -c %i "$U")" "$ino" "the folder a process has a file of open (its inode)"
# the file it reads was replaced in the folder, not carried off with a folder exchanged away
[[ $(readlink "/proc/$sleeper/fd/0") == "$U/bench.sh"* ]] || fail "the open file is now $(readlink "/proc/$sleeper/fd/0")"
kill $sleeper && wait $sleeper 2>/dev/null
# with nobody inside, it is exchanged whole again
expect_rc 0 "$NPL" render $PD --model-path /free -o "$U"
[[ $(stat -c %i "$U") != "$ino" ]] || fail "a folder nobody works in was not exchanged whole"
expect_eq "$(whole "$U")" "" "the bundle after the process left"

# ---- 15: a full file system: the render fails, the earlier bundle stays whole, nothing left
if unshare -rm true 2>/dev/null; then
	F=$T/full
	mkdir "$F"
	unshare -rm bash -c '
		mount -t tmpfs -o size=160k none "$1" || exit 9
		"$2" render "$3" -o "$1/b" 2>/dev/null || exit 8
		cp -a "$1/b" "$1.before"
		# fill it: what is left is less than a bundle
		head -c 150000 /dev/zero >"$1/fill" 2>/dev/null
		"$2" render "$3" --model-path /enospc -o "$1/b" 2>"$1.err" && exit 7
		diff -r "$1.before" "$1/b" >/dev/null || exit 6
		find "$1" \( -name ".npulaunch-*" \) | grep -q . && exit 5
		rm "$1/fill"
		"$2" render "$3" --model-path /room -o "$1/b" 2>/dev/null || exit 4
		find "$1" \( -name ".npulaunch-*" \) | grep -q . && exit 3
		exit 0' sh "$F" "$NPL" $PD
	rc=$?
	expect_eq "$rc" 0 "the ENOSPC case (9: no tmpfs, 8: first render, 7: no failure, 6: bundle changed, 5 and 3: leftovers, 4: no recovery)"
	expect_grep "$F.err" "No space left on device"
else
	echo "SKIP: no user namespace here (unshare -rm): the ENOSPC case is not run"
fi

# ---- 15: concurrent renders into one folder give one whole result
for i in 1 2 3 4; do
	"$NPL" render $PD -o "$T/cc" 2>/dev/null &
	"$NPL" render $DIS -o "$T/cc" 2>/dev/null &
	wait
	w=$(whole "$T/cc")
	[[ -z $w ]] || fail "concurrent renders, round $i: $w"
done
"$NPL" render --all --model-path /a -o "$T/ca" 2>/dev/null &
"$NPL" render --all --model-path /b -o "$T/ca" 2>/dev/null &
"$NPL" render $PD --model-path /c -o "$T/ca/$PD" 2>/dev/null &
wait
bundles=("$T/ca"/*/)
expect_eq "$(whole "${bundles[@]%/}")" "" "bundles of concurrent renders"
expect_eq "$(leftovers "$T/ca")" "" "leftovers of concurrent renders"
# a render waits for the lock that another holds on the output folder's parent
mkdir "$T/lk"
flock "$T/lk" sh -c ": >'$T/lk.held'; sleep 1.5" &
holder=$!
while [[ ! -e $T/lk.held ]]; do sleep 0.05; done
"$NPL" render $PD -o "$T/lk/b" 2>"$T/lk.err" &
pid=$!
sleep 0.5
kill -0 $pid 2>/dev/null || fail "render did not wait for the lock"
[[ -e $T/lk/b ]] && fail "render wrote while another held the lock"
wait $holder
wait $pid || fail "render after the lock: $(cat "$T/lk.err")"
expect_grep "$T/lk.err" "npulaunch: render: waiting for another npulaunch writing into '$T/lk'"
expect_eq "$(whole "$T/lk/b")" "" "bundle rendered after the lock"
# ... but not for a lock its own caller holds, the usual way to serialise CI jobs (issue 25):
# it would wait for itself forever. Refused at once, naming the holder; nothing written.
mkdir "$T/self"
expect_rc 1 timeout 30 flock "$T/self" "$NPL" render $PD -o "$T/self/deploy"
expect_grep "$T/err" "error: '$T/self' is locked by process "
expect_grep "$T/err" "which runs this npulaunch (flock DIR npulaunch ... -o DIR/...?): it would wait for itself forever"
expect_rc 1 timeout 30 flock "$T/self" sh -c '"$0" render "$1" -o "$2"' "$NPL" $PD "$T/self/deploy"
expect_grep "$T/err" "which runs this npulaunch"
expect_eq "$(files "$T/self")" "" "files written under a lock its caller holds"
expect_rc 0 timeout 30 flock "$T/self.lock" "$NPL" render $PD -o "$T/self/deploy"
finish
