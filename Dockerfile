# imago serve as a container image: built with Swift 6.3 on Debian 12, run
# on debian:bookworm-slim with the codecs' runtime libraries only.
#
#   docker build -t imago .
#   docker run --rm -p 8080:8080 --read-only --tmpfs /tmp --cap-drop ALL \
#     -e IMAGO_KEY=… -e IMAGO_SALT=… imago
#
# Settings are IMAGO_* variables (docs/DEPLOYMENT.md, `imago serve --help`).
# scripts/container-test.sh builds this file with buildah and checks the
# running image from outside.

FROM swift:6.3-bookworm AS build
# The codecs' headers (Package.swift's system libraries), found by pkg-config.
# Versions are Debian 12's: the release's security updates are wanted.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        pkg-config libturbojpeg0-dev libspng-dev libwebp-dev libgif-dev libavif-dev libheif-dev \
        libjxl-dev libtiff-dev librsvg2-dev liblcms2-dev libimagequant-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY . .
# The Swift runtime is linked in: the runtime stage has no toolchain. The
# debug information goes, most of the binary's size; the symbols stay, so
# that a crash's backtrace still names its functions.
RUN swift build -c release --static-swift-stdlib --product imago \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/imago" /staging/imago \
    && strip --strip-debug /staging/imago

FROM debian:bookworm-slim
# The shared libraries the binary links (`ldd imago`), and CA certificates
# for https sources; no -dev package, no compiler. No file keeps a
# set-user-ID or set-group-ID bit (su, mount, passwd): nothing can regain
# a privilege the container was started without.
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates libturbojpeg0 libspng0 libwebp7 libwebpdemux2 libwebpmux3 libgif7 libavif15 \
        libheif1 libjxl0.7 libtiff6 librsvg2-2 liblcms2-2 libimagequant0 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin imago \
    && install -d -o imago -g imago -m 0750 /var/cache/imago \
    && find / -xdev -type f -perm /6000 -exec chmod a-s {} +
COPY --from=build /staging/imago /usr/local/bin/imago

# The cache (sources/ and results/) is the one place written, besides
# temporary bodies in TMPDIR: mount a volume here and a tmpfs on /tmp, and
# the root file system can be read-only.
VOLUME ["/var/cache/imago"]
ENV IMAGO_BIND=0.0.0.0:8080 \
    IMAGO_CACHE=/var/cache/imago \
    TMPDIR=/tmp
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/imago", "health"]
# SIGTERM: stop accepting, answer the requests in flight within
# IMAGO_DRAIN_TIMEOUT (30 s by default), save the caches' index, exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/imago", "serve"]
