"""The checks of imago serve running in its container image, from the host
over loopback (scripts/container-test.sh runs both parts).

`source`: an HTTP source on 127.0.0.1 with a 1024x768 JPEG at /photo.jpg
and the same at /slow.jpg, answered only once the file `release` appears in
CONTAINER_CHECK_WORK (so a request can be held in flight while the server is
told to stop). It writes its port to `source-port` there.

`check`: the checks, one line each; exits 1 on the first failure.
"""

import base64
import hashlib
import hmac
import http.client
import http.server
import os
import signal
import subprocess
import sys
import threading
import time

WORK = os.environ["CONTAINER_CHECK_WORK"]


def jpeg(width=1024, height=768):
    """A gradient photo, encoded by libjpeg-turbo's cjpeg."""
    rows = bytearray()
    for y in range(height):
        for x in range(width):
            rows += bytes(((x * 255) // width, (y * 255) // height, ((x + y) * 255) // (width + height)))
    ppm = b"P6 %d %d 255\n" % (width, height) + bytes(rows)
    return subprocess.run(["cjpeg", "-quality", "90"], input=ppm, capture_output=True, check=True).stdout


def serve_source():
    photo = jpeg()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path not in ("/photo.jpg", "/slow.jpg"):
                self.send_error(404)
                return
            if self.path == "/slow.jpg":
                open(os.path.join(WORK, "slow-arrived"), "w").close()
                # Held until the check releases it (bounded, so nothing hangs forever).
                deadline = time.monotonic() + 600
                while not os.path.exists(os.path.join(WORK, "release")) and time.monotonic() < deadline:
                    time.sleep(0.05)
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", str(len(photo)))
            self.send_header("Cache-Control", "max-age=3600")
            self.end_headers()
            self.wfile.write(photo)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(os.path.join(WORK, "source-port.tmp"), "w") as port:
        port.write(str(server.server_address[1]))
    os.rename(os.path.join(WORK, "source-port.tmp"), os.path.join(WORK, "source-port"))
    server.serve_forever()


def get(path, timeout=600):
    connection = http.client.HTTPConnection("127.0.0.1", int(os.environ["IMAGO_PORT"]), timeout=timeout)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, dict((k.lower(), v) for k, v in response.getheaders()), body


def imgproxy_path(rest):
    """An imgproxy URL signed as imgproxy signs them: HMAC-SHA256 of salt + path."""
    key = bytes.fromhex(os.environ["IMAGO_KEY"])
    salt = bytes.fromhex(os.environ["IMAGO_SALT"])
    digest = hmac.new(key, salt + rest.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(digest).decode().rstrip("=") + rest


def thumbor_path(rest):
    """A thumbor URL signed as thumbor signs them: HMAC-SHA1 of the path, padded base64url."""
    digest = hmac.new(os.environ["THUMBOR_KEY"].encode(), rest.encode(), hashlib.sha1).digest()
    return "/thumbor/" + base64.urlsafe_b64encode(digest).decode() + "/" + rest


def expect(condition, what):
    if not condition:
        print("FAILED: " + what)
        sys.exit(1)
    print("ok: " + what)


def proc_status(pid):
    with open("/proc/%s/status" % pid) as status:
        return dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)


def check():
    source = "http://127.0.0.1:%s" % os.environ["SOURCE_PORT"]
    pid = os.environ["IMAGO_PID"]

    status, _, body = get("/health")
    expect(status == 200 and body == b"ok\n", "/health answers 200 ok")
    status, _, _ = get("/ready")
    expect(status == 200, "/ready answers 200")

    status, headers, body = get(imgproxy_path("/rs:fit:300:200/plain/%s/photo.jpg@webp" % source))
    expect(status == 200 and headers.get("content-type") == "image/webp" and body[8:12] == b"WEBP",
           "a signed imgproxy URL answers a WebP thumbnail (%d, %s)" % (status, headers.get("content-type")))
    status, _, _ = get(imgproxy_path("/rs:fit:301:200/plain/%s/photo.jpg" % source)[:-1] + "x")
    expect(status == 403, "a URL whose signature does not match is refused (%d)" % status)

    status, headers, body = get(thumbor_path("300x200/127.0.0.1:%s/photo.jpg" % os.environ["SOURCE_PORT"]))
    expect(status == 200 and body[:3] == b"\xff\xd8\xff", "a signed thumbor URL answers a JPEG (%d)" % status)

    status, _, body = get("/metrics")
    expect(status == 200 and b"imago_" in body, "/metrics answers Prometheus text")

    process = proc_status(pid)
    expect(process["Uid"].split() == ["10001"] * 4 and process["Gid"].split() == ["10001"] * 4,
           "the process runs as the image's user, 10001 (Uid %s)" % process["Uid"])
    held = [name for name in ("CapInh", "CapPrm", "CapEff", "CapAmb") if int(process[name], 16) != 0]
    expect(not held, "the process holds no capability (%s)" % ", ".join("%s %s" % (n, process[n]) for n in ("CapPrm", "CapEff", "CapBnd")))
    # buildah's chroot isolation leaves CAP_SETUID in the bounding set; no
    # set-user-ID or set-group-ID file in the image can raise it.
    root = os.environ["CONTAINER_ROOT"]
    privileged = []
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path) and os.lstat(path).st_mode & 0o6000:
                privileged.append(path[len(root):])
    expect(not privileged, "no set-user-ID or set-group-ID file in the image (%s)" % " ".join(privileged[:5]))
    with open("/proc/%s/mountinfo" % pid) as mountinfo:
        mounts = {fields[4]: fields[5].split(",") for fields in (line.split() for line in mountinfo)}
    root_options = mounts.get(os.environ["CONTAINER_ROOT"], mounts.get("/", []))
    expect("ro" in root_options, "the root file system is read-only (%s)" % ",".join(root_options))
    cache = [options for point, options in mounts.items() if point.endswith("/var/cache/imago")]
    expect(cache and "rw" in cache[0], "the cache volume is writable")

    # SIGTERM while a request waits on its source: it is answered, then the server exits 0.
    answer = {}

    def slow():
        answer["status"], _, answer["body"] = get(imgproxy_path("/rs:fit:200:200/plain/%s/slow.jpg" % source))

    request = threading.Thread(target=slow)
    request.start()
    arrived = os.path.join(WORK, "slow-arrived")
    deadline = time.monotonic() + 600
    while not os.path.exists(arrived) and time.monotonic() < deadline:
        time.sleep(0.05)
    expect(os.path.exists(arrived), "a slow request reached its source")
    os.kill(int(pid), signal.SIGTERM)
    # The server stops taking connections, so that the request in flight is the last one.
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            status, _, _ = get("/ready", timeout=5)
            if status == 503:
                break
        except OSError:
            break
        time.sleep(0.05)
    open(os.path.join(WORK, "release"), "w").close()
    request.join(600)
    expect(answer.get("status") == 200 and answer.get("body", b"")[:3] == b"\xff\xd8\xff",
           "the request in flight at SIGTERM was answered (%s)" % answer.get("status"))


if __name__ == "__main__":
    {"source": serve_source, "check": check}[sys.argv[1]]()
