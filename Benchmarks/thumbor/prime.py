"""Asks a server once for each of the warm workload's 200 URLs (spelled as
requests.lua spells them), four at a time, and fails unless every answer is
a 200 image.

    python prime.py BASE SERVER FORMAT ORIGIN FILES
"""

import sys
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def path(server: str, fmt: str, origin: str, files: int, k: int) -> str:
    source = f"http://{origin}/s/1024/{k % files}/warm-{k}.jpg"
    if server == "thumbor":
        return f"/unsafe/fit-in/256x256/filters:format({fmt}):quality(80)/{source[len('http://'):]}"
    return f"/unsafe/w:256/h:256/f:{fmt}/q:80/plain/{urllib.parse.quote(source, safe='')}"


def main() -> None:
    base, server, fmt, origin, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

    def fetch(k: int) -> str:
        try:
            with urllib.request.urlopen(base + path(server, fmt, origin, files, k), timeout=60) as response:
                response.read()
                return f"{response.status} {response.headers.get('Content-Type')}"
        except Exception as error:  # report every failure, not the first
            return str(error)

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(fetch, range(200)))
    wrong = [a for a in answers if a != f"200 image/{fmt}"]
    if wrong:
        sys.exit(f"prime: {len(wrong)} of 200 failed, e.g. {wrong[0]}")


if __name__ == "__main__":
    main()
