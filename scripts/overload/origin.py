"""The source origin of scripts/overload.sh: files from a folder, and a
60 MB body streamed on demand. Standard library only.

    origin.py FOLDER HOST PORT    (PORT 0: the kernel picks; printed)

GET /files/NAME (any query: a distinct query is a distinct source for
imago) answers the file with a long max-age; GET /big/length and
/big/chunked stream 60 MB of JPEG-looking bytes, with a Content-Length or
chunked. Keep-alive, HTTP/1.1.
"""

import asyncio
import os
import sys

BIG = 60 * 1000 * 1000
BLOCK = 64 * 1024
TYPES = {".jpg": "image/jpeg", ".png": "image/png", ".gif": "image/gif"}


class Origin:
    def __init__(self, folder):
        self.files = {}
        for name in os.listdir(folder):
            with open(os.path.join(folder, name), "rb") as f:
                self.files[name] = f.read()
        # SOI, APP0 and then filler: looks like a JPEG until it is too long.
        head = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
        self.block = (head + bytes(range(256)) * (BLOCK // 256))[:BLOCK]

    async def serve(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
                method, target, _ = request_line.split(" ", 2)
                path = target.split("?", 1)[0]
                if path.startswith("/files/") and path[len("/files/"):] in self.files:
                    body = self.files[path[len("/files/"):]]
                    kind = TYPES.get(os.path.splitext(path)[1], "application/octet-stream")
                    writer.write(
                        f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
                        f"Cache-Control: public, max-age=3600\r\n\r\n".encode())
                    if method != "HEAD":
                        writer.write(body)
                    await writer.drain()
                elif path in ("/big/length", "/big/chunked"):
                    chunked = path.endswith("chunked")
                    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {BIG}"
                    writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\n{length}\r\n\r\n".encode())
                    sent = 0
                    while sent < BIG and method != "HEAD":
                        block = self.block[:BIG - sent]
                        writer.write(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
                        await writer.drain()  # raises once imago has hung up
                        sent += len(block)
                    if chunked and method != "HEAD":
                        writer.write(b"0\r\n\r\n")
                    await writer.drain()
                else:
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


async def main():
    folder, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    origin = Origin(folder)
    server = await asyncio.start_server(origin.serve, host, port, backlog=1024)
    print(f"origin: listening on http://{host}:{server.sockets[0].getsockname()[1]}/", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
