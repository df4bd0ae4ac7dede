"""Graph diagnostics over an edge list, node features, labels and split indices (files in the workspace)."""

import networkx as nx
import numpy as np
import pandas as pd

from .common import ToolError, answer, read_table, rnd, tool, workspace_path


def load_array(path):
    full = workspace_path(path)
    if full.endswith(".npy"):
        return np.load(full, allow_pickle=False)
    if full.endswith(".npz"):
        with np.load(full, allow_pickle=False) as z:
            return z[z.files[0]]
    if full.endswith((".csv", ".tsv", ".parquet", ".jsonl")):
        return read_table(path).to_numpy()
    return np.loadtxt(full, ndmin=2)


def load_edges(path):
    """An (E, 2) integer array: two columns (or two rows, as edge_index is often stored) of node ids."""
    e = load_array(path)
    if e.ndim == 2 and e.shape[0] == 2 and e.shape[1] != 2:
        e = e.T
    if e.ndim != 2 or e.shape[1] < 2:
        raise ToolError(f"{path}: expected two columns of node ids, got shape {list(e.shape)}")
    return e[:, :2].astype(np.int64)


ID_NAMES = ("node", "node_id", "nodeid", "id", "index", "idx")
TABLES = (".csv", ".tsv", ".parquet", ".jsonl")


def id_column(df):
    """The column naming each row's node: one of the usual names, holding distinct integers. Tables
    written by a pipeline often list nodes in another order than their ids (or only some nodes), so
    rows are not ids."""
    for c in df.columns:
        if str(c).lower() in ID_NAMES and pd.api.types.is_integer_dtype(df[c]) and df[c].is_unique:
            return c
    return None


def load_labels(path, column=None):
    """Labels as a Series indexed by node id: by the table's id column where it has one, else by row."""
    if path.endswith(TABLES):
        df = read_table(path)
        ids = id_column(df)
        col = column or [c for c in df.columns if c != ids][-1]
        if col not in df.columns:
            raise ToolError(f"{path}: no column {col!r}")
        return pd.Series(df[col].to_numpy(), index=df[ids].to_numpy() if ids is not None else np.arange(len(df)))
    return pd.Series(load_array(path).reshape(-1))


def labels_of(y, nodes):
    """The labels of these node ids (NaN where a node has none)."""
    return y.reindex(np.asarray(nodes)).to_numpy()


def load_features(path):
    """Node features as floats, without the table's id column, and that column's name (or None)."""
    if path.endswith(TABLES):
        df = read_table(path)
        ids = id_column(df)
        if ids is not None:
            return df.sort_values(ids).drop(columns=ids).to_numpy(dtype=float), ids
    return load_array(path).astype(float), None


def load_index(path):
    """Node ids of a split: a table's id column (a labels file names its nodes), or every value of an array."""
    if path.endswith(TABLES):
        df = read_table(path)
        return df[id_column(df) or df.columns[0]].to_numpy().astype(np.int64)
    return load_array(path).reshape(-1).astype(np.int64)


def build(edges, nodes=None):
    g = nx.MultiGraph()
    g.add_nodes_from(range(int(nodes if nodes is not None else edges.max() + 1)))
    g.add_edges_from(map(tuple, edges))
    return g


@tool("graph_size_summary")
def graph_size_summary(edges, features=None, num_nodes=None, train_idx=None, val_idx=None, test_idx=None):
    e = load_edges(edges)
    x = load_features(features)[0] if features else None
    n = int(num_nodes or max(int(e.max()) + 1, len(x) if x is not None else 0))
    directed = {tuple(x) for x in e}
    undirected = {tuple(sorted(x)) for x in e if x[0] != x[1]}
    dens = 2 * len(undirected) / (n * (n - 1)) if n > 1 else 0.0
    dim = int(x.shape[1]) if x is not None else None
    splits = {k: int(len(load_index(v))) for k, v in (("train", train_idx), ("val", val_idx), ("test", test_idx)) if v}
    text = (
        f"{n} nodes, {len(e)} edge rows ({len(undirected)} undirected pairs), density {dens:.2e}"
        + (f", {dim} features" if dim else "")
        + "".join(f", {k} {v}" for k, v in splits.items())
    )
    return answer(
        text,
        nodes=n,
        edge_rows=len(e),
        distinct_directed=len(directed),
        undirected_pairs=len(undirected),
        density=rnd(dens, 8),
        feature_dim=dim,
        splits=splits,
    )


