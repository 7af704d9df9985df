# syntax=docker/dockerfile:1
# ModelService operator image: modelservice-webhook and modelservice-controller
# in one image (the Deployment picks the program with `command:`).
#
#   docker build -t modelservice:latest .
#
# Stage 1 builds both programs from the repository's sources (no tests, no
# benchmarks) against Debian bookworm's -dev packages, with the flags of
# scripts/configure-build.sh (RelWithDebInfo -O2, line tables, warnings as
# errors; stripped afterwards) through ccache, whose cache is /ccache: empty
# here unless the builder mounts one (scripts/build-image.sh mounts the
# host's, so the objects the host built for the same sources are reused);
# stage 2 carries only the binaries and the matching runtime libraries.

FROM debian:bookworm AS builder
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libcpp-httplib-dev libssl-dev libvalijson-dev nlohmann-json3-dev \
      rapidjson-dev libspdlog-dev libcurl4-openssl-dev libyaml-cpp-dev \
      libjemalloc-dev prometheus-cpp-dev ccache \
 && rm -rf /var/lib/apt/lists/*

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
RUN export CCACHE_DIR=/ccache \
 && cmake -S . -B build -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMS_WERROR=ON -DMS_DEBUG_INFO=lines \
      -DCMAKE_CXX_COMPILER_LAUNCHER=/src/scripts/ccache-env \
      -DMS_BUILD_TESTS=OFF -DMS_BUILD_BENCH=OFF \
      -DMS_GIT_REVISION="${MS_GIT_REVISION}" -DMS_BUILD_DATE="${MS_BUILD_DATE}" \
      -DCMAKE_RUNTIME_OUTPUT_DIRECTORY=/src/build/bin \
 && cmake --build build --target modelservice-webhook modelservice-controller \
 && strip --strip-unneeded build/bin/modelservice-webhook build/bin/modelservice-controller

FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
# Runtime libraries of the -dev packages above (header-only: valijson,
# nlohmann-json, rapidjson). libcpp-httplib0.11 pulls in zlib1g and libbrotli1.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libcpp-httplib0.11 libssl3 libspdlog1.10 libfmt9 libcurl4 \
      libyaml-cpp0.7 libjemalloc2 libprometheus-cpp-core1.0 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin nonroot

COPY --from=builder /src/build/bin/modelservice-webhook /src/build/bin/modelservice-controller /usr/local/bin/

# webhook: 9443 HTTPS admission, 8080 metrics, 8081 probes;
# controller: 8082 metrics, 8083 probes (as passed in manifests/deployment.yaml).
EXPOSE 9443 8080 8081 8082 8083
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/modelservice-webhook"]
