#!/bin/sh
# Regenerate test/data/upstream-allocator/<tag>/ from upstream's allocator test tables.
# usage: tools/upstream-allocator/translate.sh REPO TAG...   (REPO: a clone, bare or not, of
# https://github.com/kubernetes/dynamic-resource-allocation; needs Go >= 1.19, stdlib only)
set -eu
[ $# -ge 2 ] || { echo "usage: $0 REPO TAG..." >&2; exit 2; }
repo=$(cd "$1" && pwd)
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top/tools/upstream-allocator"
for tag in "$@"; do
	go run . -repo "$repo" -tag "$tag" -out "$top/test/data/upstream-allocator"
done
