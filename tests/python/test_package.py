"""The installed `memsnap` wheel against its own `memsnap` command, on every real fixture.

Run by scripts/test.sh from a fresh venv holding only the wheel:
    target/py-venv/bin/python -m unittest discover -s tests/python -v
What it checks (issue 30): the module's results equal the command's `--json` for stats,
diagnose, oom and compare; `load(pickle.load(f))` equals `load(path)`; bad input raises
ValueError and runs nothing; the report and the record helper's errors.
"""

import gzip
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import memsnap
import memsnap.torch

ROOT = Path(__file__).resolve().parents[2]
REAL = Path(os.environ.get("MEMSNAP_REAL_FIXTURES", ROOT.parent / "shared" / "fixtures" / "real"))
EXAMPLE = ROOT / "app" / "assets" / "example.pickle"


def real_fixtures():
    if not REAL.is_dir():
        print(f"\nWARNING: real fixtures not found at {REAL}: skipping the tests that need them",
              file=sys.stderr)
        return []
    return sorted(p for p in REAL.iterdir() if p.suffix in (".pickle", ".pkl", ".gz"))


FIXTURES = real_fixtures()


def cli() -> str:
    """The `memsnap` the wheel put on PATH beside this interpreter."""
    exe = Path(sys.executable).with_name("memsnap")
    if not exe.is_file():
        raise AssertionError(f"the wheel installed no memsnap command at {exe}")
    return str(exe)


