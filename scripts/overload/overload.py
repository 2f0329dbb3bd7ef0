"""The load and the report of scripts/overload.sh. Standard library only.

    overload.py --server HOST:PORT --pid PID --origin URL --photos N
                --duration SECONDS [--connections 1000] [--factor 2]
                [--slow 500] [--non-reading 100] [--request-timeout 15]

Against a running `imago serve` (process PID) whose sources come from
`origin.py` at URL, in this order, so that each phase's memory figures
start from a quiet server:

1. warm-up: every photo once (its source then sits in the disk cache);
2. decompression bombs, one at a time: status, RSS before, peak, after;
3. the sustainable rate: a short closed loop of fresh transformations;
4. overload: 1,000 connections, open loop at `factor` times that rate;
5. hostile clients: 500 sending their headers a byte a second and 100
   that pipeline requests for a large answer and never read, while a
   probe client goes on asking for thumbnails (last: the memory they
   take is not all given back to the system).

RSS (VmRSS) is sampled every 100 ms throughout. Prints the report, one
PASS/FAIL line per check, and `overload: N passed, M failed`; exits 1 if
a check failed.
"""

import argparse
import asyncio
import collections
import os
import socket
import struct
import sys
import time
import urllib.parse

MiB = 1 << 20
OPTIONS = "w:{w}/h:{w}/f:jpeg/q:{q}"


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def percentile(values, fraction):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def ms(seconds):
    return f"{seconds * 1000:.0f} ms"


def mib(size):
    return f"{size / MiB:.1f} MiB"


# ---------------------------------------------------------------- the process


class Process:
    """The server process as /proc shows it, and a sampler of its RSS that
    keeps the peak of each phase."""

    def __init__(self, pid):
        self.pid = pid
        self.phase = "start"
        self.peaks = collections.defaultdict(int)
        self.samples = 0

    def status(self):
        """VmRSS and VmHWM in bytes (0, 0 once the process is gone)."""
        fields = {}
        try:
            with open(f"/proc/{self.pid}/status") as status:
                for line in status:
                    name, _, value = line.partition(":")
                    if name in ("VmRSS", "VmHWM"):
                        fields[name] = int(value.split()[0]) * 1024
        except OSError:
            pass
        return fields.get("VmRSS", 0), fields.get("VmHWM", 0)

    def rss(self):
        return self.status()[0]

    def hwm(self):
        return self.status()[1]

    def alive(self):
        return os.path.exists(f"/proc/{self.pid}/status")

    def descriptors(self):
        try:
            return len(os.listdir(f"/proc/{self.pid}/fd"))
        except OSError:
            return 0

    async def sample(self):
        while True:
            rss = self.rss()
            self.peaks[self.phase] = max(self.peaks[self.phase], rss)
            self.samples += 1
            await asyncio.sleep(0.1)

    def budget(self):
        """The memory budget the server computes for itself (ImagoCaching's
        MemoryBudget): the smallest cgroup limit on the way from its group
        to the root, else physical memory. (bytes, where it comes from)."""
        with open("/proc/meminfo") as meminfo:
            total = next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemTotal:"))
        budget = (total, "physical memory")
        root = "/sys/fs/cgroup"
        with open(f"/proc/{self.pid}/cgroup") as groups:
            lines = groups.read().splitlines()
        for line in lines:
            number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
            if not path.startswith("/"):
                continue
            if number == "0" and controllers == "":
                base = root if os.path.exists(root + "/cgroup.controllers") else root + "/unified"
                files = ["memory.max", "memory.high"]
            elif "memory" in controllers.split(","):
                base, files = root + "/memory", ["memory.limit_in_bytes"]
            else:
                continue
            parts = [part for part in path.split("/") if part]
            while True:
                folder = "/".join([base] + parts)
                for name in files:
                    try:
                        value = int(open(f"{folder}/{name}").read().strip())
                    except (OSError, ValueError):
                        continue
                    if 0 < value < (1 << 63) - MiB and value < budget[0]:
                        budget = (value, f"{folder}/{name}")
                if not parts:
                    break
                parts.pop()
        return budget


