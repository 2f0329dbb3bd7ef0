"""Helpers for scripts/cluster.sh: free ports, the source images, the
request list the load walks, and the report of a phase.

Runs on Debian's python3 (Pillow from python3-pil), standard library
otherwise.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import random
import re
import socket
import sys
import urllib.parse

# The Accept headers the load sends, as browsers send them, and the variant
# nginx's map must give each (checked by the report: a mismatch means the
# map and imago disagree on what a header asks for).
ACCEPTS = [
    ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", "avif"),
    ("image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5", "webp"),
    ("image/jpeg,image/png,image/*;q=0.8", "other"),
]
OPTIONS = "rs:fill:256:256/f:auto"


def free_ports(args):
    """Ports free on `--host` now, chosen by the kernel (a port is bound
    and released, so another program could take it before we do: the
    callers check that each server came up)."""
    sockets = []
    for _ in range(args.count):
        s = socket.socket()
        s.bind((args.host, 0))
        sockets.append(s)
    print(" ".join(str(s.getsockname()[1]) for s in sockets))
    for s in sockets:
        s.close()


def images(args):
    """`count` distinct 800x600 JPEGs: a gradient under random rectangles
    and ellipses, seeded by the index, so every file differs."""
    from PIL import Image, ImageDraw

    os.makedirs(args.folder, exist_ok=True)
    base = Image.linear_gradient("L").resize((800, 600)).convert("RGB")
    for index in range(args.count):
        rng = random.Random(index)
        image = base.copy()
        draw = ImageDraw.Draw(image)
        for _ in range(24):
            x, y = rng.randrange(800), rng.randrange(600)
            box = [x, y, x + rng.randrange(20, 300), y + rng.randrange(20, 200)]
            colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
            (draw.rectangle if rng.random() < 0.5 else draw.ellipse)(box, fill=colour)
        image.save(os.path.join(args.folder, f"{index}.jpg"), quality=85)


def sign(key, salt, path):
    mac = hmac.new(key, salt + path.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def requests(args):
    """The sequence the load walks, one `accept-index<TAB>path` a line.

    Most requests walk every (image, variant) pair once in a shuffled
    order, so the caches fill through the whole run; the rest repeat a
    small popular set, so nginx's cache and the result caches get hits.
    The same seed gives both phases the same sequence."""
    key, salt = bytes.fromhex(args.key), bytes.fromhex(args.salt)
    paths = []
    for index in range(args.images):
        source = urllib.parse.quote(f"{args.source_base}/{index}.jpg", safe="")
        rest = f"/{OPTIONS}/plain/{source}"
        paths.append(f"/{sign(key, salt, rest)}{rest}")
    rng = random.Random(7)
    walk = [(image, variant) for image in range(args.images) for variant in range(len(ACCEPTS))]
    rng.shuffle(walk)
    popular = walk[: max(1, len(walk) // 20)]
    lines, position = [], 0
    for _ in range(args.count):
        if rng.random() < 0.3:
            image, variant = rng.choice(popular)
        else:
            image, variant = walk[position % len(walk)]
            position += 1
        lines.append(f"{variant}\t{paths[image]}")
    with open(args.output, "w") as output:
        output.write("\n".join(lines) + "\n")
    with open(args.output + ".accepts", "w") as output:
        output.write("\n".join(accept for accept, _ in ACCEPTS) + "\n")


def entries(folder):
    """The names of a disk cache folder's entries: one file per entry,
    named by its key's SHA-256, under 256 sub-folders (the `lock` and
    `index` files and temporary files are not entries)."""
    names = set()
    if not os.path.isdir(folder):
        return names
    for sub in os.listdir(folder):
        path = os.path.join(folder, sub)
        if os.path.isdir(path):
            names.update(name for name in os.listdir(path) if re.fullmatch(r"[0-9a-f]{64}", name))
    return names


def read_log(path):
    """nginx's access log as written by the `cluster` log_format:
    msec, status, cache status, upstream addresses, upstream statuses,
    variant, Accept, request time, URI; tab-separated."""
    rows = []
    with open(path) as log:
        for line in log:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 9:
                continue
            msec, status, cache, upstreams, upstream_statuses, variant, accept, seconds, uri = fields
            rows.append(dict(msec=float(msec), status=int(status), cache=cache, upstreams=upstreams,
                             upstream_statuses=upstream_statuses, variant=variant, accept=accept, uri=uri))
    return rows


def report(args):
    """One phase's section of the report; its figures as JSON to `--json`."""
    with open(args.wrk) as output:
        client = next((json.loads(line[len("wrk-result "):]) for line in output if line.startswith("wrk-result ")), None)
    if client is None:
        # wrk ended without its done() line: nothing it sent counts as answered.
        client = dict(requests=0, statuses={}, connect=0, read=0, write=0, timeout=0)
    statuses = {int(code): count for code, count in client["statuses"].items()}
    bad_statuses = sum(count for code, count in statuses.items() if not (200 <= code < 300 or code == 304))
    socket_errors = client["connect"] + client["read"] + client["write"] + client["timeout"]
    failed = bad_statuses + socket_errors

    rows = read_log(args.log)
    addresses = args.instances.split(",")
    served = {address: 0 for address in addresses}
    retried, upstream_requests, after_restart = 0, 0, 0
    cache, nginx_statuses = {}, {}
    expected_variant = {accept: variant for accept, variant in ACCEPTS}
    wrong_variant = 0
    for row in rows:
        cache[row["cache"]] = cache.get(row["cache"], 0) + 1
        nginx_statuses[row["status"]] = nginx_statuses.get(row["status"], 0) + 1
        if expected_variant.get(row["accept"], row["variant"]) != row["variant"]:
            wrong_variant += 1
        if row["upstreams"] in ("-", ""):
            continue
        # "a, b : c" lists every server tried (", ") and internal redirects
        # (" : "); the last one answered.
        tried = [part.strip() for part in re.split(r"[,:] ", row["upstreams"])]
        upstream_requests += 1
        if len(tried) > 1:
            retried += 1
        last = tried[-1]
        served[last] = served.get(last, 0) + 1
        if args.restarted_at and last == args.restarted and row["msec"] >= args.restarted_at:
            after_restart += 1
    total = len(rows)
    hits = cache.get("HIT", 0)

    per_instance, distinct, sources_distinct = [], set(), set()
    results_total = sources_total = 0
    for address, folder in zip(addresses, args.folders.split(",")):
        results, sources = entries(os.path.join(folder, "results")), entries(os.path.join(folder, "sources"))
        per_instance.append((address, len(results), len(sources)))
        results_total += len(results)
        sources_total += len(sources)
        distinct |= results
        sources_distinct |= sources
    duplication = results_total / len(distinct) if distinct else 0.0
    sources_duplication = sources_total / len(sources_distinct) if sources_distinct else 0.0

    print(f"== {args.title} ==")
    print(f"client (wrk, {args.connections} connections, {args.duration} s): {client['requests']} requests, "
          f"{failed} failed ({bad_statuses} with a status other than 2xx/304, {socket_errors} socket errors: "
          f"connect {client['connect']}, read {client['read']}, write {client['write']}, timeout {client['timeout']})")
    print("  statuses: " + ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items()))
          + f"; latency p50 {client.get('latency_p50_ms', 0):.0f} ms, p99 {client.get('latency_p99_ms', 0):.0f} ms")
    if args.event:
        print(f"  {args.event}")
    print(f"nginx: {total} requests logged; cache hit ratio {hits / total if total else 0:.1%} "
          f"(" + ", ".join(f"{name} {count}" for name, count in sorted(cache.items())) + ")")
    closed = nginx_statuses.get(499, 0)
    print("  statuses: " + ", ".join(f"{code}: {count}" for code, count in sorted(nginx_statuses.items()))
          + (f" (499: in flight when the load stopped, closed by the client)" if closed else ""))
    print(f"  {upstream_requests} went to an instance, {retried} of them retried on the next instance")
    if wrong_variant:
        print(f"  {wrong_variant} requests mapped to a variant other than the one their Accept asks for")
    print("  instance            share of upstream requests  result entries  source entries")
    for address, results, sources in per_instance:
        share = served.get(address, 0) / upstream_requests if upstream_requests else 0
        note = ""
        if address == args.restarted:
            note = f"  (killed and restarted; {after_restart} requests after it came back)"
        print(f"  {address:<19} {share:>7.1%} ({served.get(address, 0):>5})   {results:>14}  {sources:>14}{note}")
    print(f"  distinct results {len(distinct)}, entries {results_total}, duplication factor {duplication:.2f}")
    print(f"  distinct sources {len(sources_distinct)}, entries {sources_total}, duplication factor {sources_duplication:.2f}")
    # Variants answered (a URI in one Accept variant), against the
    # transformations the instances made for them (their /metrics at the end).
    variants = {(row["variant"], row["uri"]) for row in rows if 200 <= row["status"] < 300}
    transformations = sum(metric(path, "imago_transformations_total") for path in args.metrics.split(",") if path)
    store_hits = sum(metric(path, "imago_result_store_hits_total") for path in args.metrics.split(",") if path)
    per_variant = transformations / len(variants) if variants else 0.0
    print(f"  transformations {transformations:.0f} for {len(variants)} distinct variants answered: {per_variant:.2f} per variant"
          + (f"; {store_hits:.0f} answers taken from the shared store" if store_hits else "")
          + (" (the killed instance's count before the kill is lost)" if args.restarted else ""))
    print()
    with open(args.json, "w") as output:
        json.dump(dict(failed=failed, requests=client["requests"], duplication=duplication,
                       sources_duplication=sources_duplication, transformations_per_variant=per_variant), output)


