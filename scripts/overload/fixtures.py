"""The sources of scripts/overload.sh: photo-like JPEGs for the load, and
the decompression bombs. Runs on Debian's python3 with Pillow
(python3-pil) for the JPEGs; the bombs are written byte by byte.

    fixtures.py FOLDER COUNT
"""

import io
import os
import random
import struct
import sys
import zlib


def photos(folder, count):
    """`count` distinct 1024x768 JPEGs: a gradient under random shapes with
    grain, seeded by the index, so each decodes and resizes like a photo
    and no two are the same."""
    from PIL import Image, ImageChops, ImageDraw, ImageFilter

    size = (1024, 768)
    base = Image.linear_gradient("L").resize(size).convert("RGB")
    grain = Image.merge("RGB", [Image.effect_noise(size, 24) for _ in range(3)])
    for index in range(count):
        rng = random.Random(index)
        image = base.copy()
        draw = ImageDraw.Draw(image)
        for _ in range(30):
            x, y = rng.randrange(size[0]), rng.randrange(size[1])
            box = [x, y, x + rng.randrange(20, 400), y + rng.randrange(20, 300)]
            colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
            (draw.rectangle if rng.random() < 0.5 else draw.ellipse)(box, fill=colour)
        image = image.filter(ImageFilter.GaussianBlur(2))
        image = ImageChops.add(image, grain, scale=1.0, offset=-64)
        image.save(os.path.join(folder, f"photo-{index}.jpg"), quality=88)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bomb(path, side=100_000):
    """A PNG whose header declares `side` x `side` RGB (30 gigapixels): a
    few kilobytes of IDAT, zeros that would inflate to ~1 MB of rows before
    the data runs out. A decoder that trusts the header allocates 30 GB."""
    rows = zlib.compress(b"\0" * (1 + 3 * side) * 4, 9)
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n")
        out.write(chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)))
        out.write(chunk(b"IDAT", rows))
        out.write(chunk(b"IEND", b""))


def jpeg_bomb(path, side=65_500):
    """A small baseline JPEG whose SOF0 is patched to `side` x `side`. A
    JPEG header holds 16-bit dimensions, and libjpeg refuses more than
    65,500, so 100k x 100k cannot be declared: 65,500 x 65,500 (4.3
    gigapixels, 12.9 GB as RGB) is the largest JPEG bomb there is."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), (120, 90, 60)).save(buffer, "JPEG", quality=80)
    data = bytearray(buffer.getvalue())
    index = 2
    while index < len(data):
        marker, length = data[index + 1], struct.unpack(">H", data[index + 2:index + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            data[index + 5:index + 9] = struct.pack(">HH", side, side)  # height, width
            break
        index += 2 + length
    else:
        raise SystemExit("fixtures.py: no SOF marker in Pillow's JPEG")
    open(path, "wb").write(bytes(data))


def gif_bomb(path, frames=10_000, side=1000):
    """An animated GIF of `frames` frames on a `side` x `side` screen, each
    frame one pixel (so the file is ~200 KB): composited, every frame is a
    full 4 MB RGBA canvas, 40 GB for all of them."""
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", side, side, 0xF0, 0, 0)  # global table of 2 colours
    out += b"\x00\x00\x00\xff\xff\xff"
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
    for frame in range(frames):
        out += b"\x21\xf9\x04\x00\x01\x00\x00\x00"  # graphic control: 10 ms
        x, y = frame % side, (frame // side) % side
        out += b"\x2c" + struct.pack("<HHHHB", x, y, 1, 1, 0)
        # LZW, minimum code size 2, 3-bit codes: clear (4), index 0, end (5).
        out += b"\x02\x02\x44\x01\x00"
    out += b"\x3b"
    open(path, "wb").write(bytes(out))


def main():
    folder, count = sys.argv[1], int(sys.argv[2])
    os.makedirs(folder, exist_ok=True)
    photos(folder, count)
    png_bomb(os.path.join(folder, "bomb.png"))
    jpeg_bomb(os.path.join(folder, "bomb.jpg"))
    gif_bomb(os.path.join(folder, "bomb.gif"))


if __name__ == "__main__":
    main()
