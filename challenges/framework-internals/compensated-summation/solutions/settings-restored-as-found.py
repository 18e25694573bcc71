"""Correct (owner, red team round 3): settings changed inside the call and put back as the call found them.

A pairwise TwoSum tree over the terms in a random order drawn from a generator of
its own (the order changes nothing but which roundings happen; the errors are all
kept). Around it, the call turns deterministic algorithms on, runs on one thread
and switches gradients off, and puts each back to the value it read when the call
began, warn_only included, whatever the caller had set: deterministic mode on,
another thread count, no_grad or inference mode. It never touches flush-denormal
(torch has no getter) nor the global random generators. Guards the probes that
move the caller's settings against a false alarm.
"""

from __future__ import annotations

import torch


def _tree(v: torch.Tensor) -> torch.Tensor:
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    errors = []
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        a, b = v[0::2], v[1::2]
        s = a + b
        bb = s - a
        errors.append((a - (s - bb)) + (b - bb))
        v = s
    compensation = torch.cat(errors).sum() if errors else torch.zeros((), dtype=torch.float32)
    return v.reshape(()) + compensation


def total(x: torch.Tensor) -> torch.Tensor:
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    threads = torch.get_num_threads()
    grad = torch.is_grad_enabled()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    try:
        v = x.reshape(-1).to(torch.float32)
        order = torch.randperm(v.numel(), generator=torch.Generator().manual_seed(v.numel()))
        return _tree(v[order])
    finally:
        torch.set_grad_enabled(grad)
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
