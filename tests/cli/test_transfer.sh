# The KV-cache transfer protocol as a choice (issue 24, item 5): transfer_protocol on a hardware
# profile (A2's default device_rdma; A3 none, memfabric's default), a model and a recipe, becoming
# ASCEND_MF_TRANSFER_PROTOCOL on the prefill and decode servers only; a layer's own export of the
# variable wins; null removes; host_rdma needs ASCEND_MF_NIC; bad values located. The A2 profile
# moved from exporting the variable to naming the protocol: that the shipped and the tests'
# recipes render the same scripts is golden.shapes' and golden.upstream's, and the last part here.
# shellcheck shell=bash source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || { fail "jq is not installed"; finish; }
R=$T/recipes
mkdir -p "$R"
printf 'kind: model\nid: kv-model\nname: KV-Model\n' >"$R/model.yaml"
# recipe NAME HARDWARE MODE EXTRA-LINES...: a recipe of 16 cards
recipe() {
	local name=$1 hw=$2 mode=$3
	shift 3
	{
		printf 'kind: recipe\ntitle: KV-Model BF16 16P %s\nmodel: kv-model\nhardware: %s\ncards: 16\n' "$name" "$hw"
		printf 'mode: %s\nquantization: BF16\ndataset: 1k+1k\ntpot: 50ms\n' "$mode"
		printf 'bench: {dataset: random, input: 1000, output: 1000, concurrency: 8, prompts: 8}\n'
		printf '%s\n' "$@"
	} >"$R/$name.yaml"
}
recipe A2 ascend-a2 pd-disagg
recipe A3 ascend-a3 pd-disagg
recipe URMA ascend-a3 pd-disagg 'transfer_protocol: device_urma'
recipe MIXED ascend-a2 pd-mixed 'transfer_protocol: sdma'
recipe NULL ascend-a2 pd-disagg 'transfer_protocol: null'
recipe ENV ascend-a2 pd-disagg 'env: {ASCEND_MF_TRANSFER_PROTOCOL: device_urma}'
recipe BOTH ascend-a3 pd-disagg 'transfer_protocol: sdma' 'roles: {decode: {env: {ASCEND_MF_TRANSFER_PROTOCOL: device_urma}}}'
recipe NIC ascend-a3 pd-disagg 'transfer_protocol: host_rdma' 'roles: {disagg: {env: {ASCEND_MF_NIC: {value: {site: ifname}}}}}'
S=(--recipes "$R")
SITE=(--model-path /m --ifname eth0 --prefill-ip 10.0.0.1 --decode-ip 10.0.0.3)
expect_rc 0 "$NPL" "${S[@]}" validate
expect_grep "$T/err" " 0 errors, "

# proto ID: "ROLE=VALUE ..." of ASCEND_MF_TRANSFER_PROTOCOL on every node of every role (- when unset)
proto() {
	run "$NPL" "${S[@]}" show "$1" --json "${SITE[@]}" "${@:2}"
	[[ $rc == 0 ]] || fail "show $1: $(cat "$T/err")"
	jq -r '[.roles[] | .role as $r | .nodes[]? | "\($r)=\(([.env[]? | select(.name == "ASCEND_MF_TRANSFER_PROTOCOL") | .value] | first) // "-")"] | join(" ")' "$T/out"
}
# origin ID ROLE: the origin of the variable on the role's first node
origin() {
	"$NPL" "${S[@]}" show "$1" --json "${SITE[@]}" 2>/dev/null |
		jq -c --arg r "$2" '.roles[] | select(.role == $r) | .nodes[0].env[] | select(.name == "ASCEND_MF_TRANSFER_PROTOCOL") | .origin'
}
P=kv-model-bf16-16p
# A2's default, on prefill and decode only; A3 has none
expect_eq "$(proto $P-a2)" "prefill=device_rdma decode=device_rdma router=- bench=-" "A2's default"
expect_eq "$(origin $P-a2 decode)" \
	'{"layer":"rule","rule":"transfer-protocol","why":"transfer_protocol device_rdma of hardware ascend-a2 at recipes/hardware/ascend-a2.yaml:46:20"}' \
	"the origin of A2's default"
sed -n 46p "$NPL_SRC/recipes/hardware/ascend-a2.yaml" | grep -qx 'transfer_protocol: device_rdma' || fail "ascend-a2.yaml:46 is not the transfer_protocol line"
expect_eq "$(proto $P-a3)" "prefill=- decode=- router=- bench=-" "A3 has none"
# a recipe's choice; never on a PD-mixed server
expect_eq "$(proto $P-urma)" "prefill=device_urma decode=device_urma router=- bench=-" "a recipe's protocol"
expect_eq "$(origin $P-urma prefill | jq -r .why)" "transfer_protocol device_urma of recipe $P-urma at $R/URMA.yaml:11:20" "the recipe's origin"
expect_eq "$(proto $P-mixed)" "pd-mixed=- pd-mixed=- bench=-" "PD mixed (two nodes) takes no protocol"
# null: memfabric's default again
expect_eq "$(proto $P-null)" "prefill=- decode=- router=- bench=-" "null removes A2's default"
# the variable exported by a layer wins: the old way keeps working
expect_eq "$(proto $P-env)" "prefill=device_urma decode=device_urma router=- bench=-" "a recipe's own export over A2's default"
expect_eq "$(origin $P-env decode | jq -c '[.layer, .at]')" "[\"recipe\",\"$R/ENV.yaml:11:7\"]" "the export's origin"
expect_eq "$(proto $P-both)" "prefill=sdma decode=device_urma router=- bench=-" "the role's export over the same recipe's protocol"
# a model's protocol, and a recipe's over it
printf 'transfer_protocol: sdma\n' >>"$R/model.yaml"
expect_eq "$(proto $P-a3)" "prefill=sdma decode=sdma router=- bench=-" "the model's protocol"
expect_eq "$(proto $P-a2)" "prefill=sdma decode=sdma router=- bench=-" "the model's protocol over A2's"
expect_eq "$(proto $P-urma)" "prefill=device_urma decode=device_urma router=- bench=-" "the recipe's over the model's"
printf 'kind: model\nid: kv-model\nname: KV-Model\n' >"$R/model.yaml"
# show --explain names the rule and where the protocol was chosen
expect_rc 0 "$NPL" "${S[@]}" show $P-urma --explain "${SITE[@]}"
grep -Eq "env +ASCEND_MF_TRANSFER_PROTOCOL=device_urma +# rule transfer-protocol: transfer_protocol device_urma of recipe $P-urma at $R/URMA.yaml:11:20$" "$T/out" ||
	fail "explain: $(grep TRANSFER "$T/out")"
