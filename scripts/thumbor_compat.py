#!/usr/bin/env python3
"""Differential test of `imago serve`'s thumbor URLs against thumbor 7.8 itself.

Run it through scripts/thumbor-compat.sh, which installs thumbor 7.8.0 (with
Pillow and numpy) into a virtual environment and runs this script with it.
It generates the source images with Pillow, serves them with
`python3 -m http.server` on 127.0.0.2, starts thumbor (HTTP loader, no
storage) and `imago serve` (thumbor URLs at the root, unsafe and signed with
MY_SECURE_KEY) on loopback, asks both for the same thumbor paths, and
compares the answers:
  - the HTTP status;
  - for two 200s: width and height exactly, the format, and the pixels
    (both made RGB, alpha composited over black, PSNR >= 30 dB); `smart` and
    `noise` URLs are compared on size only, /meta answers as JSON, max_age()
    URLs on their Cache-Control max-age too.
Each URL prints one line, `ok`, `FAIL` or `accepted` (a deliberate
difference listed in ACCEPTED, with its reason), and the run ends with
`thumbor compat: N of M match (K accepted)`; it exits 1 if a URL that is not
accepted differs.

    thumbor_compat.py [SUBSTRING ...]   only the paths containing one of them

Environment: IMAGO (the imago binary, default .build/debug/imago), THUMBOR
(the thumbor command, default the one beside this Python), THUMBOR_COMPAT_OUT
(where the logs and both answers of every differing URL go; default
.build/thumbor-compat).
"""

import base64
import hashlib
import hmac
import http.client
import io
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

KEY = "MY_SECURE_KEY"
MIN_PSNR = 30.0
# Hang guards only: every wait returns as soon as its condition holds.
START_TIMEOUT = 60
REQUEST_TIMEOUT = 120

