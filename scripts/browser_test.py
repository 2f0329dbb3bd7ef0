#!/usr/bin/env python3
"""Browser test of `imago serve --demo`: the demo page in a real headless Chromium.

Run it through scripts/browser-test.sh, which installs Chromium, chromedriver
and this script's virtual environment. It starts `$IMAGO_BIN serve --demo`,
and checks what a person opening the page would get:
  - every thumbnail (and every variant on one /demo/N page) loads, with no
    failed request, and Chromium was answered AVIF or WebP (f:auto);
  - every crop and layout on that image's /demo/N/layout page loads at the
    size the page states;
  - a screenshot of the page is not blank;
  - a reload costs the server no transformation: every image request that
    reaches it is a result-cache hit or a 304, according to /metrics.
It ends with `browser: N passed, M failed` and exits 1 if anything failed.

Environment: IMAGO_BIN (default .build/debug/imago), BROWSER_TEST_OUT (where
the screenshot and the server's stderr go; default .build/browser-test),
CHROMIUM (default /usr/bin/chromium), CHROMEDRIVER (default /usr/bin/chromedriver).
"""

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from urllib.parse import urlsplit
from urllib.request import urlopen

from PIL import Image, ImageStat
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

# Hang guards only: every wait returns as soon as its condition holds.
SERVER_START_TIMEOUT = 120
LOAD_TIMEOUT = 60
IMAGE_TYPES = {"image/avif", "image/webp"}


class Checks:
    """Records named checks so that one failure does not hide the others."""

    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok


class Server:
    """The demo server as a child process, stopped the way the contract says (SIGTERM)."""

    def __init__(self, binary, cache_dir, log_path):
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--demo", "--bind", "127.0.0.1:0", "--cache", cache_dir],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.lines = queue.Queue()
        # stdout is read on a thread so that the start-up wait can have a bound,
        # and so that later output never fills the pipe and blocks the server.
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for_url(self):
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(f"no `demo: URL` line on the server's stdout within {SERVER_START_TIMEOUT} s")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"the server ended before printing its URL (exit {self.process.wait()})")
            match = re.match(r"demo: (http://127\.0\.0\.1:\d+/)\s*$", line)
            if match:
                return match.group(1)

    def stop(self):
        """Returns the exit status after SIGTERM (killing it if it does not stop)."""
        try:
            if self.process.poll() is not None:
                return f"{self.process.returncode}, but it had exited before SIGTERM"
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return "none: it did not stop within 30 s of SIGTERM (killed)"
        finally:
            self.log.close()


class NetworkLog:
    """Chromium's network events (the performance log), gathered per request.

    The log is drained on every read, so each phase of the test starts a new
    NetworkLog and sees only its own requests.
    """

    def __init__(self, driver):
        self.driver = driver
        self.requests = {}

    def _entry(self, request_id):
        return self.requests.setdefault(request_id, {
            "url": None, "type": None, "status": None, "wire_status": None, "mime": None,
            "from_cache": False, "failed": None, "finished": False, "accept": None})

    def collect(self):
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            method, params = message["method"], message.get("params", {})
            if not method.startswith("Network.") or "requestId" not in params:
                continue
            request = self._entry(params["requestId"])
            if method == "Network.requestWillBeSent":
                request["url"] = params["request"]["url"]
                request["type"] = params.get("type", request["type"])
                request["accept"] = request["accept"] or params["request"]["headers"].get("Accept")
            elif method == "Network.requestWillBeSentExtraInfo":
                # The headers actually sent, which includes Accept for subresources.
                headers = {k.lower(): v for k, v in params.get("headers", {}).items()}
                request["accept"] = headers.get("accept", request["accept"])
            elif method == "Network.responseReceived":
                response = params["response"]
                request["url"] = request["url"] or response["url"]
                request["type"] = params.get("type", request["type"])
                request["status"] = response["status"]
                request["mime"] = response.get("mimeType")
                if response.get("fromDiskCache"):
                    request["from_cache"] = "disk"
                elif response.get("fromMemoryCache"):
                    request["from_cache"] = "memory"
            elif method == "Network.responseReceivedExtraInfo":
                # The status on the wire: a revalidation shows 304 here.
                request["wire_status"] = params.get("statusCode")
            elif method == "Network.requestServedFromCache":
                # What Chromium 156 reports for its in-memory cache (its
                # responseReceived then has neither fromMemoryCache nor fromDiskCache).
                request["from_cache"] = request["from_cache"] or "memory"
            elif method == "Network.loadingFinished":
                request["finished"] = True
            elif method == "Network.loadingFailed":
                request["failed"] = params.get("errorText", "failed")
                request["finished"] = True
        return self

    def images(self):
        return [r for r in self.requests.values() if r["type"] == "Image" and r["url"] and r["url"].startswith("http")]

    def wait_settled(self):
        """Waits until every image request seen has finished or failed."""
        WebDriverWait(self.driver, LOAD_TIMEOUT, poll_frequency=0.2).until(
            lambda _: all(r["finished"] for r in self.collect().images()))
        return self


