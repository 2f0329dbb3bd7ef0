#!/usr/bin/env python3
"""A stand-in for `imago serve --demo`, only to prove scripts/browser_test.py
before the real demo mode exists. Delete it once the real one passes.

It follows the demo's contract and nothing more:
  browser-test-standin.py serve --demo --bind 127.0.0.1:0 --cache DIR
prints `demo: http://127.0.0.1:PORT/` when listening, serves `/`, `/demo/N`,
the images (f:auto -> AVIF or WebP from the Accept header, Cache-Control,
strong ETag, 304 on If-None-Match) and a Prometheus-style `/metrics`, and
exits 0 on SIGTERM.

The HTTP side is the standard library; the pixels and their AVIF/WebP bytes
come from Pillow, so it runs under the browser test's virtual environment
(it re-executes itself with `.venv-browser/bin/python` when Pillow is not
importable, so it can be given as IMAGO_BIN directly).
"""

import os
import sys

try:
    from PIL import Image, ImageDraw, ImageFilter, ImageOps
except ImportError:
    venv_python = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".venv-browser", "bin", "python")
    if os.path.exists(venv_python) and os.path.realpath(sys.executable) != os.path.realpath(venv_python):
        os.execv(venv_python, [venv_python, os.path.abspath(__file__), *sys.argv[1:]])
    sys.exit("browser-test-standin: Pillow is missing (run scripts/browser-test.sh once to make .venv-browser/)")

import argparse
import hashlib
import html
import io
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

# To show that the test catches what it should, IMAGO_STANDIN_FAULT breaks
# one thing: no-result-cache (every answer is a transformation), png (f:auto
# answers PNG), missing (thumbnail 5 is a 404), blank (the page has no images);
# revalidate (Cache-Control: no-cache, so reloads revalidate) is no fault but
# exercises the test's 304 path.
FAULT = os.environ.get("IMAGO_STANDIN_FAULT", "")
SOURCE_COUNT = 24  # enough thumbnails that the page is several screens tall, so lazy loading matters
MAX_AGE = 86400

lock = threading.Lock()
counters = {"transformations": 0, "hits": 0, "status": {}}
result_cache = {}  # (normalised options, source, format) -> bytes, as the real server's result cache


def source_image(n):
    """A deterministic, colourful picture per source number (a gradient and shapes)."""
    w, h = 640, 480
    hue = (n * 47) % 256
    vertical = Image.linear_gradient("L")
    horizontal = vertical.rotate(90)
    image = Image.merge("RGB", (vertical.point(lambda v: (v + hue) % 256).resize((w, h)),
                                horizontal.resize((w, h)),
                                Image.new("L", (w, h), (hue * 3) % 256)))
    draw = ImageDraw.Draw(image)
    for i in range(6):
        x, y = (n * 53 + i * 97) % w, (n * 31 + i * 71) % h
        draw.ellipse((x - 60, y - 60, x + 60, y + 60), fill=((i * 40) % 256, (n * 20) % 256, 255 - i * 30))
    draw.text((20, 20), f"source {n}", fill=(255, 255, 255))
    return image


def transform(n, options, accept):
    """Applies the imgproxy-style options the demo page uses and encodes."""
    image = source_image(n)
    w, h = int(options.get("w", 0)), int(options.get("h", 0))
    dpr = int(options.get("dpr", 1))
    w, h = w * dpr, h * dpr
    if w and h:
        image = ImageOps.fit(image, (w, h)) if options.get("fit") == "crop" else ImageOps.contain(image, (w, h))
    elif w or h:
        ratio = (w / image.width) if w else (h / image.height)
        image = image.resize((max(1, round(image.width * ratio)), max(1, round(image.height * ratio))))
    if "gray" in options:
        image = ImageOps.grayscale(image).convert("RGB")
    if "blur" in options:
        image = image.filter(ImageFilter.GaussianBlur(int(options["blur"]) / 10))
    if "r" in options:
        mask = Image.new("L", image.size, 0)
        ImageDraw.Draw(mask).rounded_rectangle((0, 0, *image.size), radius=int(options["r"]), fill=255)
        image.putalpha(mask)
    buffer = io.BytesIO()
    image.save(buffer, format={"avif": "AVIF", "webp": "WEBP", "png": "PNG"}[chosen_format(options, accept)], quality=60)
    return buffer.getvalue()


def chosen_format(options, accept):
    wanted = options.get("f", "auto")
    if wanted == "auto" and FAULT == "png":
        return "png"
    if wanted != "auto":
        return wanted
    return "avif" if "image/avif" in accept else "webp"


def image_url(n, **options):
    segments = "/".join(k if v is True else f"{k}:{v}" for k, v in options.items())
    return f"/unsafe/{segments}/plain/demo%3A%2F%2F{n}"


