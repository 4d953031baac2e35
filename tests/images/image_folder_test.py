#!/usr/bin/python3
"""data.image_folder against Pillow: folders of JPEG and PNG files
written by Pillow, decoded by drun (libjpeg-turbo, libpng) through its
pipeline (tests/images/pipeline_dump.cpp) and through build/drun.

Checks: PNG pixels exact and JPEG within tolerance of Pillow's decode; labels
from sorted class folders; eval resize + centre crop against Pillow's
resize(BILINEAR) + crop; training crops the same for the same seed and epoch,
different across epochs and seeds, whatever the thread count; 2 shards
disjoint and complete; bad folders and bad files refused with their path.
Usage: image_folder_test.py PIPELINE_DUMP DRUN VENV_PYTHON SOURCE_ROOT"""
import io
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from testlib import check, run, summary, temp_dir  # noqa: E402

DUMP, DRUN, VENV_PY, ROOT = (os.path.abspath(a) for a in sys.argv[1:5])

try:
    import numpy as np
    from PIL import Image
except ImportError:
    # Run again by the venv's Python (its bin/python may be a link to this one).
    if os.environ.get("DRUN_IMAGE_TEST_IN_VENV"):
        sys.exit("FAIL: the venv has no Pillow or NumPy: run tools/python_env")
    if not os.path.exists(VENV_PY):
        sys.exit(f"FAIL: no {VENV_PY}: run tools/python_env (tools/bootstrap does) to create it")
    os.environ["DRUN_IMAGE_TEST_IN_VENV"] = "1"
    os.execv(VENV_PY, [VENV_PY, os.path.abspath(__file__)] + sys.argv[1:])


def dump(options, ops=None, epoch=0):
    """The epoch's examples and labels, or (None, stderr) on a refusal."""
    with temp_dir("image_dump") as tmp:
        out = os.path.join(tmp, "out")
        p = run([DUMP, json.dumps(options), json.dumps(ops or []), str(epoch), out], timeout=120)
        if p.returncode != 0:
            return None, p.stderr
        info = json.loads(p.stdout)
        x = np.fromfile(out + ".x", dtype=np.float32).reshape(info["shape"])
        y = np.fromfile(out + ".y", dtype=np.int32)
        return x, y


