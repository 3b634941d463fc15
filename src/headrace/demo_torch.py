"""The demo's PyTorch training loop: a model trained from a headrace pipeline through ``headrace.torch``.

``train(dataset, ...)`` takes any pipeline of ``(images, labels)`` batches (``headrace demo`` passes its
optimised image pipeline), trains a softmax regression in PyTorch through ``to_torch``, and reports
what a user wants to see: the loss per epoch, how long the loop waited for data, and a checkpoint
taken mid-epoch that resumes exactly (checked against the uninterrupted run).
"""

from __future__ import annotations

import time

import torch

from .dataset import Dataset
from .torch import to_torch


def train(dataset: Dataset, num_classes: int, epochs: int = 2, learning_rate: float = 0.1) -> dict:
    """Train on ``dataset``'s ``(images, labels)`` batches; return losses, waits and the resume check.

    >>> import headrace as hr, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> images, labels = rng.normal(size=(64, 8)).astype(np.float32), rng.integers(0, 3, 64)
    >>> ds = hr.Dataset.from_tensor_slices((images, labels)).global_shuffle(seed=0).batch(16)
    >>> result = train(ds, num_classes=3, epochs=2)
    >>> len(result["losses"]), result["batches_per_epoch"], result["resumed_exactly"]
    (2, 4, True)
    """
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loader = to_torch(dataset, device=device)
    model: torch.nn.Module | None = None
    optimizer: torch.optim.Optimizer | None = None
    losses, waits, batches = [], [], 0
    for _ in range(epochs):
        total, count, waited = 0.0, 0, 0.0
        batches = 0
        asked = time.perf_counter()
        for images, labels in loader:
            waited += time.perf_counter() - asked
            features = images.reshape(images.shape[0], -1).float()
            if model is None or optimizer is None:  # the input size is known from the first batch
                model = torch.nn.Linear(features.shape[1], num_classes).to(device)
                optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
            loss = torch.nn.functional.cross_entropy(model(features), labels.long())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
            count += len(labels)
            batches += 1
            asked = time.perf_counter()
        losses.append(total / max(count, 1))
        waits.append(waited)
    return {
        "losses": losses,
        "data_wait_seconds": waits,
        "batches_per_epoch": batches,
        "resumed_exactly": _resumes_exactly(dataset),
    }


def _resumes_exactly(dataset: Dataset) -> bool:
    """Stop an epoch half way, restore its state_dict into a new loader, compare with the whole epoch."""
    loader = to_torch(dataset)
    epoch = iter(loader)
    start = loader.state_dict()  # this epoch from its beginning (its shuffle order included)
    whole = to_torch(dataset)
    whole.load_state_dict(start)
    full = [labels.tolist() for _, labels in whole]
    head = [next(epoch)[1].tolist() for _ in range(len(full) // 2)]
    resumed = to_torch(dataset)
    resumed.load_state_dict(loader.state_dict())
    return head + [labels.tolist() for _, labels in resumed] == full