def new_browser(scratch):
    options = Options()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    # --no-sandbox: Chromium refuses to start its sandbox as root.
    # --disable-dev-shm-usage: containers often have a tiny /dev/shm.
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900", "--hide-scrollbars", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    # Chromium's profile and singleton socket go to TMPDIR: a folder of ours,
    # removed at the end, so that runs leave nothing in /tmp.
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"),
                      env={**os.environ, "TMPDIR": scratch})
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(LOAD_TIMEOUT)
    return driver


def load_all_images(driver, selector):
    """Brings lazy images into view until every one matching `selector` is complete.

    Chromium starts a `loading="lazy"` image only when it nears the viewport,
    so scroll the first unfinished image to the middle of the screen and wait
    for it; its neighbours usually load with it. Returns each image's state.
    """
    count = driver.execute_script("return document.querySelectorAll(arguments[0]).length", selector)
    for _ in range(count):
        pending = driver.execute_script("""
            const pending = [...document.querySelectorAll(arguments[0])].findIndex(img => !img.complete);
            if (pending >= 0) document.querySelectorAll(arguments[0])[pending].scrollIntoView({block: 'center'});
            return pending;""", selector)
        if pending < 0:
            break
        WebDriverWait(driver, LOAD_TIMEOUT, poll_frequency=0.1).until(
            lambda d: d.execute_script("return document.querySelectorAll(arguments[0])[arguments[1]].complete",
                                       selector, pending),
            message=f"{selector} #{pending} did not finish loading within {LOAD_TIMEOUT} s")
    driver.execute_script("window.scrollTo(0, 0)")
    return driver.execute_script("""
        return [...document.querySelectorAll(arguments[0])].map(img =>
            ({src: img.currentSrc || img.src, complete: img.complete, naturalWidth: img.naturalWidth,
              naturalHeight: img.naturalHeight, width: img.dataset.width, height: img.dataset.height}));""", selector)


def check_images_loaded(checks, name, images):
    broken = [i["src"] for i in images if not (i["complete"] and i["naturalWidth"] > 0)]
    checks.check(name, images and not broken,
                 f"{len(images) - len(broken)}/{len(images)} with naturalWidth > 0" +
                 (f"; broken: {broken[:5]}" if broken else ""))


def asks_auto(url):
    """Whether an image URL leaves the format to the server (`f:auto`)."""
    return re.search(r"/(f|format):auto(/|$)", urlsplit(url).path) is not None


def check_network(checks, phase, log, require_auto=True):
    images = log.images()
    failed = [(r["url"], r["failed"]) for r in log.requests.values() if r["failed"]]
    errors = [(r["url"], r["status"]) for r in images if (r["status"] or 0) >= 400]
    checks.check(f"{phase}: no failed request (Network.loadingFailed)", not failed, f"{failed[:5]}" if failed else "")
    checks.check(f"{phase}: no image response with status >= 400", not errors,
                 f"{len(images)} image requests" + (f"; {errors[:5]}" if errors else ""))
    # Only f:auto leaves the choice to the server; a variant that asks for JPEG
    # or PNG by name should get it. A 304 keeps the cached answer's mimeType.
    auto = [r for r in images if asks_auto(r["url"]) and r["status"] is not None]
    wrong_type = [(r["url"], r["mime"]) for r in auto if r["mime"] not in IMAGE_TYPES]
    named = sorted({r["mime"] for r in images if not asks_auto(r["url"]) and r["mime"]})
    checks.check(f"{phase}: Chromium received AVIF or WebP for f:auto", (auto or not require_auto) and not wrong_type,
                 f"{len(auto)} f:auto answers, types {sorted({r['mime'] for r in auto})}" +
                 (f"; formats asked by name: {named}" if named else "") +
                 (f"; other: {wrong_type[:5]}" if wrong_type else ""))


