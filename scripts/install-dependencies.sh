#!/usr/bin/env bash
# Installs what building and testing Imago needs on a fresh Debian machine
# that already has the Swift toolchain (the packages' -dev headers come from
# Debian; Swift packages resolve through SwiftPM).
set -euo pipefail

# System packages: the codecs (libjpeg-turbo's TurboJPEG API, libspng,
# libwebp with demux and mux, giflib, libavif, libheif, libjxl, libtiff; libavif and libheif bring
# their AV1 and HEVC codecs, whose encoders make the tests' images), librsvg
# (with cairo, for SVG sources; its text needs a font, which it depends on), Little
# CMS 2 for colour profiles, libimagequant (the GIF encoder's palette
# quantiser), mount (util-linux) for the tmpfs-based disk-full tests, chattr
# (e2fsprogs) for the permission-error test, pkg-config for SwiftPM to find
# the codecs; for the colour tests, Little CMS's own tools (liblcms2-utils:
# jpgicc makes their photos) and Ghostscript's ICC profiles (libgs-common:
# Adobe RGB, ProPhoto, CMYK); webp (webpmux) and gifsicle: the tests check
# the encoders' animations with them.
packages=(
  libturbojpeg0-dev libspng-dev libwebp-dev libgif-dev libavif-dev libheif-dev libjxl-dev libtiff-dev librsvg2-dev liblcms2-dev libimagequant-dev
  pkg-config util-linux e2fsprogs liblcms2-utils libgs-common webp gifsicle
)

missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
fi

command -v swift >/dev/null 2>&1 || { echo "swift is not on PATH (expected the toolchain at /opt/swift)" >&2; exit 1; }
