"""memsnap: read, diagnose and view PyTorch CUDA memory snapshots.

    import memsnap
    snap = memsnap.load("snap.pickle")        # or bytes, or torch.cuda.memory._snapshot()
    snap.diagnose()["devices"][0]["fragmentation"]
    snap.replay(expandable_segments=True)     # what-if, replayed through the allocator model
    memsnap.show(snap)                        # the viewer, inline in a notebook

Every result is the plain data the `memsnap` command prints with `--json` for the same
command (one schema: docs/cli-json.md), computed by the same Rust functions. Errors are
`ValueError`s naming the file, key or byte offset; a missing file is `FileNotFoundError`.
Nothing in a snapshot is executed: the pickle reader builds values, never objects.
"""

from __future__ import annotations

import errno
import html as _html
import json
import os
import pickle
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

from . import _memsnap

__version__: str = _memsnap.__version__

__all__ = ["Snapshot", "load", "fleet", "export", "html", "show", "Report"]

#: Trunk's build of the viewer, shipped inside the wheel.
VIEWER_DIR = Path(__file__).with_name("viewer")

Source = Union[
    str, "os.PathLike[str]", bytes, bytearray, memoryview, Mapping[str, Any], list, "Snapshot"
]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _opt(args: list, name: str, value: Any) -> None:
    if value is not None:
        args += [_flag(name), str(value)]


def _setting(value: Any) -> str:
    # PYTORCH_CUDA_ALLOC_CONF spells booleans True/False.
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


