# syntax=docker/dockerfile:1
# Multi-stage build of indexima_exporter: a static binary (CGO_ENABLED=0) on a
# distroless base running as a numeric non-root user.
#
# Base images are build arguments so that a machine without registry access can
# build from local images (see docs/deployment.md):
#   docker build -t indexima_exporter .
#   buildah bud --build-arg GO_IMAGE=localhost/go-builder --build-arg BASE_IMAGE=localhost/static -t indexima_exporter .
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
WORKDIR /src
# Modules first, in their own layer, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Version information shown by --version and indexima_exporter_build_info.
ARG VERSION=dev
ARG REVISION=unknown
ARG BRANCH=unknown
ARG BUILD_USER=docker
ARG BUILD_DATE=unknown
# The compile cache survives between builds (BuildKit and buildah cache mounts).
ENV GOCACHE=/root/.cache/go-build
RUN --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w \
        -X github.com/prometheus/common/version.Version=${VERSION} \
        -X github.com/prometheus/common/version.Revision=${REVISION} \
        -X github.com/prometheus/common/version.Branch=${BRANCH} \
        -X github.com/prometheus/common/version.BuildUser=${BUILD_USER} \
        -X github.com/prometheus/common/version.BuildDate=${BUILD_DATE}" \
      -o /out/indexima_exporter .

FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="indexima_exporter" \
      org.opencontainers.image.description="Prometheus exporter for Indexima clusters"
COPY --from=build /out/indexima_exporter /bin/indexima_exporter
# Numeric, so that Kubernetes' runAsNonRoot can verify it without /etc/passwd.
# 65534 is "nobody"; the exporter writes nothing but an optional
# --events.state-file, which belongs on a volume.
USER 65534:65534
# Must match the exporter's default --web.listen-address (:9897); the image test checks it.
EXPOSE 9897
ENTRYPOINT ["/bin/indexima_exporter"]
CMD ["--config.file=/etc/indexima_exporter/indexima.yml"]
