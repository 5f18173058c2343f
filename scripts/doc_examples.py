#!/usr/bin/env python3
"""The examples in the docs compile and run; every relative link resolves.

Called by scripts/doc-examples.sh (which builds what it needs first); see that script
for the conventions. Usage: doc_examples.py ROOT VERSION LIBDIR JAR
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unicodedata

ROOT, VERSION, LIBDIR, JAR = sys.argv[1:5]
HRTS = os.path.join(LIBDIR, "hrts")
os.chdir(ROOT)
# HRTS_DOC_EXAMPLES_FILES (paths relative to the root, space-separated) checks other files:
# the script's own test feeds it examples that must fail.
EXAMPLE_FILES = os.environ.get("HRTS_DOC_EXAMPLES_FILES", "").split() or (
    ["README.md", "DEVELOPERS.md"] + sorted(glob.glob("docs/*.md"))
)
LINK_FILES = EXAMPLE_FILES
RUN_TIMEOUT = 120
COMPILED = {"c", "java", "rust"}
SHELLS = {"sh", "bash", "shell"}
VERBOSE = os.environ.get("HRTS_DOC_EXAMPLES_VERBOSE") == "1"

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$")


def blocks(path):
    """Every fenced code block of a Markdown file: (line, lang, flags, text)."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang, rest = len(m.group(1)), m.group(2), m.group(3).lower(), m.group(4)
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence[0] * len(fence)) and lines[i].strip().strip(fence[0]) == ""
        ):
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line)
            i += 1
        i += 1
        out.append((start, lang, set(rest.split()), "\n".join(body) + "\n"))
    return out


def complete(lang, text):
    if lang == "c":
        return re.search(r"\bint\s+main\s*\(", text) is not None
    if lang == "rust":
        return re.search(r"\bfn\s+main\s*\(", text) is not None
    if lang == "java":
        return (
            "public static void main" in text
            or re.search(r"^(public\s+|final\s+|abstract\s+)*(class|record|interface|enum)\s+\w+", text, re.M)
            is not None
        )
    return False


def java_class(text):
    """The file name javac wants: the public top-level class, else the one with main."""
    m = re.search(r"^public\s+(?:final\s+|abstract\s+)*(?:class|record|interface|enum)\s+(\w+)", text, re.M)
    if m:
        return m.group(1)
    names = re.findall(r"^(?:final\s+|abstract\s+)*(?:class|record|interface|enum)\s+(\w+)", text, re.M)
    return names[0] if names else "Example"


class Run:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="hrts-doc-examples-")
        os.chmod(self.tmp, 0o700)
        tag = "%d-%d" % (os.getpid(), int.from_bytes(os.urandom(2), "little"))
        self.segment = "/hrts-docex-%s" % tag
        self.segment2 = "/hrts-docex2-%s" % tag
        self.stats_segment = "/hrts-docex-stats-%s" % tag
        self.passed = 0
        self.failed = 0
        self.counts = {}  # lang -> [found, compiled, ran, failed, skipped]
        self.failures = []
        os.makedirs(os.path.join(self.tmp, "state"), mode=0o700)
        os.makedirs(os.path.join(self.tmp, "work"), mode=0o700)
        env = dict(os.environ)
        env.update(
            HRTS_SEGMENT=self.segment,
            HRTS_STATS_SEGMENT=self.stats_segment,
            XDG_STATE_HOME=os.path.join(self.tmp, "state"),
            TMPDIR=os.path.join(self.tmp, "work"),
            LD_LIBRARY_PATH=LIBDIR + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else ""),
            PATH=LIBDIR + ":" + env.get("PATH", ""),
        )
        self.env = env

    def count(self, lang, what):
        c = self.counts.setdefault(lang, {"found": 0, "compiled": 0, "ran": 0, "failed": 0, "skipped": 0})
        c[what] += 1

    def ok(self, lang, where, what, output=""):
        self.passed += 1
        print("doc-examples: ok %s (%s, %s)" % (where, lang, what))
        if VERBOSE and output.strip():
            print("\n".join("    " + line for line in output.strip().split("\n")[-10:]))

    def fail(self, lang, where, why, output=""):
        self.failed += 1
        self.count(lang, "failed")
        text = "doc-examples: FAIL %s (%s): %s" % (where, lang, why)
        if output:
            tail = output.strip().split("\n")[-25:]
            text += "\n" + "\n".join("    " + line for line in tail)
        print(text)
        self.failures.append(where)

    def sh(self, argv, cwd=None, timeout=RUN_TIMEOUT, env=None):
        """Runs argv; returns (ok, output). A timeout kills its whole process group."""
        try:
            p = subprocess.Popen(
                argv,
                cwd=cwd or self.tmp,
                env=env or self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                text=True,
            )
        except OSError as e:
            return False, str(e)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            return False, (out or "") + "\n(killed after %d s)" % timeout
        if p.returncode != 0:
            return False, (out or "") + "\n(exit status %d)" % p.returncode
        return True, out or ""

    def cleanup(self):
        for name in (self.segment, self.segment2):
            self.sh([HRTS, "--segment", name, "unlink"], cwd=ROOT, timeout=30)
        self.sh([HRTS, "stats", "unlink"], cwd=ROOT, timeout=30)
        shutil.rmtree(self.tmp, ignore_errors=True)