@tool("degree_distribution")
def degree_distribution(edges, num_nodes=None, hub_quantile=0.99):
    e = load_edges(edges)
    g = nx.Graph(build(e, num_nodes))
    deg = np.array([d for _, d in g.degree()])
    isolated = int((deg == 0).sum())
    cut = float(np.quantile(deg, hub_quantile))
    hubs = sorted(
        ((int(v), int(d)) for v, d in g.degree() if d > cut and d > 2 * max(np.median(deg), 1)), key=lambda x: -x[1]
    )[:10]
    text = f"degree mean {deg.mean():.2f}, median {np.median(deg):.0f}, max {deg.max()}; {isolated} isolated nodes" + (
        f"; hubs: {', '.join(f'{v} ({d})' for v, d in hubs)}" if hubs else ""
    )
    return answer(
        text,
        mean=rnd(deg.mean()),
        median=rnd(np.median(deg)),
        max=int(deg.max()),
        min=int(deg.min()),
        isolated=isolated,
        hubs=[{"node": v, "degree": d} for v, d in hubs],
        histogram={str(k): int(v) for k, v in zip(*np.unique(deg, return_counts=True))} if deg.max() <= 50 else None,
    )


@tool("node_label_balance")
def node_label_balance(labels, train_idx=None, label_column=None):
    y = load_labels(labels, label_column)
    scope = "training nodes" if train_idx else "all supplied labels"
    if train_idx:
        y = pd.Series(labels_of(y, load_index(train_idx)))
    s = y.dropna()
    counts = s.value_counts()
    ratio = float(counts.iloc[0] / counts.iloc[-1])
    return answer(
        f"{len(counts)} classes over {len(s)} {scope}, majority/minority {ratio:.2f}",
        scope=scope,
        classes=[{"label": str(k), "count": int(v)} for k, v in counts.items()],
        imbalance_ratio=rnd(ratio),
    )


@tool("node_feature_health")
def node_feature_health(features):
    x, ids = load_features(features)
    nonfinite = int((~np.isfinite(x)).sum())
    xf = np.where(np.isfinite(x), x, np.nan)
    zero_rows = int((np.nan_to_num(xf) == 0).all(axis=1).sum())
    std = np.nanstd(xf, axis=0)
    constant = [int(i) for i in np.flatnonzero(std == 0)]
    scale = np.nanmax(np.abs(xf), axis=0)
    spread = float(np.nanmax(std) / max(np.nanmin(std[std > 0]), 1e-12)) if (std > 0).any() else 1.0
    how = "standardize columns (fit on training nodes)" if spread > 100 else "scales comparable"
    text = (
        f"{x.shape[0]} nodes x {x.shape[1]} features"
        + (f" (id column {ids!r} left out)" if ids is not None else "")
        + f": {nonfinite} non-finite values, {zero_rows} all-zero rows, {len(constant)} constant columns, column std ratio {spread:.1f} ({how})"
    )
    return answer(
        text,
        shape=list(x.shape),
        id_column=ids,
        non_finite=nonfinite,
        zero_rows=zero_rows,
        constant_columns=constant[:50],
        std_ratio=rnd(spread),
        max_abs=rnd(np.nanmax(scale)),
        mean_std=rnd(np.nanmean(std)),
        suggestion=how,
    )


@tool("connectivity_components")
def connectivity_components(edges, num_nodes=None):
    g = nx.Graph(build(load_edges(edges), num_nodes))
    sizes = sorted((len(c) for c in nx.connected_components(g)), reverse=True)
    frac = sizes[0] / g.number_of_nodes()
    return answer(
        f"{len(sizes)} connected components; the largest holds {frac:.1%} of {g.number_of_nodes()} nodes",
        components=len(sizes),
        largest=sizes[0],
        largest_fraction=rnd(frac),
        sizes=sizes[:20],
        singletons=sum(1 for s in sizes if s == 1),
    )


