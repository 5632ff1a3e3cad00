# syntax=docker/dockerfile:1
# The indexima_exporter image, from the binaries `make crossbuild` (or `make
# release`) cross-built into .build/<os>-<arch>/: no compiler runs here, and
# the image holds the very binary of the release archive of its platform.
#
#   make image                                  # linux/amd64 and linux/arm64, one manifest list (buildah)
#   make crossbuild PLATFORMS=linux/amd64,linux/arm64 && \
#     docker buildx build --platform linux/amd64,linux/arm64 -t indexima_exporter .
#
# The base is a build argument, so that a machine without registry access can
# use a local image (the image test uses scratch). It must hold CA
# certificates for https:// consoles; distroless static has them.
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot
FROM ${BASE_IMAGE}
# Set by buildah and BuildKit from --platform.
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# What the binary was stamped with (make image passes them).
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
COPY .build/${TARGETOS}-${TARGETARCH}/indexima_exporter /bin/indexima_exporter
# Numeric, so that Kubernetes' runAsNonRoot can verify it without /etc/passwd.
# 65534 is "nobody"; the exporter writes nothing but an optional
# --events.state-file, which belongs on a volume.
USER 65534:65534
# Must match the exporter's default --web.listen-address (:9897); the image test checks it.
EXPOSE 9897
ENTRYPOINT ["/bin/indexima_exporter"]
CMD ["--config.file=/etc/indexima_exporter/indexima.yml"]