class Snapshot:
    """A snapshot read into memsnap's model (see :func:`load`)."""

    __slots__ = ("_inner",)

    def __init__(self, inner: "_memsnap.Snapshot") -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        """What outputs call this snapshot: its path as given, or ``<bytes>`` / ``<dict>``."""
        return self._inner.name

    @property
    def devices(self) -> list:
        """The file's devices (segment ``device`` keys and trace indices)."""
        return self._inner.devices()

    def _json(self, command: str, *args: str) -> Any:
        return json.loads(self._inner.run([command, self.name, *args, "--json"]))

    def stats(self) -> dict:
        """Counts and byte totals per device and overall (``memsnap stats --json``)."""
        return self._json("stats")

    def pools(self) -> list:
        """Per device and memory pool: segments, reserved and allocated bytes (the ``pools``
        field of :meth:`stats`)."""
        return self.stats()["pools"]

    def diagnose(self, device: Optional[int] = None, allocator: Optional[str] = None) -> dict:
        """Fragmentation, churn, pinning blocks, the peak by frame and fixes ranked by their
        replayed saving (``memsnap diagnose --json``). ``allocator``: ``"cuda"`` or ``"npu"``
        (torch_npu) names whose rules the fixes replay under; by default each device's sizes
        choose."""
        args: list = []
        _opt(args, "device", device)
        _opt(args, "allocator", allocator)
        return self._json("diagnose", *args)

    def oom(self, allocator: Optional[str] = None) -> list:
        """Why each out-of-memory error happened, one per device that had one
        (``memsnap oom --json``); empty when the trace has none. ``allocator`` as for
        :meth:`diagnose`."""
        args: list = []
        _opt(args, "allocator", allocator)
        return self._json("oom", *args)

    def phases(self, device: Optional[int] = None) -> dict:
        """The program's phases (``external_annotations``) and memory in each
        (``memsnap phases --json``)."""
        args: list = []
        _opt(args, "device", device)
        return self._json("phases", *args)

    def compare(self, other: Source, device: Optional[int] = None) -> dict:
        """This snapshot (before) against ``other`` (after): what grew and shrank, by frame
        (``memsnap compare --json``)."""
        after = load(other)
        args = ["compare", self.name, after.name, "--json"]
        _opt(args, "device", device)
        return json.loads(self._inner.run_pair(after._inner, args))

    def flame(
        self,
        at: Union[str, int] = "peak",
        weight: str = "bytes",
        device: Optional[int] = None,
        all_frames: bool = False,
    ) -> dict:
        """The flame graph's tree (``{name, value, children}``) of what is live ``at`` a trace
        entry, ``"peak"`` or ``"dump"``; ``weight`` ``"bytes"`` or ``"bytes-lifetime"``
        (``memsnap flame --json``)."""
        args = ["--at", str(at), "--weight", weight]
        _opt(args, "device", device)
        if all_frames:
            args.append("--all-frames")
        return self._json("flame", *args)

    def replay(
        self,
        device: Optional[int] = None,
        *,
        start: str = "reconstructed",
        to_oom: bool = False,
        capacity_gib: Optional[float] = None,
        memory_cap_bytes: Optional[int] = None,
        empty_cache_at: Iterable[int] = (),
        pad: Optional[Mapping[int, int]] = None,
        allocator: Optional[str] = None,
        **settings: Any,
    ) -> dict:
        """Replays the trace through the allocator model (``memsnap replay --json``).

        With no change: fidelity, every decision compared with the real allocator's. With
        ``PYTORCH_CUDA_ALLOC_CONF`` keys as keywords (``expandable_segments=True``,
        ``max_split_size_mb=512``) or a program change (``memory_cap_bytes``,
        ``empty_cache_at``, ``pad={from_bytes: to_bytes}``): a what-if, measured against the
        file's own settings. ``start``: ``"reconstructed"``, ``"clean"`` or ``"cold"``.
        ``allocator``: ``"cuda"`` or ``"npu"`` (torch_npu) names whose rules the model follows;
        by default each device's sizes choose (the result's ``allocator`` field says which).
        """
        args: list = []
        _opt(args, "device", device)
        _opt(args, "allocator", allocator)
        for key, value in settings.items():
            args += ["--set", f"{key}={_setting(value)}"]
        if start == "clean":
            args.append("--clean")
        elif start == "cold":
            args.append("--cold")
        elif start != "reconstructed":
            raise ValueError(f"start: expected reconstructed, clean or cold, got {start!r}")
        if to_oom:
            args.append("--to-oom")
        _opt(args, "capacity_gib", capacity_gib)
        _opt(args, "memory_cap_bytes", memory_cap_bytes)
        for entry in empty_cache_at:
            args += ["--empty-cache-at", str(entry)]
        for frm, to in (pad or {}).items():
            args += ["--pad", f"{frm}={to}"]
        return self._json("replay", *args)

    def to_pickle(self) -> bytes:
        """The snapshot as a protocol-4 pickle PyTorch's own viewer opens."""
        return self._inner.to_pickle()

    def html(self, path: Union[str, "os.PathLike[str]", None] = None, **trim: Any) -> "Report":
        """The one-file offline report of this snapshot (see :func:`html`)."""
        return html(self, path, **trim)

    def show(self, height: int = 760, **trim: Any) -> None:
        """The viewer inline in a notebook (see :func:`show`)."""
        show(self, height=height, **trim)

    def __repr__(self) -> str:
        return repr(self._inner)


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _check_exists(path: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "no such snapshot file", path)


def _is_data(x: Any) -> bool:
    # The dict torch.cuda.memory._snapshot() returns, or the segment list of
    # torch.cuda.memory_snapshot().
    return isinstance(x, (Mapping, list))


def _data_bytes(x: Any) -> bytes:
    # Both hold only str, int, float, bool, None, lists and dicts; pickling them hands core's
    # reader the bytes _dump_snapshot would write (and the reader refuses anything else).
    try:
        return pickle.dumps(dict(x) if isinstance(x, Mapping) else list(x), protocol=4)
    except Exception as e:  # a lambda, an open file, ...: not a snapshot's value
        raise ValueError(f"<dict>: holds a value no snapshot has ({e})") from None


def load(x: Source, name: Optional[str] = None) -> Snapshot:
    """Reads a snapshot from a path (pickle, gzipped pickle or JSON), the file's bytes, the
    dict ``torch.cuda.memory._snapshot()`` returns or the list ``torch.cuda.memory_snapshot()``
    returns. ``name`` is what results quote as its file
    (default: the path, ``<bytes>`` or ``<dict>``)."""
    if isinstance(x, Snapshot):
        return x
    if _is_path(x):
        path = os.fspath(x)
        _check_exists(path)
        return Snapshot(_memsnap.read_path(path, name))
    if isinstance(x, (bytes, bytearray, memoryview)):
        return Snapshot(_memsnap.read_bytes(bytes(x), name or "<bytes>"))
    if _is_data(x):
        return Snapshot(_memsnap.read_bytes(_data_bytes(x), name or "<dict>"))
    raise TypeError(
        f"memsnap.load: expected a path, bytes, a snapshot dict or segment list, got "
        f"{type(x).__name__}"
    )


