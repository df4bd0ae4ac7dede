"""Reads back what a node's training logs hold, for the tests (in .venv/logger).

    python read_logs.py tensorboard DIR   {tag: [[step, value], ...]} from the event files under DIR
    python read_logs.py wandb FILE        {"history": [{...row, "_step": n}], "config": {...}, "run": {...}}
    python read_logs.py runs LOGDIR       {run: {"scalars": [tag, ...], "texts": {tag: text}}}, the runs
                                          `tensorboard --logdir LOGDIR` lists (links followed as it does)

TensorBoard's own EventAccumulator reads the event files. wandb keeps an
offline run in one .wandb file and ships no reader for it: the file is
LevelDB's log format (32 KiB blocks of framed chunks, after wandb's 7-byte
header) holding wandb's Record protobuf messages, decoded here with wandb's
own message classes.
"""

import json
import struct
import sys

BLOCK = 32768
CHUNK_HEADER = 7  # crc32c (4), length (2), type (1)
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def tensorboard(folder):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(folder)
    acc.Reload()
    return {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def runs(logdir):
    from tensorboard.backend.event_processing.plugin_event_multiplexer import EventMultiplexer

    mux = EventMultiplexer()
    mux.AddRunsFromDirectory(logdir)
    mux.Reload()
    out = {}
    # This multiplexer (TensorBoard's own) holds scalars as tensors too: text summaries are the string ones.
    for run, tags in mux.Runs().items():
        acc = mux.GetAccumulator(run)
        scalars, texts = [], {}
        for tag in tags.get("tensors", []):
            proto = acc.Tensors(tag)[-1].tensor_proto
            if proto.string_val:
                texts[tag] = proto.string_val[0].decode()
            else:
                scalars.append(tag)
        out[run] = {"scalars": sorted(scalars), "texts": texts}
    return out


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b":W&B":
        raise SystemExit(f"{path} is not a wandb transaction log")
    pos, pending = 7, b""
    while pos + CHUNK_HEADER <= len(data):
        left = BLOCK - pos % BLOCK
        if left < CHUNK_HEADER:
            pos += left  # a block's tail too short for a header is padding
            continue
        length, kind = struct.unpack_from("<HB", data, pos + 4)
        body = data[pos + CHUNK_HEADER : pos + CHUNK_HEADER + length]
        pos += CHUNK_HEADER + length
        if kind == 0 and length == 0:
            continue
        pending = body if kind in (FULL, FIRST) else pending + body
        if kind in (FULL, LAST):
            yield pending
            pending = b""


def wandb_run(path):
    from wandb.proto import wandb_internal_pb2 as pb

    out = {"history": [], "config": {}, "run": {}}
    for raw in records(path):
        r = pb.Record()
        r.ParseFromString(raw)
        kind = r.WhichOneof("record_type")
        if kind == "history":
            row = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
            out["history"].append(row)
        elif kind == "config":
            out["config"].update({i.key: json.loads(i.value_json) for i in r.config.update})
        elif kind == "run":
            out["run"] = {"project": r.run.project, "display_name": r.run.display_name, "run_group": r.run.run_group}
            out["config"].update({i.key: json.loads(i.value_json) for i in r.run.config.update})
    return out


if __name__ == "__main__":
    what, where = sys.argv[1], sys.argv[2]
    readers = {"tensorboard": tensorboard, "wandb": wandb_run, "runs": runs}
    print(json.dumps(readers[what](where)))