def metric(path, name):
    """The value of the metric `name` (without labels) in a Prometheus
    text exposition saved at `path`; 0 when it is not there."""
    if not os.path.exists(path):
        return 0.0
    with open(path) as exposition:
        for line in exposition:
            fields = line.split()
            if len(fields) == 2 and fields[0] == name:
                return float(fields[1])
    return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(required=True)

    command = commands.add_parser("ports")
    command.add_argument("--host", default="127.0.0.1")
    command.add_argument("count", type=int)
    command.set_defaults(run=free_ports)

    command = commands.add_parser("images")
    command.add_argument("folder")
    command.add_argument("count", type=int)
    command.set_defaults(run=images)

    command = commands.add_parser("requests")
    command.add_argument("output")
    command.add_argument("--images", type=int, required=True)
    command.add_argument("--count", type=int, required=True)
    command.add_argument("--source-base", required=True)
    command.add_argument("--key", required=True)
    command.add_argument("--salt", required=True)
    command.set_defaults(run=requests)

    command = commands.add_parser("report")
    command.add_argument("--title", required=True)
    command.add_argument("--wrk", required=True)
    command.add_argument("--log", required=True)
    command.add_argument("--instances", required=True, help="comma-separated HOST:PORT")
    command.add_argument("--folders", required=True, help="comma-separated cache folders, same order")
    command.add_argument("--connections", type=int, required=True)
    command.add_argument("--duration", type=int, required=True)
    command.add_argument("--restarted", default="")
    command.add_argument("--restarted-at", type=float, default=0.0, help="Unix time it was ready again")
    command.add_argument("--event", default="")
    command.add_argument("--json", required=True)
    command.add_argument("--metrics", default="", help="comma-separated files of the instances' /metrics at the end")
    command.set_defaults(run=report)

    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    sys.exit(main())