# The paths asked of both servers. {o} is the origin (127.0.0.2:PORT); a
# first segment {sig} is replaced by the path's HMAC-SHA1 signature (urlsafe
# base64 with padding, over the rest of the path without the query string),
# {sig_nopad} by the same without its '=', {sig_pct} with '=' sent as %3D,
# {sig_slash} by the signature of the rest with a leading slash (wrong).
W = "{o}/wm.png"  # the watermark, on the same origin
URLS = [
    # sizes: none, 0, missing, orig, flips, upscaling, rounding
    "/unsafe/{o}/land.jpg",
    "/unsafe/300x200/{o}/land.jpg",
    "/unsafe/300x200/{o}/port.jpg",
    "/unsafe/300x0/{o}/land.jpg",
    "/unsafe/0x300/{o}/port.jpg",
    "/unsafe/300x/{o}/land.jpg",
    "/unsafe/x300/{o}/port.jpg",
    "/unsafe/x/{o}/land.jpg",
    "/unsafe/0x0/{o}/port.jpg",
    "/unsafe/origx300/{o}/land.jpg",
    "/unsafe/300xorig/{o}/port.jpg",
    "/unsafe/origxorig/{o}/land.jpg",
    "/unsafe/origx0/{o}/land.jpg",
    "/unsafe/xorig/{o}/port.jpg",
    "/unsafe/-300x200/{o}/land.jpg",
    "/unsafe/300x-200/{o}/port.jpg",
    "/unsafe/-300x-200/{o}/land.jpg",
    "/unsafe/-0x0/{o}/land.jpg",
    "/unsafe/-x-/{o}/port.jpg",
    "/unsafe/2000x1500/{o}/land.jpg",
    "/unsafe/2000x0/{o}/port.jpg",
    "/unsafe/300x300/{o}/small.jpg",
    "/unsafe/400x301/{o}/land.jpg",
    "/unsafe/401x300/{o}/land.jpg",
    "/unsafe/1x0/{o}/land.jpg",
    "/unsafe/6x0/{o}/land.jpg",
    "/unsafe/10000x1/{o}/land.jpg",
    "/unsafe/300x200/{o}/alpha.png",
    "/unsafe/http://{o}/land.jpg",
    # alignment and smart
    "/unsafe/300x200/left/top/{o}/land.jpg",
    "/unsafe/300x200/right/bottom/{o}/land.jpg",
    "/unsafe/200x300/right/{o}/land.jpg",
    "/unsafe/300x200/bottom/{o}/port.jpg",
    "/unsafe/300x200/center/middle/{o}/port.jpg",
    "/unsafe/300x200/smart/{o}/land.jpg",
    "/unsafe/300x200/top/left/{o}/land.jpg",
    # the fit-in family
    "/unsafe/fit-in/300x300/{o}/land.jpg",
    "/unsafe/fit-in/300x300/{o}/port.jpg",
    "/unsafe/fit-in/300x0/{o}/land.jpg",
    "/unsafe/fit-in/0x300/{o}/port.jpg",
    "/unsafe/fit-in/2000x2000/{o}/land.jpg",
    "/unsafe/fit-in/2000x500/{o}/land.jpg",
    "/unsafe/fit-in/{o}/land.jpg",
    "/unsafe/fit-in/origx300/{o}/land.jpg",
    "/unsafe/fit-in/-300x-300/{o}/port.jpg",
    "/unsafe/fit-in/6x0/{o}/land.jpg",
    "/unsafe/fit-in/6x6/{o}/land.jpg",
    "/unsafe/fit-in/300x300/{o}/small.jpg",
    "/unsafe/fit-in/300x200/left/top/{o}/land.jpg",
    "/unsafe/adaptive-fit-in/300x400/{o}/land.jpg",
    "/unsafe/adaptive-fit-in/300x400/{o}/port.jpg",
    "/unsafe/full-fit-in/300x300/{o}/land.jpg",
    "/unsafe/full-fit-in/300x100/{o}/port.jpg",
    "/unsafe/full-fit-in/2000x2000/{o}/land.jpg",
    "/unsafe/adaptive-full-fit-in/300x100/{o}/land.jpg",
    "/unsafe/adaptive-full-fit-in/300x100/{o}/port.jpg",
    "/unsafe/full-adaptive-fit-in/300x100/{o}/land.jpg",
    # manual crop
    "/unsafe/100x100:500x400/{o}/land.jpg",
    "/unsafe/100x100:500x400/200x0/{o}/land.jpg",
    "/unsafe/100x100:500x400/200x200/{o}/port.jpg",
    "/unsafe/100x100:500x400/fit-in/200x200/{o}/land.jpg",
    "/unsafe/100x100:500x400/-200x-150/right/bottom/{o}/land.jpg",
    "/unsafe/500x400:100x100/{o}/land.jpg",
    "/unsafe/700x700:2000x2000/{o}/land.jpg",
    "/unsafe/0x0:0x0/{o}/land.jpg",
    # trim
    "/unsafe/trim/{o}/border.png",
    "/unsafe/trim:bottom-right:10/{o}/border.png",
    "/unsafe/trim/200x100:600x400/{o}/border.png",
    "/unsafe/trim/300x200/{o}/border.png",
    "/unsafe/trim:top-left/fit-in/200x200/{o}/border.png",
    "/unsafe/trim/{o}/alpha.png",
    # signatures
    "/{sig}/300x200/{o}/land.jpg",
    "/{sig}/fit-in/300x300/filters:quality(50)/{o}/port.jpg",
    "/{sig}/trim/100x100:500x400/-300x-200/right/bottom/smart/filters:grayscale()/{o}/border.png",
    "/{sig_pct}/300x200/{o}/land.jpg",
    "/{sig}/300x200/{o}/land.jpg?foo=bar",
    "/{sig_nopad}/300x200/{o}/land.jpg",
    "/{sig_slash}/300x200/{o}/land.jpg",
    "/AAAAAAAAAAAAAAAAAAAAAAAAAAA=/300x200/{o}/land.jpg",
    "/300x200/{o}/land.jpg",
    # filters: quality, format
    "/unsafe/300x200/filters:quality(50)/{o}/land.jpg",
    "/unsafe/300x200/filters:quality(10):quality(90)/{o}/land.jpg",
    "/unsafe/300x200/filters:format(webp)/{o}/land.jpg",
    "/unsafe/300x200/filters:format(png)/{o}/land.jpg",
    "/unsafe/300x200/filters:format(gif)/{o}/port.jpg",
    "/unsafe/300x200/filters:format(avif)/{o}/land.jpg",
    "/unsafe/300x200/filters:format(jpeg)/{o}/alpha.png",
    "/unsafe/300x200/filters:format(webp)/{o}/alpha.png",
    "/unsafe/300x200/filters:format(png):format(bmp)/{o}/land.jpg",
    "/unsafe/filters:()/{o}/land.jpg",
    # animated GIF: answered animated, every frame resized, durations kept
    "/unsafe/120x80/{o}/anim.gif",
    "/unsafe/fit-in/100x100/{o}/anim.gif",
    "/unsafe/120x80/filters:format(webp)/{o}/anim.gif",
    "/unsafe/120x80/filters:format(png)/{o}/anim.gif",
    # blur, sharpen, grayscale
    "/unsafe/300x200/filters:blur(5)/{o}/land.jpg",
    "/unsafe/300x200/filters:blur(8,2)/{o}/port.jpg",
    "/unsafe/300x200/filters:sharpen(2,1.0,true)/{o}/land.jpg",
    "/unsafe/300x200/filters:sharpen(1.5,0.5,false)/{o}/port.jpg",
    "/unsafe/300x200/filters:grayscale()/{o}/land.jpg",
    "/unsafe/300x200/filters:grayscale()/{o}/alpha.png",
    # round_corner
    "/unsafe/300x200/filters:round_corner(20,255,255,255)/{o}/land.jpg",
    "/unsafe/300x200/filters:round_corner(20|40,0,0,0,1)/{o}/land.jpg",
    "/unsafe/300x200/filters:round_corner(20|40,255,255,255)/{o}/port.jpg",
    "/unsafe/300x200/filters:round_corner(20,0,0,0,1)/{o}/land.jpg",
    "/unsafe/300x200/filters:round_corner(30,255,0,0,1):format(png)/{o}/port.jpg",
    # fill and background_color
    "/unsafe/fit-in/300x300/filters:fill(red)/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:fill(00ff00)/{o}/port.jpg",
    "/unsafe/fit-in/300x300/filters:fill(blur)/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:fill(auto)/{o}/port.jpg",
    "/unsafe/fit-in/300x300/filters:fill(transparent)/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:fill(transparent):format(png)/{o}/port.jpg",
    "/unsafe/fit-in/2000x2000/filters:fill(red)/{o}/land.jpg",
    "/unsafe/fit-in/300x0/filters:fill(red)/{o}/land.jpg",
    "/unsafe/full-fit-in/300x300/filters:fill(red)/{o}/land.jpg",
    "/unsafe/300x200/filters:fill(red)/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:fill(red)/{o}/alpha.png",
    "/unsafe/fit-in/300x300/filters:fill(red,true)/{o}/alpha.png",
    "/unsafe/fit-in/300x300/filters:fill(zzzz)/{o}/land.jpg",
    "/unsafe/300x200/filters:fill(red):format(png)/{o}/land.jpg",
    "/unsafe/300x200/filters:background_color(blue)/{o}/land.jpg",
    "/unsafe/300x200/filters:background_color(red)/{o}/alpha.png",
    "/unsafe/300x200/filters:background_color(auto)/{o}/alpha.png",
    # rotate
    "/unsafe/300x200/filters:rotate(90)/{o}/land.jpg",
    "/unsafe/300x200/filters:rotate(-90)/{o}/port.jpg",
    "/unsafe/300x200/filters:rotate(180)/{o}/land.jpg",
    "/unsafe/300x200/filters:rotate(45)/{o}/land.jpg",
    # upscale, no_upscale, proportion
    "/unsafe/fit-in/300x300/filters:upscale()/{o}/small.jpg",
    "/unsafe/fit-in/300x0/filters:upscale()/{o}/small.jpg",
    "/unsafe/adaptive-fit-in/300x400/filters:upscale()/{o}/small.jpg",
    "/unsafe/300x300/filters:no_upscale()/{o}/small.jpg",
    "/unsafe/300x100/filters:no_upscale()/{o}/small.jpg",
    "/unsafe/2000x1500/filters:no_upscale()/{o}/land.jpg",
    "/unsafe/full-fit-in/2000x2000/filters:no_upscale()/{o}/land.jpg",
    "/unsafe/origx300/filters:no_upscale()/{o}/land.jpg",
    "/unsafe/300x200/filters:proportion(0.5)/{o}/land.jpg",
    "/unsafe/filters:proportion(0.5)/{o}/port.jpg",
    "/unsafe/300x200/filters:proportion(2)/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:upscale():proportion(0.5)/{o}/small.jpg",
    # strip_icc, strip_exif, max_bytes
    "/unsafe/300x200/filters:strip_icc()/{o}/land.jpg",
    "/unsafe/300x200/filters:strip_exif()/{o}/land.jpg",
    "/unsafe/300x200/filters:max_bytes(6000)/{o}/land.jpg",
    "/unsafe/300x200/filters:max_bytes(10)/{o}/land.jpg",
    # focal
    "/unsafe/300x100/filters:focal(0x600:100x700)/{o}/land.jpg",
    "/unsafe/100x300/right/filters:focal(0x600:100x700)/{o}/land.jpg",
    "/unsafe/200x300:800x700/100x100/filters:focal(300x400:400x500)/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:focal(0x600:100x700)/{o}/port.jpg",
    # brightness, contrast, rgb, noise
    "/unsafe/300x200/filters:brightness(40)/{o}/land.jpg",
    "/unsafe/300x200/filters:brightness(-40)/{o}/port.jpg",
    "/unsafe/300x200/filters:contrast(40)/{o}/land.jpg",
    "/unsafe/300x200/filters:contrast(-100)/{o}/land.jpg",
    "/unsafe/300x200/filters:rgb(20,-20,0)/{o}/land.jpg",
    "/unsafe/300x200/filters:noise(40)/{o}/land.jpg",
    "/unsafe/300x200/filters:noise(20,7)/{o}/port.jpg",
    # saturation, equalize, convolution, curve, colorize, stretch, extract_focal
    "/unsafe/300x200/filters:saturation(1.8)/{o}/land.jpg",
    "/unsafe/300x200/filters:saturation(0.3)/{o}/port.jpg",
    "/unsafe/300x200/filters:saturation(1.5):format(png)/{o}/alpha.png",
    "/unsafe/300x200/filters:equalize()/{o}/land.jpg",
    "/unsafe/300x200/filters:equalize():format(png)/{o}/alpha.png",
    "/unsafe/300x200/filters:convolution(1;2;1;2;4;2;1;2;1,3,true)/{o}/land.jpg",
    "/unsafe/300x200/filters:convolution(-1;-1;-1;-1;8;-1;-1;-1;-1,3,false)/{o}/port.jpg",
    "/unsafe/300x200/filters:convolution(1;1;1;1;1,5,true):format(png)/{o}/alpha.png",
    "/unsafe/300x200/filters:convolution(1;2;1;2,2,true)/{o}/land.jpg",
    "/unsafe/300x200/filters:curve([(0,0),(40,59),(255,255)],[(0,0),(128,160),(255,255)],[(0,0),(255,255)],[(0,20),(200,180),(255,255)])/{o}/land.jpg",
    "/unsafe/300x200/filters:curve([(0,0),(255,255)],[(0,50),(92,120),(192,245),(255,254)],[(0,0),(64,59),(255,252)],[(0,48),(128,144),(255,225)])/{o}/port.jpg",
    "/unsafe/300x200/filters:colorize(40,80,20,ffd700)/{o}/land.jpg",
    "/unsafe/300x200/filters:colorize(100,0,50,0000ff):format(png)/{o}/alpha.png",
    "/unsafe/300x200/filters:stretch()/{o}/land.jpg",
    "/unsafe/200x300/filters:stretch()/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:stretch()/{o}/port.jpg",
    "/unsafe/300x100/filters:extract_focal()/{o}/unsafe/0x600:100x700/{o}/land.jpg",
    "/unsafe/100x300/filters:extract_focal()/http://{o}/unsafe/500x100:800x400/{o}/land.jpg",
    "/unsafe/300x100/filters:extract_focal()/{o}/land.jpg",
    # frame
    "/unsafe/300x200/filters:frame({o}/frame.png)/{o}/land.jpg",
    "/unsafe/fit-in/200x200/filters:frame({o}/frame.png):format(png)/{o}/alpha.png",
    "/unsafe/300x200/filters:frame({o}/nosuch.png)/{o}/land.jpg",
    # watermark
    f"/unsafe/300x200/filters:watermark({W},10,10,50)/{{o}}/land.jpg",
    f"/unsafe/300x200/filters:watermark({W},-10,-10,0)/{{o}}/land.jpg",
    f"/unsafe/300x200/filters:watermark({W},center,center,0)/{{o}}/port.jpg",
    f"/unsafe/300x200/filters:watermark({W},repeat,repeat,0,20,20)/{{o}}/land.jpg",
    f"/unsafe/300x200/filters:watermark({W},50p,-10p,0)/{{o}}/land.jpg",
    f"/unsafe/300x200/filters:watermark({W},0,0,0,50)/{{o}}/land.jpg",
    f"/unsafe/300x200/filters:watermark({W},10,10,0,none,20)/{{o}}/port.jpg",
    "/unsafe/300x200/filters:watermark({o}/nosuch.png,10,10,0)/{o}/land.jpg",
    # max_age, autojpg, several filters
    "/unsafe/300x200/filters:max_age(60)/{o}/land.jpg",
    "/unsafe/300x200/filters:max_age(0)/{o}/land.jpg",
    "/unsafe/300x200/filters:autojpg()/{o}/land.png",
    "/unsafe/300x200/filters:autojpg()/{o}/land.jpg",
    "/unsafe/fit-in/300x300/filters:brightness(10):contrast(10):fill(white):format(png):quality(90)/{o}/port.jpg",
    # what thumbor ignores, malformed options, errors
    "/unsafe/300x200/filters:nosuchfilter(1)/{o}/land.jpg",
    "/unsafe/300x200/filters:quality(abc)/{o}/land.jpg",
    "/unsafe/300x200/filters:blur(0)/{o}/land.jpg",
    f"/unsafe/300x200/filters:watermark({W},10,10)/{{o}}/land.jpg",
    "/unsafe/300x200/filters:quality(50)grayscale()/{o}/land.jpg",
    "/unsafe/300x200/filters:grayscale/{o}/land.jpg",
    "/unsafe/filters:quality(50)/300x200/{o}/land.jpg",
    "/unsafe/300x200/{o}/land.jpg/extra",
    "/unsafe/300x200/{o}/missing.jpg",
    "/unsafe/300x200/{o}/notimage.jpg",
    # meta and debug
    "/unsafe/meta/300x200/{o}/land.jpg",
    "/unsafe/meta/fit-in/300x300/{o}/land.jpg",
    "/unsafe/meta/-100x-300/{o}/land.jpg",
    "/unsafe/debug/300x200/{o}/land.jpg",
]