# ---------------------------------------------------------------- HTTP


class Failure(Exception):
    """A request that got no HTTP answer: kind is reset, closed, timeout,
    refused or other."""

    def __init__(self, kind, detail=""):
        super().__init__(f"{kind} {detail}".strip())
        self.kind = kind


class Connection:
    """One keep-alive HTTP/1.1 connection; reopened after a failure."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None
        self.opened = 0

    async def open(self):
        try:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        except ConnectionRefusedError as error:
            raise Failure("refused", str(error))
        except OSError as error:
            raise Failure("other", f"connect: {error}")
        self.opened += 1

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def get(self, path, timeout):
        """(status, headers) of GET `path`, the body read and dropped."""
        if self.writer is None:
            await self.open()
        try:
            return await asyncio.wait_for(self._get(path), timeout)
        except asyncio.TimeoutError:
            self.close()
            raise Failure("timeout", f"no answer within {timeout} s")
        except ConnectionResetError as error:
            self.close()
            raise Failure("reset", str(error))
        except (asyncio.IncompleteReadError, BrokenPipeError) as error:
            self.close()
            raise Failure("closed", f"the server closed the connection before answering ({error!r})")
        except OSError as error:
            self.close()
            raise Failure("other", str(error))

    async def _get(self, path):
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n\r\n".encode())
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name:
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers


class Paths:
    """Request paths: photo thumbnails (each call to `fresh` a distinct
    transformation: photo, width and quality walk a counter) and the
    bombs' URLs."""

    def __init__(self, origin, photos):
        self.origin, self.photos, self.counter = origin.rstrip("/"), photos, 0

    def thumbnail(self, photo, width=256, quality=80, extra=""):
        source = urllib.parse.quote(f"{self.origin}/files/photo-{photo}.jpg{extra}", safe="")
        return f"/unsafe/{OPTIONS.format(w=width, q=quality)}/plain/{source}"

    def fresh(self):
        n = self.counter
        self.counter += 1
        # 24 photos x 384 widths x 60 qualities: no repeat within a run.
        photo = n % self.photos
        width = 128 + (n // self.photos) % 384
        quality = 30 + (n // (self.photos * 384)) % 60
        return self.thumbnail(photo, width, quality)

    def raw(self, options, target):
        return f"/unsafe/{options}/plain/" + urllib.parse.quote(f"{self.origin}{target}", safe="")


# ---------------------------------------------------------------- checks


class Checks:
    def __init__(self):
        self.rows = []

    def add(self, ok, text):
        self.rows.append((bool(ok), text))

    def report(self):
        print("== checks ==")
        for ok, text in self.rows:
            print(f"  {'PASS' if ok else 'FAIL'}  {text}")
        passed = sum(ok for ok, _ in self.rows)
        return passed, len(self.rows) - passed


# ---------------------------------------------------------------- phases


async def warm_up(args, paths, checks):
    connection = Connection(args.host, args.port)
    statuses = collections.Counter()
    for photo in range(args.photos):
        try:
            status, _ = await connection.get(paths.thumbnail(photo), args.request_timeout)
        except Failure as failure:
            status = failure.kind
        statuses[status] += 1
    connection.close()
    print(f"warm-up: {args.photos} photos (1024x768 JPEG) once each: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=str)))
    checks.add(statuses == {200: args.photos}, f"warm-up: every photo answered 200 ({dict(statuses)})")


BOMBS = [
    ("PNG declaring 100000x100000", "/files/bomb.png"),
    ("JPEG declaring 65500x65500 (the JPEG maximum)", "/files/bomb.jpg"),
    ("GIF, 10,000 frames on 1000x1000", "/files/bomb.gif"),
    ("60 MB body, Content-Length", "/big/length"),
    ("60 MB body, chunked", "/big/chunked"),
]


async def bombs(args, process, paths, checks):
    print("== decompression bombs (one at a time, on a quiet server) ==")
    print(f"  {'source':46} {'status':>6} {'RSS before':>11} {'peak':>10} {'after':>10} {'rise':>9}")
    connection = Connection(args.host, args.port)
    for name, target in BOMBS:
        await asyncio.sleep(0.5)
        rss_before, hwm_before = process.status()
        process.phase = "bomb"
        process.peaks["bomb"] = rss_before
        detail = ""
        try:
            status, headers = await connection.get(paths.raw("w:256/h:256/f:jpeg/q:80", target), 40)
        except Failure as failure:
            status = failure.kind
        await asyncio.sleep(0.5)
        rss_after, hwm_after = process.status()
        process.phase = "bomb-after"
        # The 100 ms samples can miss a short peak; VmHWM cannot, when it rose.
        peak = max(process.peaks["bomb"], rss_after, hwm_after if hwm_after > hwm_before else 0)
        rise = peak - rss_before
        refused = isinstance(status, int) and 400 <= status < 500
        print(f"  {name:46} {status:>6} {mib(rss_before):>11} {mib(peak):>10} {mib(rss_after):>10} {mib(rise):>9}")
        checks.add(refused, f"bomb refused: {name}: {status}")
        checks.add(rise <= args.bomb_rise * MiB, f"bomb RSS rise <= {args.bomb_rise} MiB: {name}: {mib(rise)}")
    connection.close()


def tcp_state(sock):
    """The kernel's TCP state of `sock`: 1 established, 7 closed (reset),
    8 close-wait (the server closed its side)."""
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
    except OSError:
        return 7


async def probe(args, paths, until, results):
    """Sequential requests, alternately a cached thumbnail and a fresh
    transformation, five a second at most; (kind, status, seconds) each."""
    connection = Connection(args.host, args.port)
    n = 0
    while time.monotonic() < until:
        path = paths.thumbnail(n % args.photos) if n % 2 == 0 else paths.fresh()
        started = time.monotonic()
        try:
            status, _ = await connection.get(path, args.request_timeout)
        except Failure as failure:
            status = failure.kind
        results.append(("hit" if n % 2 == 0 else "fresh", status, time.monotonic() - started))
        n += 1
        await asyncio.sleep(max(0.0, 0.2 - (time.monotonic() - started)))
    connection.close()


async def slow_client(args, index, opened, closed, until):
    """Headers a byte a second, never finished within the phase. Records
    when the server closed the connection, if it did."""
    await asyncio.sleep(index % 100 / 100)  # spread the starts over a second
    try:
        reader, writer = await asyncio.open_connection(args.host, args.port)
    except OSError as error:
        closed.append(("refused", 0.0, str(error)))
        return
    sock = writer.get_extra_info("socket")
    opened.append((sock, writer))
    header = (f"GET /health HTTP/1.1\r\nHost: {args.host}\r\nUser-Agent: slow-{index}-" + "x" * 400 + "\r\n\r\n").encode()
    started = time.monotonic()
    try:
        for byte in header:
            if time.monotonic() >= until:
                break
            if tcp_state(sock) != 1:
                closed.append(("closed", time.monotonic() - started, f"state {tcp_state(sock)}"))
                return
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(1)
    except OSError as error:
        closed.append(("closed", time.monotonic() - started, str(error)))


async def non_reader(args, path, index, opened, closed, until):
    """Pipelines requests for a large answer with a small receive buffer
    and never reads: the server's writes block once the buffers are full."""
    await asyncio.sleep(index % 100 / 100)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(sock, (args.host, args.port))
    except OSError as error:
        closed.append(("refused", 0.0, str(error)))
        sock.close()
        return
    opened.append((sock, sock))
    started = time.monotonic()
    request = f"GET {path} HTTP/1.1\r\nHost: {args.host}\r\n\r\n".encode() * args.pipelined
    try:
        await asyncio.get_running_loop().sock_sendall(sock, request)
    except OSError as error:
        closed.append(("closed", time.monotonic() - started, str(error)))
    while time.monotonic() < until:
        if tcp_state(sock) != 1:
            closed.append(("closed", time.monotonic() - started, f"state {tcp_state(sock)}"))
            return
        await asyncio.sleep(1)


async def hostile(args, process, paths, checks):
    seconds = args.hostile_seconds
    print(f"== hostile clients: {args.slow} slow (headers a byte a second), {args.non_reading} never reading, for {seconds} s ==")
    # The large answer the non-readers ask for: a PNG at the photo's size,
    # made once here so that they are served from the result cache.
    big = paths.raw("w:1024/h:1024/f:png", "/files/photo-0.jpg")
    connection = Connection(args.host, args.port)
    status, headers = await connection.get(big, args.request_timeout)
    big_size = int(headers.get("content-length", 0))
    connection.close()
    print(f"  non-readers pipeline {args.pipelined} requests each for a {mib(big_size)} PNG answer ({status}), receive buffer 4 KiB")

    baseline = []
    await probe(args, paths, time.monotonic() + 3, baseline)
    await asyncio.sleep(0.5)
    fds_before, rss_before = process.descriptors(), process.rss()
    process.phase = "hostile"
    process.peaks["hostile"] = rss_before
    until = time.monotonic() + seconds
    slow_opened, slow_closed, reader_opened, reader_closed = [], [], [], []
    during = []
    fds_peak = fds_before
    tasks = [asyncio.create_task(slow_client(args, i, slow_opened, slow_closed, until)) for i in range(args.slow)]
    tasks += [asyncio.create_task(non_reader(args, big, i, reader_opened, reader_closed, until)) for i in range(args.non_reading)]
    probing = asyncio.create_task(probe(args, paths, until, during))
    while time.monotonic() < until:
        fds_peak = max(fds_peak, process.descriptors())
        await asyncio.sleep(0.5)
    await probing
    fds_end = process.descriptors()
    slow_open = sum(tcp_state(sock) == 1 for sock, _ in slow_opened)
    reader_open = sum(tcp_state(sock) == 1 for sock, _ in reader_opened)
    rss_end = process.rss()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for _, closable in slow_opened + reader_opened:
        try:
            closable.close()
        except OSError:
            pass
    # The server notices the closed connections; give it a few seconds.
    deadline = time.monotonic() + 10
    while process.descriptors() > fds_before + 5 and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    fds_after = process.descriptors()
    await asyncio.sleep(0.5)
    rss_after = process.rss()
    process.phase = "after-hostile"

    def summary(results):
        served = [s for _, status, s in results if status == 200]
        return (f"{len(results)} probes, {len(served)} answered 200, "
                f"p50 {ms(percentile(served, 0.5))}, p99 {ms(percentile(served, 0.99))}, max {ms(max(served, default=0))}")

    print(f"  probe client before: {summary(baseline)}")
    print(f"  probe client during: {summary(during)}")

    def closings(name, opened, closed, still_open, total):
        by_server = [t for kind, t, _ in closed if kind == "closed"]
        refused = [d for kind, _, d in closed if kind == "refused"]
        line = f"  {name}: {len(opened)}/{total} connected"
        if refused:
            line += f" ({len(refused)} refused: {refused[0]})"
        line += f"; after {seconds} s {still_open} still open, {len(by_server)} closed by the server"
        if by_server:
            line += f" (after {min(by_server):.0f}-{max(by_server):.0f} s)"
        print(line)

    closings("slow clients", slow_opened, slow_closed, slow_open, args.slow)
    closings("non-reading clients", reader_opened, reader_closed, reader_open, args.non_reading)
    print(f"  server file descriptors: {fds_before} before, peak {fds_peak}, {fds_end} at the end, "
          f"{fds_after} once the clients hung up")
    print(f"  server RSS: {mib(rss_before)} before, peak {mib(process.peaks['hostile'])}, {mib(rss_end)} at the end, "
          f"{mib(rss_after)} once the clients hung up")
    if slow_open or reader_open:
        print(f"  note: the server closed {args.slow - slow_open} of {args.slow} slow and {args.non_reading - reader_open} "
              f"of {args.non_reading} non-reading connections within {seconds} s (its idle and write timeouts, "
              f"IMAGO_IDLE_TIMEOUT and IMAGO_WRITE_TIMEOUT, may be longer than that; a non-reading client cannot see "
              f"the server close until it reads, so the server's file descriptors say more)")

    served = [s for _, status, s in during if status == 200]
    failed = [status for _, status, _ in during if status != 200]
    checks.add(during and not failed and percentile(served, 0.99) <= args.probe_limit,
               f"other clients served during the hostile clients: {len(served)}/{len(during)} probes 200, "
               f"p99 {ms(percentile(served, 0.99))} (limit {args.probe_limit:.0f} s)"
               + (f"; failures {collections.Counter(failed)}" if failed else ""))
    checks.add(fds_after <= fds_before + 5,
               f"hostile connections released once the clients hung up: {fds_after} server fds (before {fds_before})")


async def closed_loop(args, paths, seconds, workers):
    """Fresh transformations from `workers` connections, each sending the
    next as soon as the last is answered: (answered 200, latencies, statuses)."""
    statuses = collections.Counter()
    latencies = []
    until = time.monotonic() + seconds

    async def worker():
        connection = Connection(args.host, args.port)
        while time.monotonic() < until:
            started = time.monotonic()
            try:
                status, _ = await connection.get(paths.fresh(), args.request_timeout)
            except Failure as failure:
                status = failure.kind
            statuses[status] += 1
            if status == 200:
                latencies.append(time.monotonic() - started)
        connection.close()

    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return statuses, latencies, time.monotonic() - started


async def sustainable(args, process, paths, checks):
    process.phase = "sustainable"
    workers = args.workers
    statuses, latencies, elapsed = await closed_loop(args, paths, args.sustain_seconds, workers)
    rate = statuses[200] / elapsed
    print(f"== sustainable rate: closed loop, {workers} connections, fresh transformations, {elapsed:.1f} s ==")
    print(f"  {statuses[200]} answered 200 in {elapsed:.1f} s: {rate:.1f}/s; latency p50 {ms(percentile(latencies, 0.5))}, "
          f"p99 {ms(percentile(latencies, 0.99))}; statuses " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=str)))
    checks.add(rate > 0 and set(statuses) == {200},
               f"sustainable-rate run: every request 200 ({dict(statuses)})")
    return rate


async def overload(args, process, paths, checks, sustainable_rate):
    rate = max(1.0, args.factor * sustainable_rate)
    total = int(rate * args.duration)
    print(f"== overload: {args.connections} connections, open loop at {args.factor:g} x {sustainable_rate:.1f}/s = {rate:.1f}/s "
          f"for {args.duration} s ({total} requests, each a fresh transformation) ==")
    process.phase = "overload-connect"
    connections = [Connection(args.host, args.port) for _ in range(args.connections)]
    connect_failures = collections.Counter()
    # In batches, so that the listen backlog (256) never overflows.
    for start in range(0, len(connections), 100):
        results = await asyncio.gather(*(c.open() for c in connections[start:start + 100]), return_exceptions=True)
        for result in results:
            if isinstance(result, Failure):
                connect_failures[result.kind] += 1
        await asyncio.sleep(0.05)
    fds_open = process.descriptors()
    print(f"  {len(connections) - sum(connect_failures.values())} connections open (server fds {fds_open})"
          + (f"; failed to connect: {dict(connect_failures)}" if connect_failures else ""))

    idle = collections.deque(connections)
    statuses = collections.Counter()
    failures = collections.Counter()
    failure_examples = {}
    latencies, admitted = [], []
    missing_retry_after = 0
    no_idle = 0
    in_flight = set()
    max_in_flight = 0

    async def send(connection, path):
        nonlocal missing_retry_after
        started = time.monotonic()
        try:
            status, headers = await connection.get(path, args.request_timeout)
            statuses[status] += 1
            latency = time.monotonic() - started
            latencies.append(latency)
            if status == 200:
                admitted.append(latency)
            if status == 429 and "retry-after" not in headers:
                missing_retry_after += 1
        except Failure as failure:
            failures[failure.kind] += 1
            failure_examples.setdefault(failure.kind, str(failure))
        finally:
            idle.append(connection)

    process.phase = "overload"
    hwm_before = process.hwm()
    began = time.monotonic()
    sent = 0
    while sent < total:
        now = time.monotonic()
        if now - began > args.duration + 5:
            break  # the client fell behind: stop on time all the same
        due = min(total, int((now - began) * rate) + 1)
        while sent < due:
            sent += 1
            if not idle:
                no_idle += 1
                continue
            task = asyncio.create_task(send(idle.popleft(), paths.fresh()))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
        max_in_flight = max(max_in_flight, len(in_flight))
        await asyncio.sleep(max(0.0, began + sent / rate - time.monotonic()))
    offered_seconds = time.monotonic() - began
    if in_flight:
        await asyncio.wait(set(in_flight), timeout=args.request_timeout + 5)
    elapsed = time.monotonic() - began
    process.phase = "after-overload"
    for connection in connections:
        connection.close()
    peak = max(process.peaks["overload"], process.peaks["overload-connect"])
    hwm = process.hwm()

    answered = sum(statuses.values())
    print(f"  sent {sent - no_idle} in {offered_seconds:.1f} s ({(sent - no_idle) / offered_seconds:.1f}/s), "
          f"answered {answered}, all done after {elapsed:.1f} s; most in flight at once {max_in_flight}"
          + (f"; {no_idle} not sent: all connections busy" if no_idle else ""))
    print("  statuses: " + ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items())))
    print(f"  latency, all answers: p50 {ms(percentile(latencies, 0.5))}, p99 {ms(percentile(latencies, 0.99))}; "
          f"200s: p50 {ms(percentile(admitted, 0.5))}, p99 {ms(percentile(admitted, 0.99))}, max {ms(max(admitted, default=0))}")
    print(f"  connection failures: " + (", ".join(f"{k}: {v} ({failure_examples[k]})" for k, v in failures.items()) or "none"))
    print(f"  429 without Retry-After: {missing_retry_after}")
    if not statuses[429] and not statuses[503]:
        print("  note: nothing was refused, so the offered rate did not exceed what the server could do then "
              "(the closed-loop measure ran low, e.g. other work on the machine): this run did not test overload")
    print(f"  server RSS: peak {mib(peak)} while loaded (100 ms samples), VmHWM {mib(hwm)} (before the load {mib(hwm_before)})")

    bad = {code: count for code, count in statuses.items() if code not in (200, 429, 503)}
    checks.add(not bad, f"overload: every status is 200, 429 or 503 ({dict(statuses)})")
    checks.add(statuses[500] == 0, f"overload: no 500 ({statuses[500]})")
    checks.add(failures["reset"] == 0, f"overload: no connection reset ({failures['reset']})")
    other = {k: v for k, v in failures.items() if k != "reset"}
    checks.add(not other and not connect_failures,
               f"overload: every request answered, no connection closed or timed out ({dict(other)}, connect {dict(connect_failures)})")
    checks.add(missing_retry_after == 0, f"overload: every 429 has Retry-After ({missing_retry_after} without)")
    checks.add(admitted and max(admitted) <= args.request_timeout,
               f"overload: admitted requests complete within the request timeout of {args.request_timeout:g} s "
               f"(slowest 200: {ms(max(admitted, default=0))})")
    return statuses