def check_c(run, items):
    for n, (where, text, norun) in enumerate(items):
        d = os.path.join(run.tmp, "c", str(n))
        os.makedirs(d)
        src, exe = os.path.join(d, "example.c"), os.path.join(d, "example")
        with open(src, "w") as f:
            f.write(text)
        cc = os.environ.get("CC", "cc")
        ok, out = run.sh(
            [cc, "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "include"), src, "-o", exe,
             "-L", LIBDIR, "-lhrts", "-Wl,-rpath," + LIBDIR],
        )
        if not ok:
            run.fail("c", where, "does not compile", out)
            continue
        run.count("c", "compiled")
        if norun:
            run.ok("c", where, "compiled")
            continue
        ok, out = run.sh([exe, run.segment2], cwd=os.path.join(run.tmp, "work"))
        if not ok:
            run.fail("c", where, "compiles, but its run failed", out)
            continue
        run.count("c", "ran")
        run.ok("c", where, "compiled and ran", out)


def check_java(run, items):
    for n, (where, text, norun) in enumerate(items):
        d = os.path.join(run.tmp, "java", str(n))
        os.makedirs(d)
        cls = java_class(text)
        src = os.path.join(d, cls + ".java")
        with open(src, "w") as f:
            f.write(text)
        ok, out = run.sh(["javac", "--release", "17", "-Xlint:all,-try", "-Werror", "-cp", JAR, "-d", d, src])
        if not ok:
            run.fail("java", where, "does not compile", out)
            continue
        run.count("java", "compiled")
        if norun or "static void main" not in text:
            run.ok("java", where, "compiled")
            continue
        ok, out = run.sh(
            ["java", "-Djava.io.tmpdir=" + os.path.join(run.tmp, "work"), "-cp", JAR + os.pathsep + d, cls,
             run.segment2],
            cwd=os.path.join(run.tmp, "work"),
        )
        if not ok:
            run.fail("java", where, "compiles, but its run failed", out)
            continue
        run.count("java", "ran")
        run.ok("java", where, "compiled and ran", out)


def check_rust(run, items):
    if not items:
        return
    proj = os.path.join(run.tmp, "rust")
    os.makedirs(os.path.join(proj, "src"))
    bins = []
    for n, (where, text, norun) in enumerate(items):
        name = "example%d" % n
        with open(os.path.join(proj, "src", name + ".rs"), "w") as f:
            f.write(text)
        bins.append('[[bin]]\nname = "%s"\npath = "src/%s.rs"\n' % (name, name))
    deps = "".join(
        '%s = { path = "%s" }\n' % (crate, os.path.join(ROOT, "native", d))
        for crate, d in (("hrts-core", "core"), ("hrts-stats", "stats"), ("hrts-trace", "trace"))
    )
    with open(os.path.join(proj, "Cargo.toml"), "w") as f:
        f.write(
            '[package]\nname = "hrts-doc-examples"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
            # Warnings are errors in the examples alone (the clippy stage holds the crates
            # to that), and the profile is the repository's: with the same target
            # directory, the crates and their dependencies built for its tests are reused
            # where their features agree, instead of a build of everything of its own.
            "[lints.rust]\nwarnings = \"deny\"\n\n"
            '[profile.dev]\ndebug = "line-tables-only"\n\n[profile.dev.package."*"]\ndebug = false\n\n'
            "[workspace]\n\n[dependencies]\n" + deps + "\n" + "\n".join(bins)
        )
    # The repository's lock file: the same dependency versions as its own build, no resolution.
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(proj, "Cargo.lock"))
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    env = dict(run.env, CARGO_TARGET_DIR=target)
    env.pop("RUSTFLAGS", None)
    for n, (where, text, norun) in enumerate(items):
        name = "example%d" % n
        ok, out = run.sh(["cargo", "build", "--quiet", "--bin", name], cwd=proj, timeout=1800, env=env)
        if not ok:
            run.fail("rust", where, "does not compile", out)
            continue
        run.count("rust", "compiled")
        if norun:
            run.ok("rust", where, "compiled")
            continue
        ok, out = run.sh([os.path.join(target, "debug", name), run.segment2], cwd=os.path.join(run.tmp, "work"))
        if not ok:
            run.fail("rust", where, "compiles, but its run failed", out)
            continue
        run.count("rust", "ran")
        run.ok("rust", where, "compiled and ran", out)


