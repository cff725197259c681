"""Record a snapshot around code that may run out of memory (needs ``memsnap[torch]``).

    import memsnap.torch
    with memsnap.torch.record("oom.pickle"):
        train()          # on an OOM: oom.pickle written, `memsnap oom`'s explanation on stderr
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Iterator, Optional, Union

from . import _memsnap

#: Lines of `memsnap oom`'s explanation printed at an out-of-memory error.
EXPLANATION_LINES = 12


class Recording:
    """What :func:`record` yields: where the snapshot goes and whether an OOM wrote it."""

    def __init__(self, path: str) -> None:
        self.path = path
        #: Set when the out-of-memory observer dumped the snapshot.
        self.oom_dumped = False
        #: `memsnap oom`'s explanation of the dump, once written.
        self.explanation: Optional[str] = None


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise RuntimeError(
            "memsnap.torch.record needs PyTorch, which is not installed here: "
            "pip install 'memsnap[torch]'"
        ) from None
    if not torch.cuda.is_available():
        raise RuntimeError(
            f"memsnap.torch.record needs CUDA, which torch {torch.__version__} cannot use here: "
            f"torch.cuda.is_available() is False (built for CUDA {torch.version.cuda or 'none'})"
        )
    return torch


def _explain(pickled: bytes, name: str) -> str:
    snap = _memsnap.read_bytes(pickled, name)
    return snap.run(["oom", name])


@contextlib.contextmanager
def record(
    path: Union[str, "os.PathLike[str]"],
    max_entries: int = 100_000,
    on_oom: bool = True,
    dump_on_exit: bool = False,
    stacks: str = "python",
) -> Iterator[Recording]:
    """Records allocator history (``torch.cuda.memory._record_memory_history``) inside the
    block. With ``on_oom``, an out-of-memory observer dumps the snapshot to ``path`` at the
    failure and prints the first lines of ``memsnap oom``'s explanation to stderr; with
    ``dump_on_exit``, the snapshot is also written when the block ends without one. Recording
    stops on exit. Raises ``RuntimeError`` saying so when torch or CUDA is missing."""
    torch = _torch()
    out = os.fspath(path)
    rec = Recording(out)
    active = True

    def dump() -> bytes:
        import pickle

        data = pickle.dumps(torch.cuda.memory._snapshot(), protocol=4)
        with open(out, "wb") as f:
            f.write(data)
        return data

    def observer(device: int, alloc: int, device_allocated: int, device_free: int) -> None:
        # torch keeps observers for the life of the process: this one acts only inside the block.
        if not active or rec.oom_dumped:
            return
        try:
            data = dump()
            rec.oom_dumped = True
            rec.explanation = _explain(data, out)
            lines = rec.explanation.splitlines()
            shown = "\n".join(lines[:EXPLANATION_LINES])
            more = len(lines) - EXPLANATION_LINES
            tail = f"\n  ... {more} more lines: memsnap oom {out}" if more > 0 else ""
            print(f"memsnap: out of memory on cuda:{device}; snapshot in {out}\n{shown}{tail}",
                  file=sys.stderr, flush=True)
        except Exception as e:  # never mask the OOM itself
            print(f"memsnap: could not dump the snapshot at the OOM: {e}", file=sys.stderr)

    torch.cuda.memory._record_memory_history(
        enabled="all", context="all", stacks=stacks, max_entries=max_entries
    )
    if on_oom:
        torch._C._cuda_attach_out_of_memory_observer(observer)
    try:
        yield rec
    finally:
        try:
            if dump_on_exit and not rec.oom_dumped:
                dump()
        finally:
            active = False
            torch.cuda.memory._record_memory_history(enabled=None)
