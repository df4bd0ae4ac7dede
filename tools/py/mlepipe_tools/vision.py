"""Image-data diagnostics: a folder of images (class subfolders give labels) or a table naming image files."""

import hashlib
import os
import re

import numpy as np
import pandas as pd
from scipy import stats

from .common import ToolError, answer, need_columns, read_table, read_text, rnd, tool, workspace_path

EXTS = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")


def image_list(path, image_column=None, label_column=None, limit=None):
    """[(file, label or None)]: from a folder (a subfolder's name is its files' label) or from a table's column."""
    full = workspace_path(path)
    out = []
    if os.path.isdir(full):
        for root, _, files in sorted(os.walk(full)):
            for f in sorted(files):
                if f.lower().endswith(EXTS):
                    rel = os.path.relpath(root, full)
                    out.append((os.path.join(root, f), None if rel == "." else rel.split(os.sep)[0]))
    else:
        df = read_table(path)
        col = image_column or next(
            (c for c in df.columns if df[c].astype(str).str.lower().str.endswith(EXTS).mean() > 0.5), None
        )
        if col is None:
            raise ToolError(f"{path}: no column of image file names; name it with image_column")
        need_columns(df, [col] + ([label_column] if label_column else []), path)
        base = os.path.dirname(full)
        for _, r in df.iterrows():
            out.append((os.path.join(base, str(r[col])), r[label_column] if label_column else None))
    if not out:
        raise ToolError(f"{path}: no images found")
    return out[:limit] if limit else out


def open_image(f):
    from PIL import Image

    return Image.open(f)


def pixels(files, limit):
    """Per-image arrays scaled as stored (0-255 for 8-bit), channels last."""
    arrs = []
    for f, _ in files[:limit]:
        try:
            im = open_image(f)
            a = np.asarray(im if im.mode in ("L", "RGB") else im.convert("RGB"), dtype=float)
        except Exception:
            continue
        arrs.append(a if a.ndim == 3 else a[..., None])
    if not arrs:
        raise ToolError("no readable images")
    return arrs


def channel_stats(arrs):
    flat = np.concatenate([a.reshape(-1, a.shape[-1]) for a in arrs if a.shape[-1] == arrs[0].shape[-1]])
    return flat.min(axis=0), flat.max(axis=0), flat.mean(axis=0), flat.std(axis=0)


@tool("class_balance_check")
def class_balance_check(path, label_column=None, image_column=None):
    if not os.path.isdir(workspace_path(path)) and label_column is None:
        raise ToolError(f"{path}: name the label column (label_column)")
    if os.path.isdir(workspace_path(path)):
        labels = [l for _, l in image_list(path)]
    else:
        df = read_table(path)
        need_columns(df, [label_column], path)
        labels = df[label_column].tolist()
    counts = pd.Series([str(l) for l in labels if l is not None]).value_counts()
    if counts.empty:
        raise ToolError(f"{path}: no labels (images are not in class subfolders)")
    ratio = float(counts.iloc[0] / counts.iloc[-1])
    how = "balanced sampling or a class-weighted loss" if ratio >= 3 else "balanced enough"
    return answer(
        f"{len(counts)} classes, {counts.sum()} images, majority/minority {ratio:.2f} ({how})",
        classes=[{"label": k, "count": int(v)} for k, v in counts.items()],
        imbalance_ratio=rnd(ratio),
        suggestion=how,
    )


@tool("image_normalization_stats")
def image_normalization_stats(path, image_column=None, sample=200):
    arrs = pixels(image_list(path, image_column), sample)
    lo, hi, mean, std = channel_stats(arrs)
    if hi.max() > 1.5:
        how = f"pixels are 0-{int(hi.max())}: divide by 255, then normalize with mean {np.round(mean / 255, 3).tolist()} and std {np.round(std / 255, 3).tolist()}"
    else:
        how = f"pixels are already in [0, 1]: normalize with mean {np.round(mean, 3).tolist()} and std {np.round(std, 3).tolist()}"
    return answer(
        f"{len(arrs)} images, {len(mean)} channels, range {lo.min():.0f}-{hi.max():.0f}; {how}",
        images=len(arrs),
        channels=len(mean),
        min=[rnd(v) for v in lo],
        max=[rnd(v) for v in hi],
        mean=[rnd(v) for v in mean],
        std=[rnd(v) for v in std],
        mean_01=[rnd(v / 255) for v in mean] if hi.max() > 1.5 else None,
        std_01=[rnd(v / 255) for v in std] if hi.max() > 1.5 else None,
        suggestion=how,
    )