# render: the scripts export it
expect_rc 0 "$NPL" "${S[@]}" render $P-urma -o "$T/urma" "${SITE[@]}"
expect_grep "$T/urma/prefill.sh" "ASCEND_MF_TRANSFER_PROTOCOL=device_urma"
expect_nogrep "$T/urma/router.sh" "ASCEND_MF_TRANSFER_PROTOCOL"

# ---- host_rdma needs ASCEND_MF_NIC -------------------------------------------------------------
expect_eq "$(proto $P-nic)" "prefill=host_rdma decode=host_rdma router=- bench=-" "host_rdma with its NIC"
expect_eq "$(jq -r '.roles[] | select(.role == "decode") | .nodes[0].env[] | select(.name == "ASCEND_MF_NIC") | .value' "$T/out")" '${ifname}' \
	"ASCEND_MF_NIC from the site's interface"
expect_rc 0 "$NPL" "${S[@]}" render $P-nic -o "$T/nic" "${SITE[@]}"
expect_grep "$T/nic/decode.sh" 'export ASCEND_MF_NIC="$IFNAME"'
recipe NONIC ascend-a3 pd-disagg 'transfer_protocol: host_rdma'
expect_rc 5 "$NPL" "${S[@]}" validate
expect_grep "$T/err" "npulaunch: $R/NONIC.yaml:11:20: error: transfer_protocol host_rdma moves the KV cache over a host NIC, which ASCEND_MF_NIC names: set it in env"
expect_eq "$(grep -c 'error: transfer_protocol host_rdma' "$T/err")" 1 "the missing NIC is reported once"
expect_rc 5 "$NPL" "${S[@]}" render $P-nonic -o "$T/nonic" "${SITE[@]}"
expect_rc 0 "$NPL" "${S[@]}" show $P-nonic "${SITE[@]}" --env ASCEND_MF_NIC=eth1
rm "$R/NONIC.yaml"
# an export of the variable itself is not held to it (the page's own choice, as written)
recipe RAW ascend-a3 pd-disagg 'env: {ASCEND_MF_TRANSFER_PROTOCOL: host_rdma}'
expect_rc 0 "$NPL" "${S[@]}" validate

# ---- the A2 profile naming its protocol deploys what it did when it exported the variable -----
# (the profile as it was, with the same id, overrides the shipped one; the scripts are the same)
mkdir -p "$T/was"
cp "$R/model.yaml" "$R/A2.yaml" "$T/was/"
awk '/^transfer_protocol: device_rdma$/ {next} {print} /^  disagg:$/ {print "    env:"; print "      ASCEND_MF_TRANSFER_PROTOCOL: device_rdma"}' \
	"$NPL_SRC/recipes/hardware/ascend-a2.yaml" >"$T/was/ascend-a2.yaml"
grep -q '^      ASCEND_MF_TRANSFER_PROTOCOL: device_rdma$' "$T/was/ascend-a2.yaml" || fail "the old profile was not made"
expect_rc 0 "$NPL" "${S[@]}" render $P-a2 -o "$T/now" "${SITE[@]}"
expect_rc 0 "$NPL" --recipes "$T/was" render $P-a2 -o "$T/then" "${SITE[@]}"
expect_grep "$T/then/prefill.sh" "ASCEND_MF_TRANSFER_PROTOCOL=device_rdma"
diff -r -x manifest.json "$T/then" "$T/now" >"$T/diff" || fail "the A2 scripts changed: $(head -c 2000 "$T/diff")"

# ---- bad values, located ----------------------------------------------------------------------
mkdir -p "$T/bad"
cp "$R/model.yaml" "$T/bad/"
for v in "device_rmda" "rdma" "[sdma]" "TRUE"; do
	grep -v '^transfer_protocol:' "$R/URMA.yaml" >"$T/bad/r.yaml"
	echo "transfer_protocol: $v" >>"$T/bad/r.yaml"
	expect_rc 5 "$NPL" --recipes "$T/bad" validate
	expect_grep "$T/err" "$T/bad/r.yaml:11:20: error: "
done
grep -v '^transfer_protocol:' "$R/URMA.yaml" >"$T/bad/r.yaml"
echo "transfer_protocol: device_rmda" >>"$T/bad/r.yaml"
expect_rc 5 "$NPL" --recipes "$T/bad" validate
expect_grep "$T/err" "error: unknown transfer_protocol 'device_rmda' (did you mean 'device_rdma'?) (sdma, device_rdma, host_rdma or device_urma)"
# not a key of the defaults
printf 'kind: defaults\nversion: "9"\ntransfer_protocol: sdma\n' >"$T/bad/defaults.yaml"
rm "$T/bad/r.yaml"
expect_rc 5 "$NPL" --recipes "$T/bad" validate
expect_grep "$T/err" "$T/bad/defaults.yaml:3:1: error: "
finish