def smooth_image(rng, w, h):
    """Gradients plus a little noise: content JPEG keeps well."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    a = rng.uniform(0.2, 1.0, size=3)
    img = np.stack([(xx / w) * 200 * a[0] + 20, (yy / h) * 200 * a[1] + 30,
                    ((xx + yy) / (w + h)) * 180 * a[2] + 40], axis=-1)
    img += rng.normal(0, 3, size=img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def save(arr, path, **kw):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(arr).save(path, **kw)


def rgb(path):
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.float32)


def test_pixels_and_labels(root, rng):
    d = os.path.join(root, "small")
    files = {}  # path -> class index; classes sort as b_cat, dog, zebra
    for cls, label in (("dog", 1), ("b_cat", 0), ("zebra", 2)):
        for i in range(3):
            arr = rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
            p = os.path.join(d, cls, f"img{i}.png")
            save(arr, p)
            files[p] = label
    # Other PNG kinds: palette, grayscale, RGBA (alpha dropped, as convert('RGB')).
    pal = Image.fromarray(rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)).quantize(16)
    pal.save(os.path.join(d, "dog", "palette.png"))
    files[os.path.join(d, "dog", "palette.png")] = 1
    save(rng.integers(0, 256, size=(6, 8), dtype=np.uint8), os.path.join(d, "zebra", "gray.PNG"))
    files[os.path.join(d, "zebra", "gray.PNG")] = 2
    save(rng.integers(0, 256, size=(6, 8, 4), dtype=np.uint8), os.path.join(d, "b_cat", "sub", "rgba.png"))
    files[os.path.join(d, "b_cat", "sub", "rgba.png")] = 0
    # JPEGs (also in a nested folder, found recursively as ImageFolder does).
    for cls, label in (("dog", 1), ("zebra", 2)):
        p = os.path.join(d, cls, "deep", "photo.jpg")
        save(smooth_image(rng, 8, 6), p, quality=95)
        files[p] = label
    # CMYK (Pillow writes Adobe's inverted CMYK) comes out as Pillow's RGB.
    p = os.path.join(d, "zebra", "cmyk.jpg")
    Image.fromarray(smooth_image(rng, 8, 6)).convert("CMYK").save(p, quality=95)
    files[p] = 2
    # Ignored: hidden folders and files, other extensions.
    save(rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8), os.path.join(d, "dog", ".hidden", "x.png"))
    save(rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8), os.path.join(d, ".git", "x", "y.png"))
    with open(os.path.join(d, "dog", "notes.txt"), "w") as f:
        f.write("not an image\n")

    x, y = dump({"dir": d, "size": [6, 8], "crop_fraction": 1.0}, [{"op": "batch", "size": 4}])
    order = sorted(files, key=lambda p: (files[p], p))
    check(x is not None and x.shape == (len(order), 6, 8, 3),
          f"eval batches hold every image once, shape (N, 6, 8, 3): {None if x is None else x.shape}")
    if x is None:
        print(y)
        return
    check(list(y) == [files[p] for p in order], f"labels are the sorted class folders' indices: {list(y)}")
    png_ok = all(np.array_equal(x[i], rgb(p)) for i, p in enumerate(order) if p.lower().endswith(".png"))
    check(png_ok, "PNG pixels (RGB, palette, grayscale, RGBA) equal Pillow's exactly")
    jpeg = [(i, p) for i, p in enumerate(order) if p.endswith(".jpg")]
    err = max(float(np.abs(x[i] - rgb(p)).max()) for i, p in jpeg)
    check(err <= 2.0, f"JPEG pixels within 2 of Pillow's decode (max |diff| {err})")


def reference_eval(path, h, w, fraction=0.875):
    """torchvision's Resize(int(size / fraction)) + CenterCrop(size), on PIL."""
    img = Image.open(path).convert("RGB")
    W, H = img.size
    ch, cw = int(h / fraction + 1e-9), int(w / fraction + 1e-9)
    if ch / H >= cw / W:
        nh, nw = ch, int(ch * W / H)
    else:
        nw, nh = cw, int(cw * H / W)
    img = img.resize((nw, nh), Image.BILINEAR)
    top, left = int(round((nh - h) / 2.0)), int(round((nw - w) / 2.0))
    return np.asarray(img.crop((left, top, left + w, top + h)), dtype=np.float32)


def test_eval_resize(root, rng):
    d = os.path.join(root, "eval")
    paths = []
    for i, (w, h) in enumerate([(200, 150), (150, 210), (97, 97)]):
        p = os.path.join(d, "a", f"p{i}.png")
        arr = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
        save(arr, p)
        paths.append(p)
    for size in ([64, 64], [48, 80]):
        x, _ = dump({"dir": d, "size": size}, [{"op": "batch", "size": 8}])
        errs = [float(np.abs(x[i] - reference_eval(p, *size)).max()) for i, p in enumerate(paths)]
        check(max(errs) <= 1.5, f"eval resize + centre crop {size} within 1.5 of Pillow's (max {max(errs):.3f})")
    # A JPEG big enough to be decoded at 1/4 (libjpeg's scaled IDCT).
    dj = os.path.join(root, "eval_jpeg")
    p = os.path.join(dj, "a", "big.jpg")
    save(smooth_image(rng, 640, 480), p, quality=92)
    x, _ = dump({"dir": dj, "size": [64, 64]}, [{"op": "batch", "size": 1}])
    diff = np.abs(x[0] - reference_eval(p, 64, 64))
    check(float(diff.mean()) <= 2.0 and float(diff.max()) <= 16.0,
          f"eval of a large JPEG close to Pillow's (mean |diff| {diff.mean():.2f}, max {diff.max():.1f})")