def index_page():
    cells = []
    for n in range(SOURCE_COUNT):
        one, two = image_url(n, w=240, h=180, fit="crop", f="auto"), image_url(n, w=240, h=180, fit="crop", dpr=2, f="auto")
        cells.append(f'<a href="/demo/{n}"><img class="thumb" src="{html.escape(one)}" '
                     f'srcset="{html.escape(one)} 1x, {html.escape(two)} 2x" loading="lazy" '
                     f'width="240" height="180" alt="source {n}"></a>')
    if FAULT == "blank":
        cells = []
    return ("<!doctype html><meta charset=utf-8><title>imago demo (stand-in)</title>"
            "<style>body{font:14px sans-serif;margin:16px} .grid{display:grid;grid-template-columns:repeat(2,240px);gap:200px 24px}</style>"
            "<h1>imago demo (stand-in)</h1><div class=grid>" + "".join(cells) + "</div>")


def variant_page(n):
    variants = [dict(w=120, f="auto"), dict(w=320, f="auto"), dict(w=200, h=200, fit="crop", f="auto"),
                dict(w=320, gray=True, f="auto"), dict(w=320, blur=40, f="auto"), dict(w=320, r=40, f="auto"),
                dict(w=320, f="webp"), dict(w=320, f="avif"), dict(w=320, f="png")]
    images = "".join(f'<figure><img class="variant" src="{html.escape(image_url(n, **v))}" alt="variant">'
                     f'<figcaption>{html.escape(image_url(n, **v))}</figcaption></figure>' for v in variants)
    return f"<!doctype html><meta charset=utf-8><title>source {n}</title><h1>source {n}</h1>{images}"


def parse_image_path(path):
    """`/unsafe/k:v/.../plain/demo%3A%2F%2FN` -> (N, options) or None."""
    parts = path.split("/")
    if len(parts) < 4 or parts[1] != "unsafe" or "plain" not in parts:
        return None
    at = parts.index("plain")
    source = unquote("/".join(parts[at + 1:]))
    if not source.startswith("demo://") or not source[7:].isdigit() or int(source[7:]) >= SOURCE_COUNT:
        return None
    options = {}
    for segment in parts[2:at]:
        key, _, value = segment.partition(":")
        options[key] = value
    return int(source[7:]), options


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "imago-standin"

    def log_message(self, fmt, *args):
        sys.stderr.write("standin: %s %s\n" % (self.address_string(), fmt % args))

    def answer(self, status, body=b"", headers=()):
        with lock:
            counters["status"][status] = counters["status"].get(status, 0) + 1
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/":
            return self.answer(200, index_page().encode(), [("Content-Type", "text/html; charset=utf-8")])
        if path.startswith("/demo/") and path[6:].isdigit() and int(path[6:]) < SOURCE_COUNT:
            return self.answer(200, variant_page(int(path[6:])).encode(), [("Content-Type", "text/html; charset=utf-8")])
        if path == "/metrics":
            return self.answer(200, metrics().encode(), [("Content-Type", "text/plain; version=0.0.4")])
        parsed = parse_image_path(path)
        if parsed is None or (FAULT == "missing" and parsed[0] == 5 and parsed[1].get("w") == "240"):
            return self.answer(404, b"not found\n", [("Content-Type", "text/plain"), ("Cache-Control", "max-age=10")])
        n, options = parsed
        accept = self.headers.get("Accept", "")
        sys.stderr.write(f"standin: Accept for {path}: {accept}\n")
        fmt = chosen_format(options, accept)
        key = (tuple(sorted(options.items())), n, fmt)
        with lock:
            body = None if FAULT == "no-result-cache" else result_cache.get(key)
            if body is not None:
                counters["hits"] += 1
        if body is None:
            body = transform(n, options, accept)
            with lock:
                result_cache[key] = body
                counters["transformations"] += 1
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:32]
        cache_control = "no-cache" if FAULT == "revalidate" else f"public, max-age={MAX_AGE}"
        headers = [("Cache-Control", cache_control), ("ETag", etag), ("Vary", "Accept")]
        if self.headers.get("If-None-Match") == etag:
            return self.answer(304, b"", headers)
        return self.answer(200, body, [("Content-Type", f"image/{fmt}"), *headers])


def metrics():
    with lock:
        lines = ["# TYPE imago_result_cache_hits_total counter", f"imago_result_cache_hits_total {counters['hits']}",
                 "# TYPE imago_transformations_total counter", f"imago_transformations_total {counters['transformations']}",
                 "# TYPE imago_http_requests_total counter"]
        lines += [f'imago_http_requests_total{{status="{s}"}} {c}' for s, c in sorted(counters["status"].items())]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(prog="browser-test-standin")
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("--demo", action="store_true", required=True)
    parser.add_argument("--bind", default="127.0.0.1:8080")
    parser.add_argument("--cache", required=True)
    args = parser.parse_args()
    host, _, port = args.bind.rpartition(":")
    os.makedirs(args.cache, exist_ok=True)
    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.daemon_threads = True
    # shutdown() must come from another thread than serve_forever's.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"demo: http://{host}:{server.server_address[1]}/", flush=True)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