@tool("image_shape_consistency")
def image_shape_consistency(path, image_column=None):
    shapes = []
    for f, _ in image_list(path, image_column):
        try:
            im = open_image(f)
            shapes.append((f, im.size[0], im.size[1], im.mode))
        except Exception:
            shapes.append((f, None, None, "unreadable"))
    key = pd.Series([f"{w}x{h} {m}" for _, w, h, m in shapes])
    counts = key.value_counts()
    common = counts.index[0]
    odd = [{"file": os.path.basename(f), "shape": k} for (f, *_), k in zip(shapes, key) if k != common][:20]
    return answer(
        f"{len(shapes)} images; most common {common} ({counts.iloc[0]}); {len(key) - counts.iloc[0]} differ"
        + ("" if len(counts) == 1 else ": resize or crop to one size, convert to one mode"),
        images=len(shapes),
        shapes={k: int(v) for k, v in counts.items()},
        most_common=common,
        mismatches=int(len(key) - counts.iloc[0]),
        examples=odd,
    )


def average_hash(f, size=8):
    """64-bit average hash: which pixels of an 8x8 grey thumbnail are above its mean."""
    from PIL import Image

    a = np.asarray(open_image(f).convert("L").resize((size, size), Image.BILINEAR), dtype=float)
    return (a > a.mean()).reshape(-1)


@tool("duplicate_image_detector")
def duplicate_image_detector(path, image_column=None, max_distance=4, limit=3000):
    files = image_list(path, image_column, limit=limit)
    digests, hashes = {}, []
    exact = 0
    for f, _ in files:
        with open(f, "rb") as fh:
            d = hashlib.sha256(fh.read()).hexdigest()
        exact += d in digests
        digests.setdefault(d, f)
        try:
            hashes.append((f, average_hash(f)))
        except Exception:
            continue
    near = []
    if hashes:
        h = np.array([x for _, x in hashes])
        dist = (h[:, None, :] != h[None, :, :]).sum(axis=2)
        for i, j in zip(*np.nonzero(np.triu(dist <= max_distance, k=1))):
            near.append(
                {"a": os.path.basename(hashes[i][0]), "b": os.path.basename(hashes[j][0]), "distance": int(dist[i, j])}
            )
    return answer(
        f"{len(files)} images: {exact} exact duplicates, {len(near)} near-duplicate pairs (average-hash distance <= {max_distance})",
        images=len(files),
        exact_duplicates=exact,
        near_duplicate_pairs=len(near),
        examples=near[:20],
    )


@tool("corrupt_image_detector")
def corrupt_image_detector(path, image_column=None):
    bad = []
    files = image_list(path, image_column)
    for f, _ in files:
        try:
            with open_image(f) as im:
                im.verify()
            with open_image(f) as im:
                im.load()
        except Exception as e:
            bad.append({"file": os.path.relpath(f), "error": f"{type(e).__name__}: {e}"[:200]})
    return answer(
        f"{len(bad)} of {len(files)} images unreadable or corrupt"
        + (f": {', '.join(os.path.basename(b['file']) for b in bad[:5])}" if bad else ""),
        images=len(files),
        corrupt=len(bad),
        files=bad[:50],
    )


AUGMENTATIONS = [
    "RandomHorizontalFlip",
    "RandomVerticalFlip",
    "RandomCrop",
    "RandomResizedCrop",
    "RandomRotation",
    "ColorJitter",
    "RandomAffine",
    "RandomErasing",
    "AutoAugment",
    "RandAugment",
    "TrivialAugmentWide",
    "GaussianBlur",
    "RandomGrayscale",
    "Mixup",
    "CutMix",
    "MixUp",
]
OTHER = ["Normalize", "ToTensor", "Resize", "CenterCrop"]
STANDARDIZE = re.compile(r"-\s*[^/\n]*mean[^/\n]*\)\s*/\s*[^\n]*std|StandardScaler", re.IGNORECASE)


