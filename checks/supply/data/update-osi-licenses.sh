#!/bin/sh
# Regenerates osi-licenses.json from the npm package spdx-license-list (CC0-1.0): the SPDX
# ids whose osiApproved is true, sorted. Usage, from this directory:
#
#	sh update-osi-licenses.sh [VERSION]
#
# Needs npm and jq. Without VERSION it takes the latest. Review the diff, then record the
# version and date in README.md.
set -eu
version=${1:-$(npm view spdx-license-list version)}
published=$(npm view "spdx-license-list@$version" time --json | jq -r --arg v "$version" '.[$v][0:10]')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "spdx-license-list@$version" >/dev/null && tar xzf spdx-license-list-"$version".tgz)
jq --arg v "$version" --arg p "$published" --arg r "$(date -u +%Y-%m-%d)" '{
	source: "npm package spdx-license-list, file spdx.json, ids with osiApproved true",
	package: "spdx-license-list",
	version: $v,
	published: $p,
	retrieved: $r,
	licenses: ([to_entries[] | select(.value.osiApproved == true) | .key] | sort)
}' "$tmp/package/spdx.json" >osi-licenses.json
echo "osi-licenses.json: $(jq '.licenses | length' osi-licenses.json) licenses from spdx-license-list $version"