async def metrics(args):
    connection = Connection(args.host, args.port)
    connection.writer = None
    await connection.open()
    connection.writer.write(f"GET /metrics HTTP/1.1\r\nHost: {args.host}\r\nConnection: close\r\n\r\n".encode())
    await connection.writer.drain()
    text = (await asyncio.wait_for(connection.reader.read(), 10)).decode("utf-8", "replace")
    connection.close()
    wanted = ("imago_http_requests_total{", "imago_transformation_queue_length", "imago_transformations_total")
    return [line for line in text.split("\r\n\r\n", 1)[-1].splitlines() if line.startswith(wanted)]


async def main(args):
    process = Process(args.pid)
    checks = Checks()
    paths = Paths(args.origin, args.photos)
    budget, budget_source = process.budget()
    print(f"server: pid {args.pid}, memory budget {mib(budget)} ({budget_source}); RSS at start {mib(process.rss())}")
    print(f"load average at the start: {loadavg()} (other work on this machine counts)")
    sampler = asyncio.create_task(process.sample())

    await warm_up(args, paths, checks)
    await bombs(args, process, paths, checks)
    rate = await sustainable(args, process, paths, checks)
    await overload(args, process, paths, checks, rate)
    await hostile(args, process, paths, checks)
    sampler.cancel()

    print("== server /metrics at the end ==")
    try:
        for line in await metrics(args):
            print(f"  {line}")
    except (Failure, OSError, asyncio.TimeoutError) as error:
        print(f"  unavailable: {error}")

    peak = max(process.peaks.values(), default=0)
    hwm = process.hwm()
    print(f"== memory: peak RSS {mib(peak)} ({process.samples} samples every 100 ms), VmHWM {mib(hwm)}, "
          f"budget {mib(budget)} ==")
    for phase in ("bomb", "hostile", "sustainable", "overload"):
        print(f"  peak in {phase}: {mib(process.peaks.get(phase, 0))}")
    checks.add(process.alive(), "the server is still running")
    checks.add(max(peak, hwm) <= budget, f"RSS within the memory budget: peak {mib(max(peak, hwm))} <= {mib(budget)}")
    return checks


