#!/usr/bin/env bash
# Builds the indexima_exporter image for each platform from the cross-built
# binaries ($BUILD_DIR/linux-<arch>/indexima_exporter, made by `make
# crossbuild`) with buildah, and gathers the images in one manifest list
# named $IMAGE. No compiler runs: each image gets the binary of the release
# archive of its platform. `make image` runs it; so does the image test
# (deploy/image_test.go), with a local base and vfs storage.
#
#   IMAGE        name of the manifest list (replaced when it exists), required
#   VERSION      REVISION   what the binaries were stamped with (OCI labels)
#   PLATFORMS    default linux/amd64,linux/arm64
#   BUILD_DIR    default .build
#   BASE_IMAGE   default: the Dockerfile's (distroless static, nonroot)
#   BUILDAH      default buildah; BUILDAH_FLAGS global flags (e.g. --storage-driver vfs)
#   BUD_FLAGS    extra flags of `buildah bud` (e.g. --isolation chroot)
#
# Push with: buildah manifest push --all "$IMAGE" docker://REGISTRY/indexima_exporter:VERSION
set -euo pipefail
cd "$(dirname "$0")/.."

: "${IMAGE:?set IMAGE, e.g. localhost/indexima_exporter:0.1.0}"
VERSION=${VERSION:-$(cat VERSION)}
REVISION=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
PLATFORMS=${PLATFORMS:-linux/amd64,linux/arm64}
BUILD_DIR=${BUILD_DIR:-.build}
BUILDAH=${BUILDAH:-buildah}
read -r -a global <<<"${BUILDAH_FLAGS:-}"
read -r -a bud <<<"${BUD_FLAGS:-}"

# The build context holds exactly what the Dockerfile copies.
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp Dockerfile LICENSE "$context/"
IFS=, read -r -a platforms <<<"$PLATFORMS"
for p in "${platforms[@]}"; do
	bin="$BUILD_DIR/${p/\//-}/indexima_exporter"
	if [ ! -f "$bin" ]; then
		echo "image: $bin missing: run make crossbuild PLATFORMS=$PLATFORMS first" >&2
		exit 1
	fi
	mkdir -p "$context/.build/${p/\//-}"
	cp "$bin" "$context/.build/${p/\//-}/"
done

args=(--build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION")
if [ -n "${BASE_IMAGE:-}" ]; then
	args+=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
fi

if "$BUILDAH" "${global[@]}" manifest inspect "$IMAGE" >/dev/null 2>&1; then
	"$BUILDAH" "${global[@]}" manifest rm "$IMAGE" >/dev/null
fi
"$BUILDAH" "${global[@]}" manifest create "$IMAGE" >/dev/null
for p in "${platforms[@]}"; do
	echo "image: $IMAGE for $p"
	"$BUILDAH" "${global[@]}" bud "${bud[@]}" --platform "$p" --manifest "$IMAGE" "${args[@]}" \
		-f "$context/Dockerfile" "$context"
done
"$BUILDAH" "${global[@]}" manifest inspect "$IMAGE"