@tool("self_loop_duplicate_edge_detector")
def self_loop_duplicate_edge_detector(edges):
    e = load_edges(edges)
    loops = int((e[:, 0] == e[:, 1]).sum())
    pairs = pd.Series(list(map(tuple, e)))
    dups = int(pairs.duplicated().sum())
    directed = set(pairs)
    non_loop = [p for p in directed if p[0] != p[1]]
    reverse = sum(1 for a, b in non_loop if (b, a) in directed)
    cov = reverse / len(non_loop) if non_loop else 1.0
    how = (
        "already symmetric"
        if cov == 1
        else "add reverse edges (to_undirected) if the graph is undirected"
        if cov < 0.5
        else "partly symmetric: check the direction is meant"
    )
    return answer(
        f"{loops} self-loops, {dups} duplicate edges of {len(e)}; reverse-edge coverage {cov:.1%} ({how})",
        self_loops=loops,
        duplicate_edges=dups,
        edge_rows=len(e),
        reverse_coverage=rnd(cov),
        suggestion=how,
    )


@tool("homophily_estimator")
def homophily_estimator(edges, labels, label_column=None):
    e = load_edges(edges)
    y = load_labels(labels, label_column)
    ok = e[:, 0] != e[:, 1]
    a, b = labels_of(y, e[ok, 0]), labels_of(y, e[ok, 1])
    known = pd.notna(a) & pd.notna(b)
    h = float((a[known] == b[known]).mean()) if known.any() else None
    # Same-label share when edges were random: the chance two labelled nodes share a class.
    p = y.dropna().value_counts(normalize=True)
    base = float((p**2).sum())
    reading = (
        "homophilous: neighbourhood aggregation should help"
        if h is not None and h > base + 0.2
        else "weakly homophilous or heterophilous: aggregation may not help"
    )
    return answer(
        f"edge homophily {h:.3f} against {base:.3f} for random edges: {reading}"
        if h is not None
        else "no edge joins two labelled nodes",
        edge_homophily=rnd(h),
        random_baseline=rnd(base),
        edges_used=int(known.sum()),
        reading=reading,
    )


@tool("split_integrity_check")
def split_integrity_check(train_idx, val_idx=None, test_idx=None, labels=None, num_nodes=None, label_column=None):
    idx = {k: load_index(v) for k, v in (("train", train_idx), ("val", val_idx), ("test", test_idx)) if v}
    overlaps = {}
    names = list(idx)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            n = len(np.intersect1d(idx[a], idx[b]))
            if n:
                overlaps[f"{a}/{b}"] = int(n)
    dups = {k: int(len(v) - len(np.unique(v))) for k, v in idx.items() if len(v) != len(np.unique(v))}
    out_of_range = {}
    if num_nodes:
        out_of_range = {
            k: int(((v < 0) | (v >= num_nodes)).sum()) for k, v in idx.items() if ((v < 0) | (v >= num_nodes)).any()
        }
    coverage = {}
    if labels:
        y = load_labels(labels, label_column)
        classes = set(y.dropna().unique().tolist())
        for k, v in idx.items():
            known = pd.Series(labels_of(y, v)).dropna()
            # A split whose labels the file does not hold (a hidden test set) is unlabelled, not short of classes.
            seen = set(known.unique().tolist())
            coverage[k] = {
                "labelled": int(len(known)),
                "classes": len(seen),
                "missing": sorted(map(str, classes - seen)) if len(known) else [],
            }
    problems = (
        [f"overlap {k}: {n}" for k, n in overlaps.items()]
        + [f"duplicates in {k}: {n}" for k, n in dups.items()]
        + [f"{k} out of range: {n}" for k, n in out_of_range.items()]
        + [f"{k} lacks classes {c['missing']}" for k, c in coverage.items() if c["missing"]]
    )
    text = ", ".join(f"{k} {len(v)}" for k, v in idx.items()) + (
        "; " + "; ".join(problems) if problems else "; splits disjoint"
    )
    return answer(
        text,
        sizes={k: int(len(v)) for k, v in idx.items()},
        overlaps=overlaps,
        duplicates=dups,
        out_of_range=out_of_range,
        class_coverage=coverage,
        ok=not problems,
    )