def test_training_crops(root, rng):
    d = os.path.join(root, "train")
    for i in range(12):
        # Left dark, right bright: the sign of a crop's horizontal gradient shows a flip.
        arr = np.tile(np.linspace(0, 255, 120, dtype=np.float64)[None, :, None], (90, 1, 3))
        arr[..., 1] = i * 20  # green tells images apart
        save(arr.astype(np.uint8), os.path.join(d, f"c{i % 3}", f"i{i:02d}.png"))
    opts = {"dir": d, "size": [32, 32], "augment": True, "seed": 7, "threads": 1}
    ops = [{"op": "batch", "size": 5}]
    a, ya = dump(opts, ops, epoch=0)
    b, _ = dump(dict(opts, threads=3), ops, epoch=0)
    check(np.array_equal(a, b), "training crops: the same seed and epoch give the same images on 1 and 3 threads")
    c, _ = dump(opts, ops, epoch=1)
    check(not np.array_equal(a, c), "training crops differ from one epoch to the next")
    e, _ = dump(dict(opts, seed=8), ops, epoch=0)
    check(not np.array_equal(a, e), "training crops differ with the seed")
    # Shuffled and in other batches, each example keeps its crop in an epoch.
    s, ys = dump(opts, [{"op": "shuffle", "seed": 3}, {"op": "batch", "size": 4}], epoch=0)
    green = lambda t: np.rint(t[..., 1].mean(axis=(1, 2)) / 20).astype(int)
    same = all(np.array_equal(s[k], a[list(green(a)).index(g)]) for k, g in enumerate(green(s)))
    check(same, "an example's crop depends on the epoch and the example, not its place in the order")
    grad = np.concatenate([x[..., 0][:, :, -4:].mean(axis=(1, 2)) - x[..., 0][:, :, :4].mean(axis=(1, 2))
                           for x in (a, c, e)])
    flipped = int((grad < 0).sum())
    check(4 <= flipped <= len(grad) - 4, f"about half the crops are flipped ({flipped} of {len(grad)})")
    check(a.min() >= 0 and a.max() <= 255, "values stay in 0..255")
    n, _ = dump(dict(opts, flip=False), ops, epoch=0)
    check(bool((n[..., 0][:, :, -4:].mean(axis=(1, 2)) > n[..., 0][:, :, :4].mean(axis=(1, 2))).all()),
          "flip = false flips nothing")


def test_shards(root, rng):
    d = os.path.join(root, "shards")
    for i in range(11):
        save(np.full((5, 7, 3), (i * 23 % 256, i, 255 - i), dtype=np.uint8),
             os.path.join(d, f"k{i % 2}", f"{i:02d}.png"))
    seen = []
    for index in (0, 1):
        ops = [{"op": "shuffle", "seed": 5}, {"op": "shard", "count": 2, "index": index, "even": False},
               {"op": "batch", "size": 3}]
        x, y = dump({"dir": d, "size": [5, 7], "crop_fraction": 1.0}, ops)
        seen.append([int(round(v)) for v in x[:, 0, 0, 1]])
    both = seen[0] + seen[1]
    check(not set(seen[0]) & set(seen[1]) and sorted(both) == list(range(11)),
          f"2 shards are disjoint and cover all 11 images: {seen}")


def expect_refusal(options, needle, what):
    x, err = dump(options, [{"op": "batch", "size": 2}])
    ok = x is None and needle in err
    err = err if x is None else "accepted"
    check(ok, f"{what}: refused naming {needle} ({(err or '').strip()[:160]})")