def check_shell(run, items):
    for n, (where, text, _) in enumerate(items):
        script = os.path.join(run.tmp, "run%d.sh" % n)
        with open(script, "w") as f:
            f.write("set -euo pipefail\n" + text)
        # A shell block may build (docs/c.md's `cargo cinstall` is a fat-LTO release build
        # of its own, cold on a fresh clone): the Rust examples' limit, not a run's.
        ok, out = run.sh(["bash", script], cwd=ROOT, timeout=1800)
        if not ok:
            run.fail("sh", where, "the commands failed", out)
            continue
        run.count("sh", "ran")
        run.ok("sh", where, "ran", out)


# ---- links ----

def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "").strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def strip_code(text):
    """The text without fenced blocks and inline code (their brackets are not links)."""
    lines, inside, fence = [], False, ""
    for line in text.split("\n"):
        m = FENCE.match(line)
        if not inside and m:
            inside, fence = True, m.group(2)[0] * len(m.group(2))
            lines.append("")
            continue
        if inside:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                inside = False
            lines.append("")
            continue
        lines.append(re.sub(r"(`+)(.+?)\1", "", line))
    return lines


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            lines = strip_code(f.read())
        with open(path, encoding="utf-8") as f:
            raw = f.read().split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                # the heading as written (inline code stripped above is part of its text)
                text = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", raw[i]).group(1)
                s = slug(text)
                k = seen.get(s, 0)
                seen[s] = k + 1
                found.add(s if k == 0 else "%s-%d" % (s, k))
            for a in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", raw[i]):
                found.add(a)
        cache[path] = found
    return cache[path]


LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def check_links(run, path):
    with open(path, encoding="utf-8") as f:
        lines = strip_code(f.read())
    broken = 0
    checked = 0
    for lineno, line in enumerate(lines, 1):
        for target in LINK.findall(line):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            checked += 1
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            why = None
            if not os.path.exists(dest):
                why = "%s does not exist" % os.path.relpath(dest, ROOT)
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                why = "%s has no heading for #%s" % (os.path.relpath(dest, ROOT), anchor)
            if why:
                broken += 1
                run.failed += 1
                print("doc-examples: FAIL %s:%d: link %s: %s" % (path, lineno, target, why))
    if broken == 0:
        run.passed += 1
    return checked, broken


def main():
    os.chdir(ROOT)
    run = Run()
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda *_: (run.cleanup(), sys.exit(130)))
    try:
        work = {"c": [], "java": [], "rust": [], "sh": []}
        for path in EXAMPLE_FILES:
            for line, lang, flags, text in blocks(path):
                where = "%s:%d" % (path, line)
                if lang in SHELLS:
                    if "run" in flags:
                        run.count("sh", "found")
                        work["sh"].append((where, text, False))
                    continue
                if lang not in COMPILED:
                    continue
                run.count(lang, "found")
                if "fragment" in flags:
                    run.count(lang, "skipped")
                    continue
                if not complete(lang, text):
                    run.fail(lang, where, "not a complete program: make it one, or mark the fence "
                             "```%s fragment to skip it" % lang)
                    continue
                work[lang].append((where, text, "norun" in flags))
        check_c(run, work["c"])
        check_java(run, work["java"])
        check_rust(run, work["rust"])
        check_shell(run, work["sh"])
        links = broken = 0
        for path in LINK_FILES:
            c, b = check_links(run, path)
            links += c
            broken += b
    finally:
        run.cleanup()
    for lang in ("c", "java", "rust", "sh"):
        c = run.counts.get(lang, {"found": 0, "compiled": 0, "ran": 0, "failed": 0, "skipped": 0})
        if lang == "sh":
            print("doc-examples: sh: %d marked runnable, %d ran, %d failed" % (c["found"], c["ran"], c["failed"]))
        else:
            print("doc-examples: %s: %d blocks, %d compiled, %d ran, %d fragments skipped, %d failed"
                  % (lang, c["found"], c["compiled"], c["ran"], c["skipped"], c["failed"]))
    print("doc-examples: links: %d relative links in %d files, %d broken" % (links, len(LINK_FILES), broken))
    print("doc-examples: %d passed, %d failed" % (run.passed, run.failed))
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
