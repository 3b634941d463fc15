"""One DDP rank (gloo, CPU) trained through headrace.torch; run by test_torch.py as a subprocess.

Usage: python ddp_worker.py RANK WORLD_SIZE PORT OUT_DIR [STATE_IN]
Writes OUT_DIR/rank{RANK}.json: the ids of the examples this rank trained on per epoch, its step
count, the final weights, and the loader state after the first epoch's third step.
"""

import json
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

import headrace as hr
import headrace.torch as hrt

N, BATCH = 37, 4  # 37 examples: ranks' shares are uneven unless padded, which would hang DDP


def pipeline() -> hr.Dataset:
    features = np.random.default_rng(0).normal(size=(N, 3)).astype(np.float32)
    ids = np.arange(N)
    return (
        hr.Dataset.from_tensor_slices((ids, features))
        .global_shuffle(seed=11)
        .distribute()  # this rank's share, chosen by headrace.torch from the process group
        .map(lambda i, x: (i, x, x.sum(keepdims=True)))
        .batch(BATCH)
    )


def main() -> None:
    rank, world, port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = hrt.to_torch(pipeline())
    if len(sys.argv) > 5:
        with open(sys.argv[5]) as f:
            loader.load_state_dict(json.load(f))
    seen, steps, saved = [], 0, None
    for epoch in range(2):
        epoch_ids = []
        for ids, x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # all-reduce: a rank with fewer batches would hang the others here
            optimizer.step()
            epoch_ids.extend(ids.tolist())
            steps += 1
            if epoch == 0 and steps == 3:
                saved = loader.state_dict()
        seen.append(epoch_ids)
    weights = [p.detach().numpy().ravel().tolist() for p in model.parameters()]
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump({"seen": seen, "steps": steps, "weights": weights, "len": len(loader), "state": saved}, f)
    dist.barrier()  # no rank tears down gloo while another still uses it (that aborts with SIGABRT)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # Everything this rank checks is written and the process group is down. Leave without the C++
    # static destructors: torch/gloo's sometimes abort at interpreter exit ("terminate called
    # without an active exception", about 1 run in 20 on 2 loaded cores; cause not found), which
    # would fail a test whose work has finished.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