def test_bad_inputs(root, rng):
    missing = os.path.join(root, "nowhere")
    expect_refusal({"dir": missing, "size": 8}, missing, "a missing dir")
    empty = os.path.join(root, "empty")
    os.makedirs(empty)
    expect_refusal({"dir": empty, "size": 8}, empty, "a dir without class folders")
    noimg = os.path.join(root, "noimg")
    os.makedirs(os.path.join(noimg, "cls"))
    with open(os.path.join(noimg, "cls", "readme.txt"), "w") as f:
        f.write("x")
    expect_refusal({"dir": noimg, "size": 8}, os.path.join(noimg, "cls"), "a class folder without images")
    # Bad files: each alone in a folder with one good image, found when its batch is made.
    good = smooth_image(rng, 16, 12)
    bads = {
        "random.jpg": bytes(rng.integers(0, 256, size=500, dtype=np.uint8)),
        "empty.png": b"",
        "text.png": b"this is not a png\n",
    }
    buf = io.BytesIO()
    Image.fromarray(smooth_image(rng, 64, 48)).save(buf, format="JPEG", quality=90)
    bads["truncated.jpg"] = buf.getvalue()[: len(buf.getvalue()) // 2]
    # A JPEG start marker, then garbage where the headers should be.
    bads["garbled.jpeg"] = b"\xff\xd8\xff\xdb" + bytes(rng.integers(0, 256, size=400, dtype=np.uint8))
    buf = io.BytesIO()
    Image.fromarray(good).save(buf, format="PNG")
    bads["truncated.png"] = buf.getvalue()[: len(buf.getvalue()) - 30]
    for name, content in bads.items():
        d = os.path.join(root, "bad_" + name.replace(".", "_"))
        save(good, os.path.join(d, "a", "0good.png"))
        path = os.path.join(d, "a", name)
        with open(path, "wb") as f:
            f.write(content)
        expect_refusal({"dir": d, "size": 8}, path, f"a bad file ({name})")
    expect_refusal({"dir": empty, "size": [8]}, "size", "size {8}")
    expect_refusal({"dir": empty, "size": 8, "crop_scale": [0.5, 2]}, "crop_scale", "crop_scale above 1")


def test_through_drun(root, rng):
    d = os.path.join(root, "lua")
    for i in range(12):
        arr = np.full((10, 12, 3), 40 if i % 2 else 210, dtype=np.uint8)
        save(arr, os.path.join(d, "bright" if i % 2 == 0 else "dark", f"{i}.png"))
    script = os.path.join(root, "fit.lua")
    with open(script, "w") as f:
        f.write("""
local drun = require 'drun'
local nn, data = drun.nn, drun.data
local opt = drun.args{dir = '', n = 12}
local train = data.image_folder{dir = opt.dir, size = {8, 8}, augment = true, seed = 1, threads = 2}
assert(train:size() == opt.n, 'size ' .. train:size())
local shape = train:shape()
assert(shape[1] == 8 and shape[2] == 8 and shape[3] == 3, 'shape')
local model = nn.Sequential{nn.Flatten{input_shape = {8, 8, 3}}, nn.Dense{units = 2}, seed = 1}
model:compile{optimizer = drun.optim.SGD{learning_rate = 0.5},
              loss = drun.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {'accuracy'}}
model:fit{x = train:shuffle(1):batch(4):prefetch(2), epochs = 8}
local m = model:evaluate(data.image_folder{dir = opt.dir, size = {8, 8}}:batch(6))
print('ACCURACY ' .. m.accuracy)
""")
    p = run([DRUN, script, "--dir", d], timeout=120, cwd=root, env=dict(os.environ, DRUN_THREADS="1"))
    acc = [l for l in p.stdout.splitlines() if l.startswith("ACCURACY")]
    check(p.returncode == 0 and acc and float(acc[0].split()[1]) == 1.0,
          f"build/drun trains on an image folder (exit {p.returncode}, {acc}) {p.stderr[-600:]}")
    bad = os.path.join(d, "dark", "zz_corrupt.jpg")
    with open(bad, "wb") as f:
        f.write(b"\xff\xd8\xff\xe0 definitely not a jpeg")
    p = run([DRUN, script, "--dir", d, "--n", "13"], timeout=120, cwd=root,
            env=dict(os.environ, DRUN_THREADS="1"))
    check(p.returncode != 0 and bad in p.stderr + p.stdout and "Traceback" not in p.stderr,
          f"a corrupt file stops build/drun with its path (exit {p.returncode}): {p.stderr.strip()[-300:]}")
    missing = os.path.join(root, "missing_dir")
    p = run([DRUN, script, "--dir", missing], timeout=60, cwd=root)
    check(p.returncode != 0 and missing in p.stderr, f"a missing dir: exit {p.returncode}, {p.stderr.strip()[-200:]}")


def main():
    rng = np.random.default_rng(19)
    with temp_dir("image_folder") as root:
        test_pixels_and_labels(root, rng)
        test_eval_resize(root, rng)
        test_training_crops(root, rng)
        test_shards(root, rng)
        test_bad_inputs(root, rng)
        test_through_drun(root, rng)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
