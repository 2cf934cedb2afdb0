#!/bin/bash
# gen-db.sh N DIR: a recipe database of N recipes in DIR, for the benchmark.
# Each is a copy of one of the shipped recipes (round robin) under a new id
# (its title, hence its id, and its file name) with a different TPOT, so that the generated recipes are
# realistic in size and shape and all distinct. One awk process writes them all.
set -euo pipefail
n=${1:?usage: gen-db.sh N DIR}
dir=${2:?usage: gen-db.sh N DIR}
src=$(cd "$(dirname "$0")/../recipes" && pwd)
case $n in ''|*[!0-9]*) echo "gen-db.sh: N must be a number, not '$n'" >&2; exit 2 ;; esac
rm -rf "$dir"
mkdir -p "$dir"
mapfile -t files < <(cd "$src" && find . -mindepth 2 -name '*.yaml' ! -name model.yaml ! -path './engine/*' \
	! -path './hardware/*' | sort)
for f in "${files[@]}"; do mkdir -p "$dir/$(dirname "$f")"; done
awk -v n="$n" -v dir="$dir" -v src="$src" '
	BEGIN { RS = "^$" }   # each file whole
	{ text[FILENAME] = $0 }
	END {
		k = 0
		for (i = 1; i < ARGC; i++) name[k++] = ARGV[i]
		for (i = 0; i < n; i++) {
			f = name[i % k]
			rel = substr(f, length(src) + 2)
			sub(/\.yaml$/, "", rel)
			out = sprintf("%s/%s-g%05d.yaml", dir, rel, i)
			t = text[f]
			sub(/\ntpot: "?[0-9.]+ms"?/, sprintf("\ntpot: %dms", 10 + i % 190), t)
			# the id comes from the title, quoted or not (imported recipes quote it)
			if (!sub(/\ntitle: "[^"\n]*/, sprintf("& G%05d", i), t))
				sub(/\ntitle: [^\n]*/, sprintf("& G%05d", i), t)
			gsub(/\naliases:(\n- [^\n]*)+/, "", t)   # an old id names one recipe only
			printf "%s", t > out
			close(out)
		}
	}' "${files[@]/#./$src}"