# Deliberate differences, each one docs/THUMBOR.md lists under "Where Imago
# differs from thumbor": path -> (the status Imago answers, why it differs).
# Such a URL prints "accepted" and does not fail the run, as long as Imago
# still answers that status.
BAD_ARGUMENT = "Imago answers 400 for an unknown filter or bad arguments, which thumbor ignores"
BAD_SIGNATURE = "Imago answers 403 for a bad signature, thumbor 400"
FRAME = ("frame() as a nine-patch is drawn: the image padded as the patch's bottom and right markers say, the cells "
         "stretched over it; thumbor 7.8's _nine_patch.c takes the image mode from a Python object's address "
         "(PyUnicode_AsUTF8String cast to char *), so it misreads the markers (a padding of 0, 0, 0, 1 here) and draws no frame")
EXTRACT_FOCAL = ("extract_focal() as thumbor documents it: the nested URL's image, its crop as the focal region; thumbor 7.8 "
                 "reads the image part percent-encoded, where the crop's ':' never matches, and fetches the whole URL")
ORIG = "orig beside 0 or nothing, or with no_upscale(), is the source's side in Imago; thumbor fails with a 500"
UNRESOLVED = "both read the misplaced option as the source's host name, which does not resolve; thumbor calls that 504"
WHITE = "a JPEG made from transparency is white in Imago where thumbor drops the alpha (black)"
ACCEPTED = {
    "/unsafe/origx0/{o}/land.jpg": (200, ORIG),
    "/unsafe/xorig/{o}/port.jpg": (200, ORIG),
    "/unsafe/origx300/filters:no_upscale()/{o}/land.jpg": (200, ORIG),
    "/{sig_nopad}/300x200/{o}/land.jpg": (403, BAD_SIGNATURE),
    "/{sig_slash}/300x200/{o}/land.jpg": (403, BAD_SIGNATURE),
    "/AAAAAAAAAAAAAAAAAAAAAAAAAAA=/300x200/{o}/land.jpg": (403, BAD_SIGNATURE),
    "/300x200/{o}/land.jpg": (403, BAD_SIGNATURE + " (300x200 is read as the signature)"),
    "/unsafe/300x200/filters:nosuchfilter(1)/{o}/land.jpg": (400, BAD_ARGUMENT),
    "/unsafe/300x200/filters:quality(abc)/{o}/land.jpg": (400, BAD_ARGUMENT),
    "/unsafe/300x200/filters:blur(0)/{o}/land.jpg": (400, BAD_ARGUMENT),
    f"/unsafe/300x200/filters:watermark({W},10,10)/{{o}}/land.jpg": (400, BAD_ARGUMENT + " (no alpha)"),
    "/unsafe/300x200/filters:quality(50)grayscale()/{o}/land.jpg": (400, BAD_ARGUMENT + " (no ':' between filters)"),
    "/unsafe/300x200/filters:format(jpeg)/{o}/alpha.png": (200, WHITE),
    "/unsafe/120x80/filters:format(webp)/{o}/anim.gif": (200, "thumbor answers an animated GIF as GIF whatever format() asks; Imago "
                                                              "answers the animated WebP asked for, durations kept"),
    "/unsafe/120x80/filters:format(png)/{o}/anim.gif": (200, "thumbor answers an animated GIF as GIF whatever format() asks; Imago "
                                                             "answers the PNG asked for, the first frame"),
    "/unsafe/fit-in/300x300/filters:fill(transparent)/{o}/land.jpg": (200, WHITE),
    "/unsafe/300x200/filters:round_corner(20,0,0,0,1)/{o}/land.jpg": (200, WHITE + " (the transparent corners)"),
    "/unsafe/300x200/filters:round_corner(20|40,0,0,0,1)/{o}/land.jpg": (200, WHITE + ", and round_corner takes one radius, the smaller"),
    "/unsafe/300x200/filters:round_corner(20|40,255,255,255)/{o}/port.jpg": (200, "round_corner takes one radius, the smaller of a|b"),
    "/unsafe/10000x1/{o}/land.jpg": (200, "the crop to 10000:1 is no pixel high in thumbor, which resizes it to black; Imago keeps one row"),
    "/unsafe/300x200/filters:max_bytes(10)/{o}/land.jpg": (200, "no quality fits: Imago answers its smallest try, thumbor its first (q80)"),
    "/unsafe/fit-in/300x300/filters:fill(zzzz)/{o}/land.jpg": (400, BAD_ARGUMENT + " (an unknown colour; thumbor fails with a 500)"),
    "/unsafe/300x200/filters:convolution(1;2;1;2,2,true)/{o}/land.jpg": (400, BAD_ARGUMENT + " (a kernel of even size; thumbor fails "
                                                                                      "with a 500)"),
    "/unsafe/300x100/filters:extract_focal()/{o}/unsafe/0x600:100x700/{o}/land.jpg": (200, EXTRACT_FOCAL),
    "/unsafe/100x300/filters:extract_focal()/http://{o}/unsafe/500x100:800x400/{o}/land.jpg": (200, EXTRACT_FOCAL),
    "/unsafe/300x200/{o}/notimage.jpg": (415, "a source that is not an image is a 415 naming what it is; thumbor answers 400"),
    "/unsafe/300x200/top/left/{o}/land.jpg": (502, UNRESOLVED),
    "/unsafe/full-adaptive-fit-in/300x100/{o}/land.jpg": (502, UNRESOLVED),
    "/unsafe/filters:quality(50)/300x200/{o}/land.jpg": (502, UNRESOLVED),
    "/unsafe/300x200/filters:grayscale/{o}/land.jpg": (400, UNRESOLVED + " (Imago finds no host in it at all)"),
    "/unsafe/300x200/filters:max_age(0)/{o}/land.jpg": (200, "max_age(0) is Cache-Control max-age=0; thumbor sends none"),
    "/unsafe/300x200/filters:frame({o}/frame.png)/{o}/land.jpg": (200, FRAME),
    "/unsafe/fit-in/200x200/filters:frame({o}/frame.png):format(png)/{o}/alpha.png": (200, FRAME),
    "/unsafe/300x200/filters:frame({o}/nosuch.png)/{o}/land.jpg": (404, "a frame that cannot be fetched answers its source's status; thumbor 500"),
    "/unsafe/300x200/filters:watermark({o}/nosuch.png,10,10,0)/{o}/land.jpg": (404, "a watermark that cannot be fetched answers its source's status; thumbor 400"),
}