def check_not_blank(checks, path):
    """A blank or unstyled page has a handful of colours; photos and gradients have thousands."""
    with Image.open(path) as screenshot:
        rgb = screenshot.convert("RGB")
        colours = len(rgb.getcolors(maxcolors=rgb.width * rgb.height))
        spread = sum(ImageStat.Stat(rgb).stddev) / 3
        size = rgb.size
    checks.check("screenshot is not blank", colours >= 512 and spread >= 10,
                 f"{path} ({size[0]}x{size[1]}, {colours} distinct colours, mean channel stddev {spread:.1f})")


def read_metrics(base_url):
    with urlopen(base_url + "metrics", timeout=30) as response:
        text = response.read().decode()

    def value(name, labels=None, required=True):
        pattern = "^" + re.escape(name) + (r"\{" + re.escape(labels) + r"\}" if labels else r"(\{\})?") + \
            r"[ \t]+(?P<value>\S+)"
        match = re.search(pattern, text, re.MULTILINE)
        if match:
            return float(match.group("value"))
        if required:
            raise RuntimeError(f"/metrics has no {name}{'{' + labels + '}' if labels else ''}")
        return 0.0  # a labelled counter appears only once that label has been counted

    return {"transformations": value("imago_transformations_total"),
            "hits": value("imago_result_cache_hits_total"),
            "200": value("imago_http_requests_total", 'status="200"', required=False),
            "304": value("imago_http_requests_total", 'status="304"', required=False)}


def reload_check(checks, driver, base_url, label, reload):
    """Reloads `/` with `reload` and checks the server did no transformation for it."""
    before = read_metrics(base_url)
    NetworkLog(driver).collect()  # drop the events of earlier phases
    # A mark on the old document tells when the new one has replaced it (a
    # reload through the DevTools protocol returns before the page loads).
    driver.execute_script("window.imagoBrowserTestOldPage = true")
    reload()
    WebDriverWait(driver, LOAD_TIMEOUT, poll_frequency=0.1).until(lambda d: d.execute_script(
        "return !window.imagoBrowserTestOldPage && document.readyState === 'complete'"))
    images = load_all_images(driver, "img.thumb")
    log = NetworkLog(driver).wait_settled()
    after = read_metrics(base_url)
    check_images_loaded(checks, f"{label}: every img.thumb loaded", images)

    requests = log.images()
    from_browser = [r for r in requests if r["from_cache"]]
    reached = [r for r in requests if not r["from_cache"] and not r["failed"]]
    revalidated = [r for r in reached if (r["wire_status"] or r["status"]) == 304]
    answered = [r for r in reached if (r["wire_status"] or r["status"]) == 200]
    other = [(r["url"], r["wire_status"] or r["status"]) for r in reached if r not in revalidated + answered]
    delta = {k: int(after[k] - before[k]) for k in after}
    memory = sum(1 for r in from_browser if r["from_cache"] == "memory")
    print(f"     {label}: {len(requests)} image requests in Chromium's log: {len(from_browser)} from its own cache "
          f"({memory} memory, {len(from_browser) - memory} disk), {len(revalidated)} revalidated (304), "
          f"{len(answered)} answered 200\n"
          f"     {label}: server metrics before -> after: transformations {before['transformations']:.0f} -> "
          f"{after['transformations']:.0f}, result-cache hits {before['hits']:.0f} -> {after['hits']:.0f}, "
          f"304s {before['304']:.0f} -> {after['304']:.0f}", flush=True)
    checks.check(f"{label}: no new transformation", delta["transformations"] == 0,
                 f"{delta['transformations']} new transformations")
    # A 304 may or may not look the result cache up first, so hits and 304s are
    # checked each against what Chromium saw, not against their sum.
    checks.check(f"{label}: every image request that reached the server was a result-cache hit or a 304",
                 delta["hits"] >= len(answered) and delta["304"] >= len(revalidated) and not other,
                 f"{len(answered)} answered 200 vs {delta['hits']} new hits, "
                 f"{len(revalidated)} revalidated vs {delta['304']} new 304s, {len(from_browser)} not asked" +
                 (f"; other answers: {other[:5]}" if other else ""))
    check_network(checks, label, log)
    return log


