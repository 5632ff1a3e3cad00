# syntax=docker/dockerfile:1
# The indexima_exporter image, built from source: a first stage compiles the
# exporter with the release script (scripts/release: the flags, version
# stamps and pinned instruction-set levels of the release archives), the
# second holds that binary and the licence on a distroless base. Nothing
# needs building beforehand:
#
#   docker build -t indexima_exporter .          # or: docker compose -f deploy/docker-compose/docker-compose.yml up --build
#   make image                                   # linux/amd64 and linux/arm64, one manifest list (buildah)
#
# The compiler stage runs on the build machine's platform and cross-compiles
# for the target's, so a multi-platform build needs no emulator. With the
# Go release the archives were built with (GO_IMAGE=golang:1.26.8, say),
# and the same VERSION, REVISION and SOURCE_DATE_EPOCH, the binary is the
# release archive's byte for byte; the image test checks it.
#
# Both bases are build arguments, so that a machine without registry access
# can use local images (the image test uses a base holding the local Go
# toolchain, and scratch). The final base must hold CA certificates for
# https:// consoles; distroless static has them.
ARG GO_IMAGE=golang:1.26
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot
# The compiler stage's platform: BuildKit sets it (this default is only its
# fallback); buildah 1.28 does not (scripts/image.sh passes it), nor does
# Docker's classic builder (DOCKER_BUILDKIT=0), for which this default holds
# on an amd64 machine: elsewhere pass --build-arg BUILDPLATFORM=linux/arm64.
ARG BUILDPLATFORM=linux/amd64

FROM --platform=${BUILDPLATFORM} ${GO_IMAGE} AS build
# Set by buildah and BuildKit from --platform; without them (Docker's
# classic builder), the build machine's own.
ARG TARGETOS
ARG TARGETARCH
# What the binary is stamped with. Left empty, the version is the VERSION
# file's, the revision and build date "unknown" (the context holds no .git;
# make image passes all three).
ARG VERSION
ARG REVISION
ARG SOURCE_DATE_EPOCH
# Where modules come from (the Go default when empty).
ARG GOPROXY
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN os=${TARGETOS:-$(go env GOOS)} arch=${TARGETARCH:-$(go env GOARCH)} version=${VERSION} && \
    if [ -z "$version" ]; then read -r version < VERSION || true; fi && \
    go run ./scripts/release -binaries-only -build-dir /out -platforms "$os/$arch" \
      -version "$version" -revision "${REVISION:-unknown}"

FROM ${BASE_IMAGE}
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="indexima_exporter" \
      org.opencontainers.image.description="Prometheus exporter for the events of Indexima clusters" \
      org.opencontainers.image.source="https://github.com/indexima-exporter/indexima_exporter" \
      org.opencontainers.image.url="https://github.com/indexima-exporter/indexima_exporter" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY LICENSE /LICENSE
# The one binary built, whatever the platform's directory is named.
COPY --from=build /out/*/indexima_exporter /bin/indexima_exporter
# Numeric, so that Kubernetes' runAsNonRoot can verify it without /etc/passwd.
# 65534 is "nobody"; the exporter writes nothing but an optional
# --events.state-file, which belongs on a volume.
USER 65534:65534
# Must match the exporter's default --web.listen-address (:9897); the image test checks it.
EXPOSE 9897
ENTRYPOINT ["/bin/indexima_exporter"]
CMD ["--config.file=/etc/indexima_exporter/indexima.yml"]
