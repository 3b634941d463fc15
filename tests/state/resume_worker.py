"""A training-like loop for the SIGKILL resume test: consumes a pipeline, logs every element id it
delivered, and checkpoints (iterator state + number of ids logged) every few steps, atomically."""

from __future__ import annotations

import json
import os
import sys
import time

import headrace as hr

N = 3000


def pipelines() -> dict:
    return {
        "shuffle_map_batch": lambda: (
            hr.Dataset.range(N).filter(lambda x: True).shuffle(200, seed=3).map(lambda x: x * 1).batch(7)
        ),
        "index_shuffle": lambda: hr.Dataset.range(N).shuffle(500, seed=4).batch(5),
        "global_shuffle": lambda: hr.Dataset.range(N).global_shuffle(seed=5).batch(9),
    }


def main(kind: str, workdir: str, every: int) -> None:
    checkpoint = os.path.join(workdir, "checkpoint.json")
    log_path = os.path.join(workdir, "delivered.log")
    it = iter(pipelines()[kind]())
    logged = 0
    if os.path.exists(checkpoint):
        with open(checkpoint) as f:
            saved = json.load(f)
        it.set_state(saved["iterator"])
        logged = saved["logged"]
    # Elements delivered after the last checkpoint are rolled back with the "model": drop their log lines.
    # The shortened log replaces the old one atomically, so a kill during the rewrite loses no line that
    # a checkpoint already counts (an in-place truncate-then-write did, and the test blamed the pipeline).
    lines = open(log_path).read().splitlines()[:logged] if os.path.exists(log_path) else []
    with open(log_path + ".tmp", "w") as f:
        f.write("".join(line + "\n" for line in lines))
        f.flush()
        os.fsync(f.fileno())
    os.replace(log_path + ".tmp", log_path)
    with open(log_path, "a") as log:
        step = 0
        for batch in it:
            time.sleep(0.003)  # the training step
            log.write("".join(f"{int(x)}\n" for x in batch))
            log.flush()
            logged += len(batch)
            step += 1
            if step % every == 0:
                tmp = checkpoint + ".tmp"
                with open(tmp, "w") as f:
                    json.dump({"iterator": it.get_state(), "logged": logged}, f)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, checkpoint)
    with open(os.path.join(workdir, "done"), "w") as f:
        f.write("ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