def parse():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="HOST:PORT of imago serve")
    parser.add_argument("--pid", type=int, required=True, help="its process id")
    parser.add_argument("--origin", required=True, help="base URL of origin.py")
    parser.add_argument("--photos", type=int, required=True)
    parser.add_argument("--duration", type=int, default=60, help="seconds of overload")
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--factor", type=float, default=2.0, help="times the sustainable rate")
    parser.add_argument("--workers", type=int, default=8, help="connections of the closed loop")
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--non-reading", type=int, default=100)
    parser.add_argument("--pipelined", type=int, default=8, help="requests each non-reading client sends")
    parser.add_argument("--request-timeout", type=float, default=15.0,
                        help="seconds a request gets: the 10 s queue timeout and 5 s to transform")
    parser.add_argument("--probe-limit", type=float, default=5.0, help="seconds a probe may take while hostile clients are on")
    parser.add_argument("--started", type=float, default=0.0, help="epoch seconds the whole run started (setup included)")
    parser.add_argument("--bomb-rise", type=float, default=4.0, help="MiB the RSS may rise for a bomb")
    args = parser.parse_args()
    args.host, _, port = args.server.rpartition(":")
    args.port = int(port)
    args.sustain_seconds = min(10, max(5, args.duration // 4))
    args.hostile_seconds = min(30, max(10, args.duration // 2))
    return args


if __name__ == "__main__":
    arguments = parse()
    started = time.monotonic()
    result = asyncio.run(main(arguments))
    passed, failed = result.report()
    print(f"load average at the end: {loadavg()}")
    took = time.time() - arguments.started if arguments.started else time.monotonic() - started
    print(f"run took {took:.0f} s (the load {time.monotonic() - started:.0f} s)")
    print(f"overload: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
