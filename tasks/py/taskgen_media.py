# Part of generate_task_env.py (see taskgen_core.py); concatenated in the order of TASKGEN_PARTS.
import math
import os
import wave

import numpy as np
import pandas as pd


def gen_image(spec, out):
    from PIL import Image, ImageDraw, ImageFilter

    rng = rng_for(spec, 2)
    n, s = spec["n_train"] + spec["n_test"], spec["image_size"]
    # Latent z per image: count of marks, their size, brightness, orientation, colour balance.
    # The rule reads count, size, brightness and colour; orientation only varies (a nuisance).
    z = rng.normal(0, 1, (n, 5))
    rule = draw_rule(rng, 4)
    f_clean = apply_rule(rule, z[:, [0, 1, 2, 4]])
    y, oracle = labels_from(spec, rng, f_clean, spec["noise"])
    os.makedirs(os.path.join(out, "public", "images"), exist_ok=True)
    pixels = []
    for i in range(n):
        count = int(np.clip(4 + 2.5 * z[i, 0], 1, 10))
        size = max(2, int(s * (0.13 + 0.05 * z[i, 1])))
        bg = int(np.clip(120 + 50 * z[i, 2], 10, 245))
        angle = float(z[i, 3]) * 0.8
        red = float(1 / (1 + math.exp(-z[i, 4])))
        img = Image.new("RGB", (s, s), (bg, bg, bg))
        d = ImageDraw.Draw(img)
        for _ in range(count):
            cx, cy = rng.uniform(size, s - size, 2)
            colour = (int(255 * red), int(80 + 100 * (1 - red)), int(255 * (1 - red)))
            dx, dy = size * math.cos(angle), size * math.sin(angle)
            d.line([(cx - dx, cy - dy), (cx + dx, cy + dy)], fill=colour, width=max(1, size // 3))
            d.ellipse([cx - size / 3, cy - size / 3, cx + size / 3, cy + size / 3], outline=colour)
        arr = np.asarray(img, dtype=np.float64)
        m = mutation(spec, "rotation")
        if m:
            img = img.rotate(float(rng.uniform(-m["degrees"], m["degrees"])), fillcolor=(bg, bg, bg))
        m = mutation(spec, "blur")
        if m:
            img = img.filter(ImageFilter.GaussianBlur(radius=float(m["radius"]) * float(rng.uniform(0.3, 1.0))))
        arr = np.asarray(img, dtype=np.float64)
        m = mutation(spec, "contrast_shift")
        if m:
            arr = np.clip((arr - 128) * float(rng.uniform(m["low"], m["high"])) + 128, 0, 255)
        m = mutation(spec, "occlusion")
        if m:
            w = int(s * m["fraction"])
            x0, y0 = rng.integers(0, s - w + 1, 2)
            arr[y0 : y0 + w, x0 : x0 + w] = 0
        m = mutation(spec, "salt_and_pepper")
        if m:
            mask = rng.random((s, s))
            arr[mask < m["amount"] / 2] = 0
            arr[mask > 1 - m["amount"] / 2] = 255
        img = Image.fromarray(arr.astype(np.uint8))
        img.save(os.path.join(out, "public", "images", f"{spec['ids'][i]}.png"), optimize=False)
        # What a simple pipeline would use: colour statistics and the image shrunk to 8x8 grey.
        rgb = np.asarray(img, dtype=np.float64) / 255.0
        grey = rgb.mean(axis=2)
        ink = float(np.mean(np.abs(grey - np.median(grey)) > 0.08))  # share of pixels off the background
        stats = np.concatenate([rgb.mean(axis=(0, 1)), rgb.std(axis=(0, 1)), [ink, float(np.median(grey))]])
        pixels.append(
            np.concatenate([stats, np.asarray(img.convert("L").resize((8, 8)), dtype=np.float64).ravel() / 255.0])
        )
    df = pd.DataFrame({"image": [f"images/{spec['ids'][i]}.png" for i in range(n)]})
    return df, y, oracle, rule, np.stack(pixels)


def gen_audio(spec, out):
    rng = rng_for(spec, 4)
    n = spec["n_train"] + spec["n_test"]
    rate, secs = spec["sample_rate"], spec["seconds"]
    t = np.arange(int(rate * secs)) / rate
    z = rng.normal(0, 1, (n, 4))
    rule = draw_rule(rng, 4)
    f_clean = apply_rule(rule, z)
    y, oracle = labels_from(spec, rng, f_clean, spec["noise"])
    os.makedirs(os.path.join(out, "public", "audio"), exist_ok=True)
    feats = []
    for i in range(n):
        f0 = 300 * 2 ** (0.5 * z[i, 0])
        am = 3 + 2 * abs(z[i, 1])
        harm = 1 / (1 + math.exp(-z[i, 2]))
        decay = 1 + abs(z[i, 3]) * 3
        m = mutation(spec, "pitch_shift")
        if m:
            f0 *= 2 ** (float(rng.uniform(-m["semitones"], m["semitones"])) / 12)
        x = (
            (np.sin(2 * np.pi * f0 * t) + harm * np.sin(4 * np.pi * f0 * t))
            * (0.6 + 0.4 * np.sin(2 * np.pi * am * t))
            * np.exp(-decay * t)
        )
        m = mutation(spec, "time_shift")
        if m:
            x = np.roll(x, int(rng.integers(0, int(m["max_fraction"] * len(x)) + 1)))
        m = mutation(spec, "noise")
        if m:
            x = x + rng.normal(0, m["std"], len(x))
        m = mutation(spec, "gain")
        if m:
            x = x * float(rng.uniform(m["low"], m["high"]))
        m = mutation(spec, "clipping")
        if m:
            x = np.clip(x, -m["level"], m["level"])
        x = np.clip(x / 2.5, -1, 1)
        pcm = (x * 32767).astype("<i2")
        with wave.open(os.path.join(out, "public", "audio", f"{spec['ids'][i]}.wav"), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(pcm.tobytes())
        spectrum = np.abs(np.fft.rfft(pcm.astype(float)))
        bins = np.array_split(spectrum, 32)
        feats.append(np.log1p([b.mean() for b in bins]))
    df = pd.DataFrame({"audio": [f"audio/{spec['ids'][i]}.wav" for i in range(n)]})
    return df, y, oracle, rule, np.stack(feats)