def _paths(paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]) -> list:
    if _is_path(paths):
        paths = [paths]  # type: ignore[list-item]
    out = [os.fspath(p) for p in paths]  # type: ignore[union-attr]
    if not out:
        raise ValueError("no snapshot files given")
    for p in out:
        _check_exists(p)
    return out


def fleet(paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]], jobs: int = 0) -> dict:
    """One snapshot per rank of a job (files, or folders of them): ``{"fleet": ..., "ranks":
    [...]}`` as ``memsnap fleet --json`` prints it. A file that cannot be read is a
    ``ValueError`` naming it."""
    return json.loads(_memsnap.fleet_text([*_paths(paths), "--json", "--jobs", str(jobs)]))


def export(
    paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    parquet: Union[str, "os.PathLike[str]"],
    rank: Optional[int] = None,
    jobs: int = 0,
) -> Path:
    """Writes the snapshots as a Hive-partitioned Parquet dataset under ``parquet`` (as
    ``memsnap export --parquet``) for DuckDB, pandas or Spark; returns that folder."""
    args = [*_paths(paths), "--parquet", os.fspath(parquet), "--jobs", str(jobs), "--quiet"]
    _opt(args, "rank", rank)
    _memsnap.export_parquet(args)
    return Path(parquet)


class Report(str):
    """A self-contained HTML report (the text itself); notebooks display it as the viewer in
    an iframe sized to the cell."""

    height: int = 760

    def _repr_html_(self) -> str:
        # srcdoc keeps the page in the notebook's own output: nothing is fetched from outside.
        return (
            f'<iframe srcdoc="{_html.escape(self, quote=True)}" '
            f'style="width:100%;height:{int(self.height)}px;border:0" '
            'title="memsnap viewer"></iframe>'
        )

    def __repr__(self) -> str:
        return f"<memsnap.Report: {len(self)} characters of HTML>"


def _source_bytes(x: Source) -> Tuple[bytes, str]:
    if isinstance(x, Snapshot):
        return x.to_pickle(), x.name
    if _is_path(x):
        path = os.fspath(x)
        _check_exists(path)
        return Path(path).read_bytes(), path
    if isinstance(x, (bytes, bytearray, memoryview)):
        return bytes(x), "snapshot.pickle"
    if _is_data(x):
        return _data_bytes(x), "snapshot.pickle"
    raise TypeError(f"expected a path, bytes, a snapshot dict or a Snapshot, got {type(x).__name__}")


def html(
    x: Source,
    path: Union[str, "os.PathLike[str]", None] = None,
    *,
    device: Optional[int] = None,
    entries: Optional[Tuple[int, int]] = None,
) -> Report:
    """The one-file offline report of ``x`` (``memsnap html``): the viewer and the snapshot,
    compressed, opening from ``file://`` with no server and no network. Written to ``path``
    when given; returned either way. ``device`` and ``entries=(start, end)`` trim it."""
    data, name = _source_bytes(x)
    args = [os.path.basename(name) or "snapshot.pickle", "--output", os.fspath(path or "report.html")]
    _opt(args, "device", device)
    if entries is not None:
        args += ["--entries", f"{int(entries[0])}..{int(entries[1])}"]
    args += ["--viewer", os.fspath(VIEWER_DIR), "--quiet"]
    text, _line = _memsnap.html_report(args, data)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return Report(text)


def show(x: Source, height: int = 760, **trim: Any) -> None:
    """Displays the viewer of ``x`` inline in Jupyter or VS Code's notebooks: the
    :func:`html` report in an iframe ``height`` pixels tall and as wide as the cell, nothing
    fetched from outside. ``device`` and ``entries`` trim it as for :func:`html`."""
    try:
        from IPython.display import display
    except ImportError:
        raise RuntimeError(
            "memsnap.show needs IPython (a notebook); outside one, write the report with "
            "memsnap.html(x, 'report.html')"
        ) from None
    report = html(x, **trim)
    report.height = height
    display(report)