# Compared on status, size and format only: random or detector-driven pixels.
def pixels_compared(template):
    return "/smart/" not in template and "noise(" not in template


def signature(message):
    digest = hmac.new(KEY.encode(), message.encode(), hashlib.sha1).digest()
    return base64.urlsafe_b64encode(digest).decode()


def expand(template, origin):
    """The path to request for a template: origin filled in, signature made."""
    path = template.replace("{o}", origin)
    match = re.match(r"/\{(sig|sig_nopad|sig_pct|sig_slash)\}/(.*)", path)
    if not match:
        return path
    kind, rest = match.groups()
    message = rest.split("?", 1)[0]
    if kind == "sig_slash":
        message = "/" + message
    sig = signature(message)
    sig = {"sig_nopad": sig.rstrip("="), "sig_pct": sig.replace("=", "%3D")}.get(kind, sig)
    return f"/{sig}/{rest}"


# ---- source images ---------------------------------------------------------


def gradient(width, height, flip=False):
    """A smooth three-way colour gradient with distinct shapes on it, so that
    crops, flips and rotations show."""
    x = np.linspace(0.0, 1.0, width)[None, :]
    y = np.linspace(0.0, 1.0, height)[:, None]
    if flip:
        x, y = y.T, x.T
    red = 30 + 200 * x + 0 * y
    green = 40 + 180 * y + 0 * x
    blue = 220 - 150 * (x + y) / 2
    image = Image.fromarray(np.dstack([red, green, blue]).clip(0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    s = min(width, height) / 768
    draw.rectangle([20 * s, 20 * s, 70 * s, 70 * s], fill=(230, 20, 20))  # red, top left
    draw.rectangle([width - 70 * s, height - 70 * s, width - 20 * s, height - 20 * s], fill=(20, 20, 230))
    draw.ellipse([width * 0.55, height * 0.15, width * 0.55 + 160 * s, height * 0.15 + 120 * s], fill=(40, 200, 60))
    draw.polygon([(width * 0.1, height * 0.9), (width * 0.3, height * 0.9), (width * 0.2, height * 0.65)], fill=(250, 220, 30))
    draw.rectangle([width * 0.4, height * 0.45, width * 0.6, height * 0.5], fill=(200, 40, 200))
    draw.line([(0, height * 0.75), (width, height * 0.7)], fill=(255, 255, 255), width=max(2, int(6 * s)))
    return image


def make_sources(folder):
    land = gradient(1024, 768)
    land.save(folder / "land.jpg", "JPEG", quality=95)
    land.save(folder / "land.png", "PNG")
    gradient(768, 1024, flip=True).save(folder / "port.jpg", "JPEG", quality=95)
    gradient(200, 150).save(folder / "small.jpg", "JPEG", quality=95)
    # RGBA: colours everywhere, alpha a ramp, an opaque ellipse, and a fully
    # transparent corner whose stored colour is not black.
    alpha = gradient(400, 300).convert("RGBA")
    ramp = np.tile(np.linspace(0, 200, 400, dtype=np.float64), (300, 1)).astype(np.uint8)
    mask = Image.fromarray(ramp, "L")
    ImageDraw.Draw(mask).ellipse([120, 60, 300, 240], fill=255)
    ImageDraw.Draw(mask).rectangle([0, 0, 79, 59], fill=0)
    alpha.putalpha(mask)
    alpha.save(folder / "alpha.png", "PNG")
    border = Image.new("RGB", (1024, 768), "white")
    ImageDraw.Draw(border).rectangle([100, 50, 899, 649], fill=(255, 0, 0))
    border.save(folder / "border.png", "PNG")
    wm = Image.new("RGBA", (200, 100), (0, 0, 0, 0))
    draw = ImageDraw.Draw(wm)
    draw.rounded_rectangle([2, 2, 197, 97], radius=12, outline=(255, 255, 255, 230), width=6, fill=(0, 0, 80, 110))
    draw.ellipse([20, 20, 80, 80], fill=(255, 140, 0, 255))
    draw.rectangle([100, 35, 180, 65], fill=(0, 255, 255, 200))
    wm.save(folder / "wm.png", "PNG")
    # A nine-patch frame: its outer pixels mark (opaque black) the stretching
    # middle (top row, left column) and a padding of 6 (bottom row, right column).
    patch = Image.new("RGBA", (34, 34), (0, 0, 0, 0))
    draw = ImageDraw.Draw(patch)
    draw.rectangle([1, 1, 32, 32], fill=(120, 40, 20, 255))
    draw.rectangle([5, 5, 28, 28], fill=(230, 200, 120, 160))
    draw.rectangle([9, 9, 24, 24], fill=(0, 0, 0, 0))
    draw.line([(12, 0), (21, 0)], fill=(0, 0, 0, 255))
    draw.line([(0, 12), (0, 21)], fill=(0, 0, 0, 255))
    draw.line([(7, 33), (26, 33)], fill=(0, 0, 0, 255))
    draw.line([(33, 7), (33, 26)], fill=(0, 0, 0, 255))
    patch.save(folder / "frame.png", "PNG")
    (folder / "notimage.jpg").write_text("this is not an image\n")
    # Six frames of a disc crossing the gradient, shown 80 to 180 ms, looping.
    frames = []
    for index in range(6):
        frame = gradient(240, 160)
        ImageDraw.Draw(frame).ellipse([20 + 30 * index, 50, 80 + 30 * index, 110], fill=(250, 250, 250))
        frames.append(frame.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE))
    frames[0].save(folder / "anim.gif", save_all=True, append_images=frames[1:], duration=[80 + 20 * i for i in range(6)], loop=0)


# ---- servers -----------------------------------------------------------------


def free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def get(host, port, path, timeout=REQUEST_TIMEOUT):
    """(status, headers, body) of a GET of `path`, sent exactly as written."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


class Process:
    """A server as a child process, its output in a log file."""

    def __init__(self, name, command, log_path, env=None):
        self.name, self.log_path = name, log_path
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def wait_ready(self, host, port, path):
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                self.fail(f"ended with status {self.process.returncode} before it answered {path}")
            try:
                if get(host, port, path, timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.fail(f"did not answer {path} within {START_TIMEOUT} s")
            time.sleep(0.1)

    def fail(self, what):
        self.log.flush()
        tail = Path(self.log_path).read_text(errors="replace").splitlines()[-20:]
        sys.exit(f"thumbor_compat: {self.name} {what}; its log:\n" + "\n".join(tail))

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# ---- comparison ----------------------------------------------------------------


def decode(body):
    image = Image.open(io.BytesIO(body))
    image.load()
    return image


def timeline(body):
    """The frame count and each frame's duration in ms (none for a still)."""
    image = Image.open(io.BytesIO(body))
    durations = []
    for index in range(getattr(image, "n_frames", 1)):
        image.seek(index)
        image.load()
        durations.append(image.info.get("duration"))
    return len(durations), durations if len(durations) > 1 else []


def rgb_over_black(image):
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, (0, 0, 0, 255)), rgba).convert("RGB")
    return image.convert("RGB")


