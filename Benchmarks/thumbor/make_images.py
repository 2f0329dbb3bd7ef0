"""Writes photo-like JPEGs (q85) for thumbor-compare.sh: smooth colour
gradients, blurred shapes and fine colour noise, which is what makes a photo
expensive to code (sizes near 215 KB at 1024x768 and 3 MB at 4000x3000).

    python make_images.py FOLDER COUNT WIDTH HEIGHT

Deterministic: image N of a size is the same on every machine.
"""

import random
import sys
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter


def photo_like(index: int, width: int, height: int) -> Image.Image:
    rng = random.Random(f"{width}x{height}/{index}")
    # Two-colour gradients, one horizontal and one radial, mixed.
    horizontal = Image.linear_gradient("L").rotate(rng.choice([0, 90, 180, 270])).resize((width, height))
    radial = Image.radial_gradient("L").resize((width, height))
    colours = [tuple(rng.randrange(256) for _ in range(3)) for _ in range(4)]
    base = Image.composite(Image.new("RGB", (width, height), colours[0]),
                           Image.new("RGB", (width, height), colours[1]), horizontal)
    glow = Image.composite(Image.new("RGB", (width, height), colours[2]),
                           Image.new("RGB", (width, height), colours[3]), radial)
    image = Image.blend(base, glow, 0.4)
    # Shapes with soft edges, as objects out of focus.
    shapes = image.copy()
    draw = ImageDraw.Draw(shapes)
    scale = width / 1024
    for _ in range(40):
        x, y = rng.randrange(width), rng.randrange(height)
        r = int(rng.randrange(20, 160) * scale)
        fill = tuple(rng.randrange(256) for _ in range(3))
        if rng.random() < 0.5:
            draw.ellipse((x - r, y - r, x + r, y + r), fill=fill)
        else:
            draw.polygon([(x + rng.randrange(-2 * r, 2 * r), y + rng.randrange(-2 * r, 2 * r)) for _ in range(5)], fill=fill)
    shapes = shapes.filter(ImageFilter.GaussianBlur(2 * scale))
    image = Image.blend(image, shapes, 0.7)
    # Fine colour noise (sensor grain, texture): most of a photo's bytes.
    noise = Image.merge("RGB", [Image.effect_noise((width, height), 24) for _ in range(3)])
    noise = noise.filter(ImageFilter.GaussianBlur(0.6))
    return ImageChops.add(image, noise, scale=1.0, offset=-128)


def main() -> None:
    folder, count, width, height = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        path = folder / f"{index}.jpg"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            photo_like(index, width, height).save(tmp, "JPEG", quality=85)
            tmp.rename(path)


if __name__ == "__main__":
    main()
