"""Checkpoint audit and fix: wall time and peak RSS against torch.load and a file copy.

Generates a checkpoint of about ``--size-gb`` GB (a HiFi-GAN-like stack of
weight-normed convolutions, legacy ``weight_g``/``weight_v`` keys, plus plain
tensors) as safetensors and as a torch zip archive, then measures, each arm in
a fresh subprocess, in alternating paired runs:

* ``wnaudit FILE`` against a plain load of the same file: ``torch.load(FILE,
  weights_only=True)`` for the zip, ``safetensors.torch.load_file(FILE)`` for safetensors;
* ``wnaudit --fix -o OUT FILE`` against copying the file (``shutil.copyfile``,
  and the same followed by ``fsync``, since the fix fsyncs before its rename);
* an interpreter that does nothing, for the baseline RSS;
* the torch-zip fix against the safetensors fix of the same tensors, and
  against the machine limit for that fix: ``import torch``, an in-kernel copy
  (``os.copy_file_range``) of as many bytes as the fix leaves untouched, a
  user-space write of as many bytes as it folds, and ``fsync``.

``--plain-gb`` adds untouched tensors (64 MiB each) beside the weight-normed
ones.  Peak anonymous memory (file-backed mapped pages aside) is sampled from
``/proc/PID/status`` (``RssAnon``) every 10 ms.

Peak RSS comes from ``wait4`` (the child's own ``ru_maxrss``; the parent never
imports torch, since a child's high-water mark starts at its parent's RSS at
fork, and the checkpoint is generated in a subprocess for that reason).  Reported are
medians of the paired differences and ratios.  The generated files are
deleted at the end unless ``--keep``.

    python benchmarks/checkpoint_speed.py --size-gb 2 --repeats 5

``--pairs-scaling 1000,4000,25000`` measures instead how the fix scales in
the number of weight-norm pairs (issue 23): for each count a state dict of
that many small legacy pairs, each beside a bias and a norm weight (4 tensors
per pair: 25,000 pairs are 100,000 tensors), as a torch zip and as
safetensors; ``wnaudit --fix -o OUT FILE`` is paired with two
``torch.load``s of the same zip (the fix loads it, then reads the result
back), which scales machine load out of the ratio.  Reported per count:
median wall time, time per pair, and the paired ratio to the loads.

    python benchmarks/checkpoint_speed.py --pairs-scaling 1000,4000,25000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
CLI = "import sys; from wnaudit.cli import main; sys.argv[0] = 'wnaudit'; main()"
TORCH_LOAD = "import sys, torch; torch.load(sys.argv[1], weights_only=True, map_location='cpu')"
SAFETENSORS_LOAD = "import sys; from safetensors.torch import load_file; load_file(sys.argv[1])"
COPY = "import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])"
COPY_FSYNC = (
    "import os, shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2]); "
    "fd = os.open(sys.argv[2], os.O_RDONLY); os.fsync(fd); os.close(fd)"
)
NOTHING = "pass"
LIMIT = (
    "import os, sys, torch\n"
    "src = os.open(sys.argv[1], os.O_RDONLY); dst = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n"
    "left = int(sys.argv[3]); offset = 0\n"
    "while left:\n"
    "    n = os.copy_file_range(src, dst, min(left, 1 << 30), offset); offset += n; left -= n\n"
    "block = bytearray(os.urandom(1 << 20)) * 64; left = int(sys.argv[4])\n"
    "while left:\n"
    "    left -= os.write(dst, memoryview(block)[: min(left, len(block))])\n"
    "os.fsync(dst)"
)
TORCH_IMPORTED = (
    "import sys; from wnaudit.cli import run; status = run([sys.argv[1], '-q']); "
    "sys.stderr.write('TORCH-IMPORTED=%s\\n' % ('torch' in sys.modules))"
)


def generate(directory: Path, size_gb: float, plain_gb: float = 0.0) -> tuple[Path, Path, int]:
    """Write the same state dict as safetensors and torch zip; returns (st, zip, weight norms)."""
    import torch
    from safetensors.torch import save_file

    torch.manual_seed(0)
    channels, kernel = 512, 7
    layer_bytes = channels * channels * kernel * 4
    layers = max(1, int(size_gb * 1e9 // layer_bytes))
    state: dict[str, torch.Tensor] = {}
    for i in range(layers):
        prefix = f"generator.blocks.{i}.conv"
        state[f"{prefix}.bias"] = torch.randn(channels)
        state[f"{prefix}.weight_g"] = torch.rand(channels, 1, 1) + 0.5
        state[f"{prefix}.weight_v"] = torch.randn(channels, channels, kernel)
    for i in range(int(plain_gb * 1e9 // (64 << 20))):
        state[f"generator.tables.{i}"] = torch.randn(16 << 20)  # 64 MiB, untouched by the fold
    st_path, zip_path = directory / "bench.safetensors", directory / "bench.pt"
    save_file(state, st_path, metadata={"format": "pt"})
    torch.save({"generator": {k[len("generator."):]: v for k, v in state.items()}, "steps": 1}, zip_path)
    return st_path, zip_path, layers


def generate_pairs(directory: Path, pairs: int) -> tuple[Path, Path]:
    """``pairs`` small legacy weight-norm pairs, each beside a bias and a norm weight."""
    import torch
    from safetensors.torch import save_file

    torch.manual_seed(0)
    state: dict[str, torch.Tensor] = {}
    for i in range(pairs):
        state[f"layers.{i}.conv.weight_g"] = torch.rand(4, 1, 1) + 0.5
        state[f"layers.{i}.conv.weight_v"] = torch.randn(4, 4, 3)
        state[f"layers.{i}.conv.bias"] = torch.randn(4)
        state[f"layers.{i}.norm.weight"] = torch.randn(4)
    st_path, zip_path = directory / f"pairs{pairs}.safetensors", directory / f"pairs{pairs}.pt"
    save_file(state, st_path)
    torch.save(state, zip_path)
    return st_path, zip_path


TWO_LOADS = "import sys, torch; [torch.load(sys.argv[1], weights_only=True, mmap=True) for _ in range(2)]"


def pairs_scaling(directory: Path, counts: list[int], repeats: int) -> dict:
    results: dict = {}
    out = directory / "out"

    def remove_out() -> None:
        out.unlink(missing_ok=True)

    for count in counts:
        subprocess.run([PYTHON, __file__, "--generate-pairs", str(directory), "--pairs-scaling", str(count)], check=True)
        st_path, zip_path = directory / f"pairs{count}.safetensors", directory / f"pairs{count}.pt"
        row: dict = {}
        for label, path in (("torch_zip", zip_path), ("safetensors", st_path)):
            fix = lambda p=str(path): measure(CLI, "--fix", "-q", "-o", str(out), p)  # noqa: E731
            pair = paired("wnaudit --fix -o OUT FILE", fix, "2 x torch.load (zip)",
                          lambda: measure(TWO_LOADS, str(zip_path)), repeats, remove_out)
            row[label] = {
                "fix_wall_s": pair["a_wall_s"],
                "fix_ms_per_pair": 1000 * pair["a_wall_s"] / count,
                "two_loads_wall_s": pair["b_wall_s"],
                "ratio_to_two_loads": pair["wall_ratio_median"],
                "peak_rss_mib": pair["a_rss_mib"],
                "fix_cpu_s": pair["a_cpu_s"],  # user + system: changed least by the machine's other load
                "two_loads_cpu_s": pair["b_cpu_s"],
            }
        results[str(count)] = row
        results[str(count)]["load_average"] = os.getloadavg()
        st_path.unlink()
        zip_path.unlink()
    return results


def _anon_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(code: str, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[float, float, float, float]:
    """(wall s, peak RSS MiB, peak anonymous MiB, CPU s) of ``python -c code args`` in a fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen([PYTHON, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    anon = 0.0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        anon = max(anon, _anon_mib(process.pid))
        time.sleep(0.01)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode() if process.stderr else ""
    if process.returncode not in ok:
        raise RuntimeError(f"{code[:40]}... {args} failed ({process.returncode}): {stderr}")
    return wall, usage.ru_maxrss / 1024, anon, usage.ru_utime + usage.ru_stime


def paired(name_a: str, arm_a, name_b: str, arm_b, repeats: int, cleanup=lambda: None) -> dict:
    """Alternate A,B / B,A; report medians of paired ratios and differences."""
    a_runs, b_runs = [], []
    for i in range(repeats):
        order = [(arm_a, a_runs), (arm_b, b_runs)] if i % 2 == 0 else [(arm_b, b_runs), (arm_a, a_runs)]
        for arm, runs in order:
            runs.append(arm())
            cleanup()
    ratios = [a[0] / b[0] for a, b in zip(a_runs, b_runs)]
    return {
        "a": name_a,
        "b": name_b,
        "a_wall_s": statistics.median(r[0] for r in a_runs),
        "b_wall_s": statistics.median(r[0] for r in b_runs),
        "wall_ratio_median": statistics.median(ratios),
        "wall_diff_median_s": statistics.median(a[0] - b[0] for a, b in zip(a_runs, b_runs)),
        "a_rss_mib": statistics.median(r[1] for r in a_runs),
        "b_rss_mib": statistics.median(r[1] for r in b_runs),
        "rss_diff_median_mib": statistics.median(a[1] - b[1] for a, b in zip(a_runs, b_runs)),
        "a_peak_anon_mib": max(r[2] for r in a_runs),
        "b_peak_anon_mib": max(r[2] for r in b_runs),
        "a_cpu_s": statistics.median(r[3] for r in a_runs),
        "b_cpu_s": statistics.median(r[3] for r in b_runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=0.25, help="checkpoint size (record runs use 2)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plain-gb", type=float, default=0.0, help="untouched tensors added beside the weight-normed ones")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the files (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--pairs-scaling", help="comma-separated pair counts: measure scaling in pairs instead")
    parser.add_argument("--generate-pairs", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_pairs is not None:
        generate_pairs(args.generate_pairs, int(args.pairs_scaling))
        return
    if args.pairs_scaling:
        directory = Path(tempfile.mkdtemp(prefix="wnaudit-bench-", dir=args.dir))
        try:
            counts = [int(part) for part in args.pairs_scaling.split(",")]
            json.dump(pairs_scaling(directory, counts, args.repeats), sys.stdout, indent=2)
            sys.stdout.write("\n")
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        return
    if args.generate is not None:
        st_path, zip_path, layers = generate(args.generate, args.size_gb, args.plain_gb)
        print(st_path.name, zip_path.name, layers)
        return
    directory = Path(tempfile.mkdtemp(prefix="wnaudit-bench-", dir=args.dir))
    try:
        made = subprocess.run(
            [PYTHON, __file__, "--generate", str(directory), "--size-gb", str(args.size_gb), "--plain-gb", str(args.plain_gb)],
            check=True, capture_output=True, text=True,
        )
        st_name, zip_name, count = made.stdout.split()
        st_path, zip_path, layers = directory / st_name, directory / zip_name, int(count)
        out = directory / "out"
        results: dict = {
            "size_bytes": {"safetensors": st_path.stat().st_size, "torch_zip": zip_path.stat().st_size},
            "weight_norms": layers,
        }

        def remove_out() -> None:
            out.unlink(missing_ok=True)

        baseline = [measure(NOTHING) for _ in range(args.repeats)]
        results["interpreter_baseline"] = {
            "wall_s": statistics.median(b[0] for b in baseline),
            "rss_mib": statistics.median(b[1] for b in baseline),
        }
        probe = subprocess.run([PYTHON, "-c", TORCH_IMPORTED, str(st_path)], capture_output=True, text=True, check=False)
        results["safetensors_audit_imports_torch"] = "TORCH-IMPORTED=True" in probe.stderr
        for label, path in (("safetensors", st_path), ("torch_zip", zip_path)):
            p = str(path)
            loader = SAFETENSORS_LOAD if label == "safetensors" else TORCH_LOAD
            loader_name = "safetensors load_file" if label == "safetensors" else "torch.load"
            results[f"{label}_audit_vs_load"] = paired(
                "wnaudit FILE", lambda: measure(CLI, p, "-q", ok=(1,)), loader_name, lambda: measure(loader, p), args.repeats
            )
            fix = lambda: measure(CLI, "--fix", "-q", "-o", str(out), p)  # noqa: E731
            results[f"{label}_fix_vs_copy"] = paired(
                "wnaudit --fix -o OUT FILE", fix, "copyfile", lambda: measure(COPY, p, str(out)), args.repeats, remove_out
            )
            results[f"{label}_fix_vs_copy_fsync"] = paired(
                "wnaudit --fix -o OUT FILE", fix, "copyfile+fsync", lambda: measure(COPY_FSYNC, p, str(out)), args.repeats, remove_out
            )
        st_fix = lambda: measure(CLI, "--fix", "-q", "-o", str(out), str(st_path))  # noqa: E731
        zip_fix = lambda: measure(CLI, "--fix", "-q", "-o", str(out), str(zip_path))  # noqa: E731
        results["torch_zip_fix_vs_safetensors_fix"] = paired(
            "torch zip --fix", zip_fix, "safetensors --fix", st_fix, args.repeats, remove_out
        )
        plain = sum((64 << 20) for _ in range(int(args.plain_gb * 1e9 // (64 << 20))))
        folded = zip_path.stat().st_size - plain
        results["untouched_bytes"], results["folded_bytes"] = plain, folded
        results["torch_zip_fix_vs_limit"] = paired(
            "torch zip --fix", zip_fix, "limit: import torch + in-kernel copy + user-space write + fsync",
            lambda: measure(LIMIT, str(zip_path), str(out), str(plain), str(folded)), args.repeats, remove_out,
        )
        json.dump(results, sys.stdout, indent=2)
        sys.stdout.write("\n")
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
