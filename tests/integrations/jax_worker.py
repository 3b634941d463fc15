"""JAX checks that need XLA_FLAGS set before JAX starts; run by test_jax.py as subprocesses.

Usage: python jax_worker.py single OUT | python jax_worker.py multi PROCESS_ID PORT OUT
"""

import json
import sys

import jax
import numpy as np

import headrace as hr
import headrace.jax as hrj


def pipeline(rows: int) -> hr.Dataset:
    # 22 examples; each process's share is batched into `rows` rows per step.
    return (
        hr.Dataset.range(22)
        .global_shuffle(seed=5)
        .distribute(remainder="drop")
        .batch(rows, drop_remainder=True)
    )


def single(out: str) -> None:
    devices = jax.devices()
    mesh = jax.sharding.Mesh(np.array(devices), ("data",))
    rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))
    it = hrj.prefetch_to_device(pipeline(4), size=2, sharding=rows)
    batches = [next(it), next(it)]
    state = it.get_state()
    rest = list(it)
    resumed = hrj.prefetch_to_device(pipeline(4), size=3, sharding=rows)
    resumed.set_state(state)
    again = list(resumed)
    plain = list(hrj.prefetch_to_device(iter([np.arange(4), np.arange(4, 8)]), size=1))
    result = {
        "devices": len(devices),
        "shard_devices": [sorted(d.id for d in b.sharding.device_set) for b in batches],
        "shard_rows": [[s.data.shape[0] for s in b.addressable_shards] for b in batches],
        "values": [np.asarray(b).tolist() for b in batches + rest],
        "resumed": [np.asarray(b).tolist() for b in again],
        "plain": [np.asarray(b).tolist() for b in plain],
        "is_jax": all(isinstance(b, jax.Array) for b in batches + plain),
    }
    with open(out, "w") as f:
        json.dump(result, f)


def multi(process_id: int, port: str, out: str) -> None:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process_id)
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("data",))  # 2 processes x 2 devices
    rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))
    batches = list(hrj.prefetch_to_device(pipeline(2), sharding=rows))  # 2 local rows: 4 global
    local = [[np.asarray(s.data).tolist() for s in b.addressable_shards] for b in batches]
    totals = [int(jax.jit(lambda x: x.sum())(b)) for b in batches]  # a step over all processes' rows
    with open(out, "w") as f:
        json.dump({"shapes": [list(b.shape) for b in batches], "local": local, "totals": totals}, f)
    jax.distributed.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "single":
        single(sys.argv[2])
    else:
        multi(int(sys.argv[2]), sys.argv[3], sys.argv[4])