def cli_json(*args: str):
    out = subprocess.run([cli(), *args, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"memsnap {' '.join(args)} --json: {out.stderr}")
    return json.loads(out.stdout)


class ModuleEqualsCommand(unittest.TestCase):
    def setUp(self):
        if not FIXTURES:
            self.skipTest(f"no real fixtures at {REAL}")

    def test_stats_diagnose_oom(self):
        for f in FIXTURES:
            with self.subTest(file=f.name):
                snap = memsnap.load(str(f))
                self.assertEqual(snap.stats(), cli_json("stats", str(f)))
                self.assertEqual(snap.pools(), cli_json("stats", str(f))["pools"])
                self.assertEqual(snap.diagnose(), cli_json("diagnose", str(f)))
                self.assertEqual(snap.oom(), cli_json("oom", str(f)))

    def test_compare_each_with_the_next(self):
        for a, b in zip(FIXTURES, FIXTURES[1:] + FIXTURES[:1]):
            with self.subTest(before=a.name, after=b.name):
                got = memsnap.load(str(a)).compare(str(b))
                self.assertEqual(got, cli_json("compare", str(a), str(b)))

    def test_flame_and_replay_follow_the_command(self):
        f = REAL / "adam-small-settings.pickle"
        snap = memsnap.load(str(f))
        self.assertEqual(snap.flame(), cli_json("flame", str(f)))
        self.assertEqual(
            snap.replay(expandable_segments=True),
            cli_json("replay", str(f), "--set", "expandable_segments=True"),
        )
        fidelity = snap.replay()
        self.assertEqual(fidelity, cli_json("replay", str(f)))

    def test_allocator_rules_follow_the_command(self):
        f = REAL / "memsnapdump-empty-cache.pkl"
        if not f.exists():
            self.skipTest(f"{f} is absent")
        snap = memsnap.load(str(f))
        detected = snap.replay()
        self.assertEqual(detected["devices"][0]["allocator"], "npu")
        self.assertEqual(detected, cli_json("replay", str(f)))
        named = snap.replay(allocator="cuda")
        self.assertEqual(named, cli_json("replay", str(f), "--allocator", "cuda"))
        self.assertEqual(named["devices"][0]["allocator_source"], "settings")
        self.assertEqual(
            snap.diagnose(allocator="npu"), cli_json("diagnose", str(f), "--allocator", "npu")
        )
        self.assertEqual(snap.oom(allocator="cuda"), cli_json("oom", str(f), "--allocator", "cuda"))
        with self.assertRaises(ValueError) as e:
            snap.replay(allocator="tpu")
        self.assertIn("unknown allocator `tpu`", str(e.exception))

    def test_a_dict_and_bytes_read_as_the_file(self):
        for f in FIXTURES:
            with self.subTest(file=f.name):
                raw = f.read_bytes()
                with open(f, "rb") as fh:
                    obj = pickle.load(fh)
                by_path = memsnap.load(str(f))
                by_dict = memsnap.load(obj, name=str(f))
                by_bytes = memsnap.load(raw, name=str(f))
                self.assertEqual(by_dict.stats(), by_path.stats())
                self.assertEqual(by_dict.diagnose(), by_path.diagnose())
                self.assertEqual(by_bytes.stats(), by_path.stats())
                # And the model writes back what CPython reads as the same kind of object.
                back = pickle.loads(by_path.to_pickle())
                self.assertIs(type(back), type(obj))

    def test_gzip_and_json_forms(self):
        f = REAL / "tiny.pickle"
        if not f.is_file():
            self.skipTest("tiny.pickle absent")
        want = memsnap.load(str(f)).stats()
        with tempfile.TemporaryDirectory() as d:
            gz = Path(d, "tiny.pickle.gz")
            gz.write_bytes(gzip.compress(f.read_bytes()))
            got = memsnap.load(str(gz)).stats()
            # Only the quoted file name differs.
            self.assertEqual({**got, "file": None}, {**want, "file": None})

    def test_fleet_and_export(self):
        files = [str(REAL / "tiny.pickle"), str(REAL / "adam-small-settings.pickle")]
        self.assertEqual(memsnap.fleet(files), cli_json("fleet", *files))
        with tempfile.TemporaryDirectory() as d:
            out = memsnap.export(files, parquet=Path(d, "ds"))
            parts = sorted(p.name for p in out.rglob("*.parquet"))
            self.assertTrue(parts, "export wrote no Parquet files")


class BadInput(unittest.TestCase):
    def test_a_dict_without_segments(self):
        with self.assertRaises(ValueError) as e:
            memsnap.load({"x": 1})
        self.assertIn("segments", str(e.exception))

    def test_truncated_bytes_name_the_offset(self):
        raw = EXAMPLE.read_bytes()
        with self.assertRaises(ValueError) as e:
            memsnap.load(raw[: len(raw) // 2])
        self.assertRegex(str(e.exception), r"byte|offset|truncated|end")

    def test_wrong_types(self):
        with self.assertRaises(ValueError):
            memsnap.load({"segments": "not a list"})
        with self.assertRaises(TypeError):
            memsnap.load(42)
        with self.assertRaises(FileNotFoundError):
            memsnap.load("/nonexistent/snap.pickle")

    def test_a_malicious_pickle_runs_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            marker = Path(d, "ran")

            class Evil:
                def __reduce__(self):
                    return (os.system, (f"touch {marker}",))

            evil = pickle.dumps({"segments": [], "device_traces": [Evil()]}, protocol=4)
            for reader in (lambda: memsnap.load(evil),
                           lambda: memsnap.html(evil, Path(d, "r.html"))):
                with self.assertRaises(ValueError) as e:
                    reader()
                self.assertRegex(str(e.exception), r"at byte \d+: opcode \w*GLOBAL .*refused")
            # The command reads it no differently.
            p = Path(d, "evil.pickle")
            p.write_bytes(evil)
            out = subprocess.run([cli(), "stats", str(p)], capture_output=True, text=True)
            self.assertNotEqual(out.returncode, 0)
            self.assertFalse(marker.exists(), "a pickle's code was executed")


class Report(unittest.TestCase):
    def test_html_carries_the_viewer_and_the_snapshot(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d, "r.html")
            report = memsnap.html(str(EXAMPLE), out)
            self.assertEqual(out.read_text(encoding="utf-8"), report)
            for part in ("memsnap-app-wasm", "memsnap-worker-wasm", "memsnap-snapshot"):
                self.assertIn(f'id="{part}"', report)
            self.assertNotRegex(report, r"<script[^>]+src=|<link[^>]+href=\"http")
            self.assertIn("<iframe srcdoc=", report._repr_html_())
            # The command writes the same report.
            cmd = Path(d, "c.html")
            subprocess.run([cli(), "html", str(EXAMPLE), "-o", str(cmd), "--quiet"], check=True)
            self.assertEqual(cmd.read_text(encoding="utf-8").replace(str(EXAMPLE), "example.pickle"),
                             report.replace(str(EXAMPLE), "example.pickle"))

    def test_trims_are_checked(self):
        with self.assertRaises(ValueError) as e:
            memsnap.html(str(EXAMPLE), device=7)
        self.assertIn("7", str(e.exception))


class Record(unittest.TestCase):
    def test_says_what_is_missing(self):
        try:
            import torch  # noqa: F401
            has_torch = True
        except ImportError:
            has_torch = False
        if has_torch and __import__("torch").cuda.is_available():
            self.skipTest("CUDA is here: scripts/gpu-check.sh runs the real recording")
        with self.assertRaises(RuntimeError) as e:
            with memsnap.torch.record(os.devnull):
                pass
        self.assertIn("CUDA" if has_torch else "PyTorch", str(e.exception))


class Command(unittest.TestCase):
    def test_the_console_script_and_python_m(self):
        out = subprocess.run([cli(), "--version"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(memsnap.__version__, out.stdout)
        out = subprocess.run([sys.executable, "-m", "memsnap", "stats", str(EXAMPLE)],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        bad = subprocess.run([cli(), "stats", "/nonexistent.pickle"], capture_output=True, text=True)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("nonexistent", bad.stderr)


if __name__ == "__main__":
    unittest.main()
