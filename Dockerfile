# syntax=docker/dockerfile:1
# ModelService operator image: modelservice-webhook and modelservice-controller
# in one image (the Deployment picks the program with `command:`).
#
#   docker build --build-arg BUILD_BASE=debian:bookworm@sha256:... -t modelservice:latest .
#   docker buildx build --platform linux/amd64,linux/arm64 ...   (arm64 cross-compiled)
#
# Stage 1 (builder, always on the build machine's platform) builds both
# programs from the repository's sources (no tests, no benchmarks) against
# Debian bookworm's -dev packages, with the flags of
# scripts/configure-build.sh (RelWithDebInfo -O2, line tables, warnings as
# errors; stripped afterwards) through ccache, whose cache is /ccache: empty
# here unless the builder mounts one (scripts/build-image.sh mounts the
# host's, so the objects the host built for the same sources are reused).
# For another TARGETARCH (arm64) it cross-compiles with Debian's cross
# toolchain (g++-aarch64-linux-gnu) against the :arm64 -dev packages (dpkg
# multiarch), with cmake/aarch64-linux-gnu.cmake. Then
# scripts/image-rootfs.sh lays out the runtime tree in /rootfs: the two
# programs, their ELF interpreter and library closure (readelf), CA
# certificates, passwd/group with the non-root user 65532, and the dpkg
# records of the packages those files come from (for scanners and the SBOM).
# Stage 2 is `scratch` plus that tree: no shell, no package manager.
#
# BUILD_BASE: the build stage's base, pinned by digest (scripts/build-image.sh
# passes the digest of the debian:bookworm it made with debootstrap; a Docker
# user passes the registry's digest of debian:bookworm). The runtime stage
# has no base.
ARG BUILD_BASE=docker.io/library/debian:bookworm

FROM --platform=$BUILDPLATFORM ${BUILD_BASE} AS builder
ARG DEBIAN_FRONTEND=noninteractive
ARG TARGETARCH
ARG BUILDARCH
# Native: the -dev packages; cross: the cross compiler and the same -dev
# packages for TARGETARCH (the header-only ones are Architecture: all).
# valijson is headers and a CMake config, but its package depends on
# libyaml-cpp-dev, libpoco-dev, qtbase5-dev and libjsoncpp-dev (for adapters
# the programs do not use: about 300 MB, and for a cross build the build
# machine's, which conflict with the :arm64 ones): it is unpacked alone.
RUN set -eu; \
    dev="libcpp-httplib-dev libssl-dev libspdlog-dev libcurl4-openssl-dev libyaml-cpp-dev libjemalloc-dev prometheus-cpp-dev"; \
    tools="build-essential cmake ninja-build pkg-config ccache ca-certificates binutils"; \
    if [ "${TARGETARCH:-$BUILDARCH}" = "${BUILDARCH:-$TARGETARCH}" ]; then \
      pkgs="$tools $dev"; \
    else \
      case "$TARGETARCH" in arm64) triplet=aarch64-linux-gnu ;; *) echo "no cross toolchain for $TARGETARCH" >&2; exit 1 ;; esac; \
      dpkg --add-architecture "$TARGETARCH"; \
      pkgs="$tools g++-$triplet $(for p in $dev; do printf '%s:%s ' "$p" "$TARGETARCH"; done)"; \
    fi; \
    apt-get update; \
    apt-get install -y --no-install-recommends $pkgs nlohmann-json3-dev rapidjson-dev; \
    cd /tmp; apt-get download libvalijson-dev; dpkg-deb -x libvalijson-dev_*.deb /; rm libvalijson-dev_*.deb; \
    rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Only what the two programs are built from (.dockerignore lets in nothing
# else; test/ and bench/ are not needed with MS_BUILD_TESTS=OFF and
# MS_BUILD_BENCH=OFF), in one step: one layer, not one per folder.
COPY . ./

# What --version and modelservice_build_info report: the context has no .git,
# so the revision and the build date come as build arguments
# (scripts/build-image.sh passes them; without them: "unknown" and now).
ARG MS_GIT_REVISION=""
ARG MS_BUILD_DATE=""
# The compile's parallelism (cmake --build -j; empty: ninja's default).
ARG MS_BUILD_JOBS=""
RUN set -eu; export CCACHE_DIR=/ccache; \
    triplet=x86_64-linux-gnu; cross=""; \
    case "${TARGETARCH:-$BUILDARCH}" in arm64) triplet=aarch64-linux-gnu ;; esac; \
    if [ "${TARGETARCH:-$BUILDARCH}" != "${BUILDARCH:-$TARGETARCH}" ]; then \
      cross="-DCMAKE_TOOLCHAIN_FILE=/src/cmake/$triplet.cmake"; fi; \
    cmake -S . -B build -G Ninja $cross \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMS_WERROR=ON -DMS_DEBUG_INFO=lines \
      -DCMAKE_CXX_COMPILER_LAUNCHER=/src/scripts/ccache-env \
      -DMS_BUILD_TESTS=OFF -DMS_BUILD_BENCH=OFF \
      -DMS_GIT_REVISION="${MS_GIT_REVISION}" -DMS_BUILD_DATE="${MS_BUILD_DATE}" \
      -DCMAKE_RUNTIME_OUTPUT_DIRECTORY=/src/build/bin; \
    cmake --build build ${MS_BUILD_JOBS:+-j "$MS_BUILD_JOBS"} --target modelservice-webhook modelservice-controller; \
    strip="strip"; [ -z "$cross" ] || strip="$triplet-strip"; \
    $strip --strip-unneeded build/bin/modelservice-webhook build/bin/modelservice-controller; \
    scripts/image-rootfs.sh /rootfs "$triplet" build/bin/modelservice-webhook build/bin/modelservice-controller

FROM scratch
COPY --from=builder /rootfs/ /
# The OCI annotations of the image (scripts/release.sh passes the version,
# the source and the build date; MS_GIT_REVISION as above).
ARG MS_VERSION="dev"
ARG MS_GIT_REVISION=""
ARG MS_BUILD_DATE=""
ARG MS_SOURCE=""
LABEL org.opencontainers.image.title="modelservice-operator" \
      org.opencontainers.image.description="The ModelService operator: modelservice-webhook (admission) and modelservice-controller" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${MS_VERSION}" \
      org.opencontainers.image.revision="${MS_GIT_REVISION}" \
      org.opencontainers.image.created="${MS_BUILD_DATE}" \
      org.opencontainers.image.source="${MS_SOURCE}"
# webhook: 9443 HTTPS admission, 8080 metrics, 8081 probes;
# controller: 8082 metrics, 8083 probes (as passed in manifests/deployment.yaml).
EXPOSE 9443 8080 8081 8082 8083
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/modelservice-webhook"]