def main():
    started = time.monotonic()
    binary = os.environ.get("IMAGO_BIN", ".build/debug/imago")
    out_dir = os.path.abspath(os.environ.get("BROWSER_TEST_OUT", ".build/browser-test"))
    os.makedirs(out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="imago-browser-test-")
    cache_dir = os.path.join(scratch, "cache")
    browser_tmp = os.path.join(scratch, "chromium")
    os.makedirs(cache_dir)
    os.makedirs(browser_tmp)
    checks = Checks()
    server = driver = None
    print(f"browser test: {binary} serve --demo (cache {cache_dir}, output {out_dir})", flush=True)
    try:
        server = Server(binary, cache_dir, os.path.join(out_dir, "server.log"))
        base_url = server.wait_for_url()
        checks.check("server printed its URL", True, base_url)
        driver = new_browser(browser_tmp)
        print(f"     {driver.capabilities['browserName']} {driver.capabilities['browserVersion']}, "
              f"chromedriver {driver.capabilities['chrome']['chromedriverVersion'].split()[0]}", flush=True)

        # First visit: every request reaches the server.
        driver.get(base_url)
        check_images_loaded(checks, "/: every img.thumb loaded", load_all_images(driver, "img.thumb"))
        screenshot = os.path.join(out_dir, "demo.png")
        driver.save_screenshot(screenshot)
        log = NetworkLog(driver).wait_settled()
        check_network(checks, "/", log)
        accepts = sorted({r["accept"] for r in log.images() if r["accept"]})
        print(f"     Accept sent for images: {accepts}", flush=True)
        check_not_blank(checks, screenshot)

        # One image's page: its variants (sizes, crop, gray, blur, corners, formats).
        detail = driver.execute_script("return document.querySelector('a img.thumb')?.closest('a')?.href ?? null")
        if checks.check("/ links a thumbnail to its page", detail is not None, detail or "no <a> around an img.thumb"):
            driver.get(detail)
            check_images_loaded(checks, f"{detail}: every img.variant loaded", load_all_images(driver, "img.variant"))
            # The contract names f:auto for the grid only; variants may all ask for formats by name.
            check_network(checks, detail, NetworkLog(driver).wait_settled(), require_auto=False)

            # Its crops and layouts (imgproxy's gravity, focus point, smart crop,
            # extension, padding, rotation, filters): each decoded by Chromium
            # at the size the page states.
            layout = detail.rstrip("/") + "/layout"
            driver.get(layout)
            images = load_all_images(driver, "img.layout")
            check_images_loaded(checks, f"{layout}: every img.layout loaded", images)
            wrong = [(i["src"], f'{i["naturalWidth"]}x{i["naturalHeight"]}', f'{i["width"]}x{i["height"]}')
                     for i in images if (str(i["naturalWidth"]), str(i["naturalHeight"])) != (i["width"], i["height"])]
            checks.check(f"{layout}: every layout decoded at its stated size", images and not wrong,
                         f"{len(images) - len(wrong)}/{len(images)}" + (f"; wrong: {wrong[:3]}" if wrong else ""))
            check_network(checks, layout, NetworkLog(driver).wait_settled())
            driver.save_screenshot(os.path.join(out_dir, "layout.png"))

        # Back to the page, then reload it: what a person's second look costs.
        driver.get(base_url)
        load_all_images(driver, "img.thumb")
        NetworkLog(driver).wait_settled()
        reload_check(checks, driver, base_url, "reload", driver.refresh)
        # Chromium may answer a plain reload from its own cache without asking the
        # server; a reload that bypasses it makes the server answer every image.
        reload_check(checks, driver, base_url, "reload bypassing Chromium's cache",
                     lambda: driver.execute_cdp_cmd("Page.reload", {"ignoreCache": True}))
    except Exception as error:  # report it as a failed check, then clean up
        traceback.print_exc()
        checks.check("test ran to the end", False, f"{type(error).__name__}: {error}")
    finally:
        if driver is not None:
            driver.quit()
        if server is not None:
            status = server.stop()
            checks.check("server exited 0 on SIGTERM", status == 0, f"status {status}")
            if checks.failed:  # the server's own words are the first clue
                with open(server.log.name, errors="replace") as stderr:
                    tail = stderr.readlines()[-20:]
                print(f"     last lines of the server's stderr ({server.log.name}):", flush=True)
                sys.stdout.writelines(f"       {line}" for line in tail)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"     took {time.monotonic() - started:.1f} s")
    print(f"browser: {checks.passed} passed, {checks.failed} failed", flush=True)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
