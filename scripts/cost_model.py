#!/usr/bin/env python3
"""The static cost model of the stamps (scripts/cost-model.sh runs this).

For each stamp kind of native/core/benches/cost_model.rs:

1. callgrind counts the instructions of its loop function for N and 2N calls;
   the difference divided by N is the instructions per call, start-up excluded.
   The 2N run also records how often each instruction ran (--dump-instr).
2. The loop's hot path is the instructions that ran at least once per call,
   walked in the order they execute: from the loop's first hot instruction,
   along whichever successor of each branch ran (and into called functions),
   until the walk is back at its start. Taken from the binary itself
   (llvm-objdump), so it is the code that runs, whatever the compiler's block
   order; a branch whose two successors both ran once per call stops the
   script with the address to look at. An indirect call (the bounded stamp's
   reads of the calendar clock: a closure, then the vDSO) is not followed:
   llvm-mca models the call instruction alone, callgrind's count has the
   callee's instructions in this binary (not the vDSO's: valgrind has none, so
   the read is a system call there), and the table says how many there were.
3. llvm-mca simulates that sequence as a loop on each CPU model: cycles and
   micro-ops per call.

Prints a Markdown table, and keeps each kind's hot path (the llvm-mca input) in
the output directory.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

# What the table compares each stamp with.
REFERENCE = {"rdtscp": "rdtscp", "now_ns_ordered": "rdtscp", "now_bounded": "rdtscp",
             "now_bounded_host": "rdtscp"}
# The counter reads (and the fence of `lfence; rdtsc`).
COUNTER_READS = ("rdtsc", "rdtscp", "lfence")
CPUS = [("skylake-avx512", "Intel Skylake-SP / Cascade Lake"),
        ("sapphirerapids", "Intel Sapphire Rapids / Emerald Rapids"),
        ("znver3", "AMD Zen 3"),
        ("znver4", "AMD Zen 4")]


def die(msg):
    print(f"cost-model: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, env=None, **kw):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def callgrind(binary, kind, fn, n, out, env):
    """Runs `binary kind n` under callgrind, counting only inside `fn`."""
    run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--collect-jumps=yes",
         "--collect-atstart=no",
         f"--toggle-collect={fn}", f"--callgrind-out-file={out}", binary, kind, str(n)],
        env=env)
    counts, taken = defaultdict(int), defaultdict(int)
    total = None
    addr = 0
    subpos = re.compile(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s")
    with open(out) as f:
        for line in f:
            if line.startswith("totals:"):
                total = int(line.split()[1])
                continue
            if line.startswith(("jump=", "jcnd=")):
                # A jump that was taken (callgrind records no other), then the
                # jumping instruction's position. Of a conditional jump's two
                # counts (executions, jumps; the order varies among valgrind
                # versions' files) the smaller is the jumps.
                nums, target = line.split("=", 1)[1].split()[:2]
                src = step(addr, next(f).split()[0])
                taken[src] += min(int(x) for x in nums.split("/"))
                addr = src
                continue
            if line.startswith("calls="):
                # The next line is the call's inclusive cost: not this
                # instruction's own count; its position is still relative.
                nxt = next(f)
                addr = step(addr, nxt.split()[0])
                continue
            m = subpos.match(line)
            if not m:
                continue
            parts = line.split()
            addr = step(addr, parts[0])
            if len(parts) >= 3:
                counts[addr] += int(parts[2])
    if total is None:
        die(f"no totals in {out}")
    return total, counts, taken


def step(addr, pos):
    if pos == "*":
        return addr
    if pos.startswith("0x"):
        return int(pos, 16)
    return addr + int(pos)


def disassemble(objdump, binary):
    """address -> (mnemonic, operands, next address); symbol -> address."""
    text = run([objdump, "-d", "--no-show-raw-insn", binary])
    insns, symbols, order = {}, {}, []
    sym = re.compile(r"^([0-9a-f]+) <(.+)>:$")
    ins = re.compile(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$")
    prefix = None
    for line in text.splitlines():
        m = sym.match(line)
        if m:
            symbols[m.group(2)] = int(m.group(1), 16)
            continue
        m = ins.match(line)
        if m:
            a, mnem, ops = int(m.group(1), 16), m.group(2), m.group(3).strip()
            if mnem == "lock" and not ops:
                # A prefix printed on a line of its own: one instruction with
                # the next, at the prefix's address (as callgrind counts it).
                prefix = a
                continue
            if prefix is not None:
                a, mnem, prefix = prefix, f"lock {mnem}", None
            insns[a] = (mnem, ops)
            order.append(a)
    nxt = {a: b for a, b in zip(order, order[1:])}
    return insns, nxt, symbols


def hot_path(start_sym, symbols, insns, nxt, counts, taken, calls):
    """The instructions one call runs, in execution order."""
    lo = symbols[start_sym]
    hi = min((a for a in symbols.values() if a > lo), default=max(insns) + 1)
    # Once per call; a branch taken in at most 1 % of the calls (a tie at the
    # first stamp, say) is not on the hot path.
    need = calls // 2 + 1
    hot = [a for a in sorted(insns) if lo <= a < hi and counts.get(a, 0) >= need]
    if not hot:
        die(f"{start_sym}: no instruction ran once per call")
    start, a, path, stack, opaque = hot[0], hot[0], [], [], 0
    while True:
        if len(path) > 4000:
            die(f"{start_sym}: the hot path does not close (walked {len(path)} instructions)")
        mnem, ops = insns[a]
        path.append(a)
        target = branch_target(ops)
        if mnem.startswith("j"):
            if target is None:
                die(f"{start_sym}: indirect jump at {a:#x} on the hot path")
            if mnem in ("jmp", "jmpq"):
                succ = [target]
            elif calls // 100 < taken.get(a, 0) < need:
                die(f"{start_sym}: the branch at {a:#x} ({mnem} {ops}) was taken in "
                    f"{taken[a]} of {calls} calls: no single hot path")
            else:
                succ = [target] if taken.get(a, 0) >= need else [nxt[a]]
            a = succ[0]
        elif mnem.startswith("call"):
            if target is None:
                opaque += 1
                a = nxt[a]
            else:
                stack.append(nxt[a])
                a = target
        elif mnem.startswith("ret"):
            if not stack:
                die(f"{start_sym}: the hot path returns from the loop at {a:#x}")
            a = stack.pop()
        else:
            a = nxt[a]
        if counts.get(a, 0) < need:
            die(f"{start_sym}: the walk left the hot path at {a:#x}")
        if a == start and not stack:
            return path, opaque


def branch_target(ops):
    m = re.match(r"^(?:0x)?([0-9a-f]+)(\s+<.*>)?$", ops)
    return int(m.group(1), 16) if m else None


def asm_of(path, insns):
    """llvm-mca input: branches get absolute targets, objdump's comments go."""
    lines = []
    for a in path:
        mnem, ops = insns[a]
        target = branch_target(ops)
        if target is not None:
            ops = f"{target:#x}"
        ops = ops.split("#")[0].strip()
        lines.append(f"\t{mnem}\t{ops}" if ops else f"\t{mnem}")
    return "\n".join(lines) + "\n"


