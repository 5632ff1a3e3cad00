#!/usr/bin/env bash
# Builds the indexima_exporter image for each platform from source with
# buildah (the Dockerfile compiles it in its first stage, with the release
# script's flags) and gathers the images in one manifest list named $IMAGE.
# `make image` runs it; so does the image test (deploy/image_test.go), with
# local bases and vfs storage.
#
#   IMAGE              name of the manifest list (replaced when it exists), required
#   VERSION REVISION   what the binaries are stamped with (and the OCI labels)
#   SOURCE_DATE_EPOCH  the build date stamped (default: the commit's time)
#   PLATFORMS          default linux/amd64,linux/arm64
#   GO_IMAGE           default: the Dockerfile's (golang); BASE_IMAGE default: the
#                      Dockerfile's (distroless static, nonroot)
#   BUILDAH            default buildah; BUILDAH_FLAGS global flags (e.g. --storage-driver vfs)
#   BUD_FLAGS          extra flags of `buildah bud` (e.g. --isolation chroot)
#
# Push with: buildah manifest push --all "$IMAGE" docker://REGISTRY/indexima_exporter:VERSION
set -euo pipefail
cd "$(dirname "$0")/.."

: "${IMAGE:?set IMAGE, e.g. localhost/indexima_exporter:0.1.0}"
VERSION=${VERSION:-$(cat VERSION)}
REVISION=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || true)}
PLATFORMS=${PLATFORMS:-linux/amd64,linux/arm64}
BUILDAH=${BUILDAH:-buildah}
read -r -a global <<<"${BUILDAH_FLAGS:-}"
read -r -a bud <<<"${BUD_FLAGS:-}"
IFS=, read -r -a platforms <<<"$PLATFORMS"

# The compiler stage runs on this machine's platform and cross-compiles;
# buildah 1.28 does not set BUILDPLATFORM by itself.
build_platform="linux/$(go env GOHOSTARCH 2>/dev/null || uname -m | sed 's/x86_64/amd64/; s/aarch64/arm64/')"
args=(--build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION"
	--build-arg "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH" --build-arg "BUILDPLATFORM=$build_platform")
for a in GO_IMAGE BASE_IMAGE GOPROXY; do
	if [ -n "${!a:-}" ]; then
		args+=(--build-arg "$a=${!a}")
	fi
done

if "$BUILDAH" "${global[@]}" manifest inspect "$IMAGE" >/dev/null 2>&1; then
	"$BUILDAH" "${global[@]}" manifest rm "$IMAGE" >/dev/null
fi
"$BUILDAH" "${global[@]}" manifest create "$IMAGE" >/dev/null
for p in "${platforms[@]}"; do
	echo "image: $IMAGE for $p"
	"$BUILDAH" "${global[@]}" bud "${bud[@]}" --platform "$p" --manifest "$IMAGE" "${args[@]}" -f Dockerfile .
done
"$BUILDAH" "${global[@]}" manifest inspect "$IMAGE"