def psnr(a, b):
    x = np.asarray(rgb_over_black(a), dtype=np.float64)
    y = np.asarray(rgb_over_black(b), dtype=np.float64)
    mse = np.mean((x - y) ** 2)
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


def max_age(headers):
    match = re.search(r"max-age=(\d+)", headers.get("cache-control", ""))
    return int(match.group(1)) if match else None


def json_differences(a, b, prefix=""):
    """The paths of the keys whose values differ, 300.0 equal to 300."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in list(a) + [k for k in b if k not in a]:
            out += json_differences(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else key)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in json_differences(x, y, f"{prefix}[{i}]")]
    return [] if a == b else [prefix or "."]


def compare(template, thumbor, imago):
    """(matches, detail): detail holds sizes, formats and PSNR, or why not."""
    (t_status, t_headers, t_body), (i_status, i_headers, i_body) = thumbor, imago
    statuses = f"{t_status}/{i_status}"
    if t_status != i_status:
        return False, statuses
    if t_status != 200:
        return True, statuses
    if "json" in t_headers.get("content-type", "") or "json" in i_headers.get("content-type", ""):
        try:
            differences = json_differences(json.loads(t_body), json.loads(i_body))
        except ValueError as error:
            return False, f"{statuses} json: {error}"
        if differences:
            return False, f"{statuses} json differs at " + ", ".join(differences[:4])
        return True, f"{statuses} json equal"
    try:
        t_image, i_image = decode(t_body), decode(i_body)
    except Exception as error:  # noqa: BLE001 - any undecodable answer is a difference
        return False, f"{statuses} undecodable: {error}"
    sizes = f"{t_image.width}x{t_image.height}/{i_image.width}x{i_image.height}"
    formats = f"{t_image.format.lower()}/{i_image.format.lower()}"
    detail = f"{statuses} {sizes} {formats}"
    problems = []
    if t_image.size != i_image.size:
        problems.append("size")
    if t_image.format != i_image.format:
        problems.append("format")
    (t_frames, t_durations), (i_frames, i_durations) = timeline(t_body), timeline(i_body)
    if t_frames > 1 or i_frames > 1:
        detail += f" frames {t_frames}/{i_frames}"
        if t_frames != i_frames:
            problems.append("frame count")
        # thumbor's Pillow engine writes frames without durations (browsers
        # show 100 ms); Imago keeps the source's: compared when thumbor has them.
        if any(t_durations) and t_durations != i_durations:
            problems.append(f"durations {t_durations}/{i_durations}")
        elif i_durations and t_durations != i_durations:
            detail += f" (durations {i_durations} ms; thumbor's none)"
    if "max_age(" in template and max_age(t_headers) != max_age(i_headers):
        problems.append(f"max-age {max_age(t_headers)}/{max_age(i_headers)}")
    if t_image.size == i_image.size:
        if pixels_compared(template):
            value = psnr(t_image, i_image)
            detail += f" {value:.1f} dB"
            if value < MIN_PSNR:
                problems.append(f"PSNR < {MIN_PSNR:.0f}")
        else:
            detail += " (pixels not compared)"
    if problems:
        detail += " [" + ", ".join(problems) + "]"
    return not problems, detail


def main():
    root = Path(__file__).resolve().parent.parent
    imago = os.environ.get("IMAGO", str(root / ".build/debug/imago"))
    thumbor = os.environ.get("THUMBOR", str(Path(sys.executable).parent / "thumbor"))
    out = Path(os.environ.get("THUMBOR_COMPAT_OUT", root / ".build/thumbor-compat"))
    for program in (imago, thumbor):
        if not os.access(program, os.X_OK):
            sys.exit(f"thumbor_compat: {program} is not an executable (IMAGO, THUMBOR)")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    selected = [u for u in URLS if not sys.argv[1:] or any(s in u for s in sys.argv[1:])]
    if not selected:
        sys.exit("thumbor_compat: no URL contains any of " + " ".join(sys.argv[1:]))

    work = Path(tempfile.mkdtemp(prefix="thumbor-compat-"))
    servers = []
    try:
        images = work / "images"
        images.mkdir()
        make_sources(images)

        origin_port = free_port("127.0.0.2")
        origin = Process("the origin", [sys.executable, "-m", "http.server", "--bind", "127.0.0.2", "--directory", str(images),
                                        str(origin_port)], out / "origin.log")
        servers.append(origin)

        conf = work / "thumbor.conf"
        conf.write_text(
            "ALLOW_UNSAFE_URL = True\n"
            f"SECURITY_KEY = '{KEY}'\n"
            "STORAGE = 'thumbor.storages.no_storage'\n"
            "RESULT_STORAGE = None\n"
            "QUALITY = 80\n")
        thumbor_port = free_port("127.0.0.1")
        thumbor_server = Process("thumbor", [thumbor, "--ip", "127.0.0.1", "--port", str(thumbor_port), "--conf", str(conf),
                                             "--log-level", "warning"], out / "thumbor.log")
        servers.append(thumbor_server)

        # No IMAGO_* settings from the caller: no imgproxy keys, so that the
        # thumbor URLs are at the root.
        env = {k: v for k, v in os.environ.items() if not k.startswith("IMAGO_")}
        imago_port = free_port("127.0.0.1")
        imago_server = Process("imago serve", [imago, "serve", "--bind", f"127.0.0.1:{imago_port}", "--cache", str(work / "cache"),
                                               "--allow-source-network", "127.0.0.2/32", "--thumbor-unsafe", "--thumbor-key", KEY,
                                               "--quality", "80", "--log-level", "warning"], out / "imago.log", env)
        servers.append(imago_server)

        origin.wait_ready("127.0.0.2", origin_port, "/land.jpg")
        thumbor_server.wait_ready("127.0.0.1", thumbor_port, "/healthcheck")
        imago_server.wait_ready("127.0.0.1", imago_port, "/health")

        origin_name = f"127.0.0.2:{origin_port}"
        print(f"thumbor compat: thumbor {metadata.version('thumbor')} (Pillow {metadata.version('pillow')}) against {imago}, "
              f"{len(selected)} paths, {{o}} = {origin_name}", flush=True)

        def ask(template):
            path = expand(template, origin_name)
            return get("127.0.0.1", thumbor_port, path), get("127.0.0.1", imago_port, path)

        matched = accepted = failed = 0
        with ThreadPoolExecutor(4) as pool:
            for number, (template, answers) in enumerate(zip(selected, pool.map(ask, selected)), 1):
                ok, detail = compare(template, *answers)
                if ok:
                    matched += 1
                    note = " (listed in ACCEPTED, but matches)" if template in ACCEPTED else ""
                    print(f"ok       {template}  {detail}{note}", flush=True)
                    continue
                for name, (status, headers, body) in zip(("thumbor", "imago"), answers):
                    (out / f"{number:03d}-{name}-{status}.bin").write_bytes(body)
                (out / f"{number:03d}-path.txt").write_text(expand(template, origin_name) + "\n")
                expected, reason = ACCEPTED.get(template, (None, None))
                if expected == answers[1][0]:
                    accepted += 1
                    print(f"accepted {template}  {detail}: {reason}", flush=True)
                else:
                    failed += 1
                    note = f" (ACCEPTED expects Imago's {expected}: {reason})" if expected else ""
                    print(f"FAIL     {template}  {detail}{note}", flush=True)
        print(f"thumbor compat: {matched} of {len(selected)} match ({accepted} accepted, {failed} failed); "
              f"the answers that differ are in {out}")
        return 1 if failed else 0
    finally:
        for server in reversed(servers):
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