def mca(llvm_mca, cpu, asm_file):
    out = subprocess.run([llvm_mca, "-mtriple=x86_64-unknown-linux-gnu", f"-mcpu={cpu}",
                          "-iterations=1000", asm_file], capture_output=True, text=True)
    if out.returncode != 0:
        die(f"llvm-mca -mcpu={cpu} {asm_file}: {out.stderr.strip()}")
    v = {}
    for key in ("Iterations", "Total Cycles", "Total uOps"):
        m = re.search(rf"^{key}:\s+(\d+)", out.stdout, re.M)
        v[key] = int(m.group(1))
    return v["Total Cycles"] / v["Iterations"], v["Total uOps"] / v["Iterations"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True, help="the plain stamps' build (as shipped)")
    ap.add_argument("--bounded-binary", required=True,
                    help="the bounded stamps' build (the testing feature)")
    ap.add_argument("--llvm-mca", required=True)
    ap.add_argument("--objdump", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--kinds", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ)
    # Each kind from the build that counts it (cost_model.rs says which).
    binary_of = {k: b for b in (a.binary, a.bounded_binary) for k in run([b, "--list"]).split()}
    kinds = list(binary_of)
    if a.kinds:
        kinds = [k for k in kinds if k in a.kinds.split(",")]
    # Lists the CPUs it knows (and exits non-zero, as there is no input).
    h = subprocess.run([a.llvm_mca, "-mtriple=x86_64", "-mcpu=help"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
    known = h.stdout + h.stderr
    cpus = [(c, d) for c, d in CPUS if re.search(rf"^\s+{c}\s", known, re.M)]
    missing = [c for c, _ in CPUS if c not in dict(cpus)]
    disassembled, fns = {}, {}
    for b in set(binary_of.values()):
        disassembled[b] = disassemble(a.objdump, b)
        fns.update(json.loads(run([b, "--functions"])))
    rows = {}
    for kind in kinds:
        binary = binary_of[kind]
        insns, nxt, symbols = disassembled[binary]
        fn = fns[kind]
        sym = [s for s in symbols if re.search(rf"3x86{len(fn)}{fn}17h[0-9a-f]{{16}}E$", s)]
        if len(sym) != 1:
            die(f"{kind}: no single symbol for {fn} in {binary} ({sym})")
        n = a.calls
        # The bounded stamps' segment of their own (cost-model.sh made it).
        run_env = (env if binary == a.binary
                   else dict(env, HRTS_SEGMENT=env["HRTS_SEGMENT"] + "-bounded"))
        for attempt in range(3):
            t1, _, _ = callgrind(binary, kind, f"*x86::{fn}", n, f"{a.out}/{kind}.1.cg", run_env)
            t2, counts, taken = callgrind(binary, kind, f"*x86::{fn}", 2 * n,
                                          f"{a.out}/{kind}.2.cg", run_env)
            per_call = (t2 - t1) / n
            # Every call runs the same instructions: a fraction means one run
            # did something the other did not (a tie, when valgrind's slowness
            # let the tie interval pass): count again.
            if (t2 - t1) % n == 0:
                break
            print(f"  {kind}: {per_call:g} instructions per call is no whole number; "
                  "counting again", file=sys.stderr)
        path, opaque = hot_path(sym[0], symbols, insns, nxt, counts, taken, 2 * n)
        asm_file = f"{a.out}/{kind}.s"
        with open(asm_file, "w") as f:
            f.write(f"# {kind}: the instructions one call of {fn} runs, in order\n")
            f.write(asm_of(path, insns))
        model = {cpu: mca(a.llvm_mca, cpu, asm_file) for cpu, _ in cpus}
        # The read path alone: the same loop without the counter read, whose
        # model (microcode) is the least faithful part (README.md).
        bare_file = f"{a.out}/{kind}.without-read.s"
        with open(bare_file, "w") as f:
            f.write(asm_of([p for p in path if insns[p][0] not in COUNTER_READS], insns))
        bare = {cpu: mca(a.llvm_mca, cpu, bare_file) for cpu, _ in cpus}
        locked = sum(1 for p in path if insns[p][0].startswith("lock"))
        rows[kind] = (per_call, opaque, locked, model, bare)
        print(f"  {kind}: {per_call:g} instructions per call", file=sys.stderr)

    version = run([a.llvm_mca, "--version"]).splitlines()
    version = next((l.strip() for l in version if "LLVM version" in l), version[0])
    print(f"llvm-mca: {version}; {run(['valgrind', '--version']).strip()}")
    if missing:
        print(f"(this llvm-mca has no model for {', '.join(missing)})")
    print()
    print("| loop | instructions per call | locked | indirect calls | "
          + " | ".join(f"{c}: cycles / µops" for c, _ in cpus) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(cpus))
    for kind, (per_call, opaque, locked, model, _) in rows.items():
        print(f"| `{kind}` | {per_call:g} | {locked} | {opaque} | "
              + " | ".join(f"{model[c][0]:.2f} / {model[c][1]:.0f}" for c, _ in cpus) + " |")
    print()
    print("| loop | " + " | ".join(f"{c}: × counter read" for c, _ in cpus) + " | "
          + " | ".join(f"{c}: without the read" for c, _ in cpus) + " |")
    print("|---|" + "---:|" * (2 * len(cpus)))
    for kind, (_, _, _, model, bare) in rows.items():
        ref = REFERENCE.get(kind, "rdtsc")
        ratios = [f"{model[c][0] / rows[ref][3][c][0]:.2f} × `{ref}`"
                  if ref in rows and kind != ref else "" for c, _ in cpus]
        print(f"| `{kind}` | " + " | ".join(ratios) + " | "
              + " | ".join(f"{bare[c][0]:.2f} / {bare[c][1]:.0f}" for c, _ in cpus) + " |")
    print()
    print("Per call: instructions (callgrind, loop included), locked instructions on the "
          "hot path, indirect calls on it (not followed: the calendar clock's reads, whose "
          "vDSO code neither tool sees), and llvm-mca's cycles and µops for the hot path "
          "run as a loop (1000 "
          "iterations); then the cycles against the bare counter read's loop in the same "
          "model, and the hot path's cycles and µops with the counter read left out.")

if __name__ == "__main__":
    main()