@tool("augmentation_auditor")
def augmentation_auditor(path):
    """Static scan of a training script: which transforms it names, and common ones it does not."""
    src = read_text(path)
    found = [
        {"transform": t, "lines": [i + 1 for i, l in enumerate(src.splitlines()) if re.search(rf"\b{t}\b", l)]}
        for t in AUGMENTATIONS + OTHER
        if re.search(rf"\b{t}\b", src)
    ]
    names = {f["transform"] for f in found}
    aug = [t for t in names if t in AUGMENTATIONS]
    suggest = (
        [t for t in ("RandomHorizontalFlip", "RandomCrop", "ColorJitter") if t not in names] if len(aug) < 2 else []
    )
    # Scripts without torchvision standardize by hand: `(X - MEAN) / STD`, `(X - X.mean(0)) / X.std(0)`, a StandardScaler.
    by_hand = [i + 1 for i, l in enumerate(src.splitlines()) if STANDARDIZE.search(l)]
    if by_hand:
        found.append({"transform": "standardization (by hand)", "lines": by_hand})
    notes = []
    if "Normalize" not in names and not by_hand:
        notes.append("no Normalize and no mean/std standardization: inputs are not standardized")
    text = (
        f"augmentations: {', '.join(sorted(aug)) or 'none'}"
        + (f"; consider {', '.join(suggest)} (if they keep labels valid)" if suggest else "")
        + ("; " + "; ".join(notes) if notes else "")
    )
    return answer(text, transforms=found, augmentations=sorted(aug), suggested=suggest, notes=notes)


@tool("train_test_distribution_shift")
def train_test_distribution_shift(train, test, image_column=None, sample=200):
    a = pixels(image_list(train, image_column), sample)
    b = pixels(image_list(test, image_column), sample)
    _, _, ma, sa = channel_stats(a)
    _, _, mb, sb = channel_stats(b)
    bright = stats.ks_2samp([x.mean() for x in a], [x.mean() for x in b])
    diff = np.abs(ma - mb) / np.maximum(sa, 1e-9)
    shifted = bool(bright.pvalue < 0.01 or diff.max() > 0.25)
    return answer(
        f"channel means train {np.round(ma, 1).tolist()} vs test {np.round(mb, 1).tolist()} (max shift {diff.max():.2f} std); per-image brightness KS p {bright.pvalue:.3g}: {'shifted' if shifted else 'no clear shift'}",
        train_mean=[rnd(v) for v in ma],
        test_mean=[rnd(v) for v in mb],
        train_std=[rnd(v) for v in sa],
        test_std=[rnd(v) for v in sb],
        mean_shift_in_std=[rnd(v) for v in diff],
        brightness_ks=rnd(bright.statistic),
        brightness_pvalue=rnd(bright.pvalue, 8),
        shifted=shifted,
    )


@tool("per_class_accuracy_breakdown")
def per_class_accuracy_breakdown(predictions, labels, id_column="id", prediction_column=None, label_column=None):
    from sklearn.metrics import confusion_matrix

    p, t = read_table(predictions), read_table(labels)
    pc = prediction_column or [c for c in p.columns if c != id_column][-1]
    lc = label_column or [c for c in t.columns if c != id_column][-1]
    need_columns(p, [id_column, pc], predictions)
    need_columns(t, [id_column, lc], labels)
    m = t[[id_column, lc]].merge(p[[id_column, pc]], on=id_column, suffixes=("_true", "_pred"))
    if m.empty:
        raise ToolError(f"no id of {predictions} is in {labels}")
    yt, yp = m.iloc[:, 1].astype(str), m.iloc[:, 2].astype(str)
    classes = sorted(set(yt) | set(yp))
    cm = confusion_matrix(yt, yp, labels=classes)
    per = [
        {"label": c, "support": int(cm[i].sum()), "accuracy": rnd(cm[i, i] / cm[i].sum()) if cm[i].sum() else None}
        for i, c in enumerate(classes)
    ]
    conf = sorted(
        (
            {"true": classes[i], "predicted": classes[j], "count": int(cm[i, j])}
            for i in range(len(classes))
            for j in range(len(classes))
            if i != j and cm[i, j]
        ),
        key=lambda x: -x["count"],
    )
    worst = min((r for r in per if r["accuracy"] is not None), key=lambda r: r["accuracy"])
    return answer(
        f"overall accuracy {float((yt == yp).mean()):.3f} on {len(m)} matched ids; worst class {worst['label']} ({worst['accuracy']})"
        + (f"; most confused {conf[0]['true']}->{conf[0]['predicted']} ({conf[0]['count']})" if conf else ""),
        accuracy=rnd((yt == yp).mean()),
        matched=len(m),
        per_class=per,
        confusions=conf[:20],
    )
