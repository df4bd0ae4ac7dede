"""Builds a root filesystem tarball holding this machine's Debian Python stack
(numpy, pandas, scikit-learn, scipy, Pillow, networkx), for `docker import`.

No registry is needed: the files come from the installed Debian packages and
their runtime dependencies (compilers and -dev packages pulled in only for
building extensions are left out). With --venv DIR, the agent environment (a
virtual environment over Debian's python3) goes in at /opt/mlepipe/agent, the
place bwrap jails mount it, so steps see the same layout on both backends.
Usage: rootfs.py OUT.tar [--venv DIR]
"""

import io
import os
import re
import subprocess
import sys
import tarfile

ROOTS = [
    "python3",
    "python3-numpy",
    "python3-pandas",
    "python3-sklearn",
    "python3-scipy",
    "python3-pil",
    "python3-networkx",
]
# Build-time tools some of them depend on (pythran pulls a C++ toolchain); not needed to run Python.
SKIP = re.compile(
    r"^(gcc|g\+\+|cpp|binutils|libboost|libclang|libllvm|llvm|clang|python3-pythran|python3-beniget|python3-gast|libc-dev-bin|libasan|libtsan|liblsan|libubsan|libhwasan|libitm|libquadmath|libgprofng|libctf|libstdc\+\+-\d+-dev|libgcc-\d+-dev|.*-dev|debconf|dpkg|perl.*|libperl.*|fonts-.*|fontconfig.*|libjs-.*|sensible-utils|init-system-helpers)$"
)
DROP = re.compile(r"^/usr/share/(doc|man|locale|info|lintian|bug|bash-completion)/|/__pycache__/|/tests?/")


def installed(pkg):
    r = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}\t${Depends}, ${Pre-Depends}", pkg], capture_output=True, text=True
    )
    if r.returncode != 0 or "ok installed" not in r.stdout:
        return None
    return r.stdout.split("\t", 1)[1]


def closure():
    seen, stack = set(), list(ROOTS)
    while stack:
        pkg = stack.pop().split(":")[0]
        if pkg in seen or SKIP.match(pkg):
            continue
        deps = installed(pkg)
        if deps is None:
            continue
        seen.add(pkg)
        for alt in deps.split(","):
            names = [a.strip().split(" ")[0] for a in alt.split("|") if a.strip()]
            # First alternative that is installed.
            for n in names:
                if installed(n.split(":")[0]) is not None:
                    stack.append(n)
                    break
    return sorted(seen)


LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"]


def alternative_links():
    """BLAS/LAPACK links made by update-alternatives (libblas.so.3 -> /etc/alternatives/... -> the chosen one)."""
    out = []
    for d in LIB_DIRS:
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                f = os.path.join(d, name)
                if (
                    re.match(r"lib(open)?(c?blas|lapack)", name)
                    and os.path.islink(f)
                    and os.readlink(f).startswith("/etc/alternatives/")
                ):
                    out.append(f)
    return out


def owners(paths):
    """Packages owning the files the alternatives point at (the chosen BLAS may be OpenBLAS)."""
    pkgs = set()
    for f in paths:
        r = subprocess.run(["dpkg", "-S", os.path.realpath(f)], capture_output=True, text=True)
        if r.returncode == 0:
            pkgs.add(r.stdout.split(":")[0].strip())
    return sorted(pkgs)


AGENT_IN_IMAGE = "opt/mlepipe/agent"


def add_venv(tar, venv, added):
    """The environment's files, owned by root and readable by all (steps run as nobody)."""
    for parent in ["opt", "opt/mlepipe"]:
        if parent not in added:
            info = tarfile.TarInfo(parent)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
            added.add(parent)

    def owned_by_root(info):
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        info.mode |= 0o444 if not info.isdir() else 0o555
        return info

    tar.add(venv, arcname=AGENT_IN_IMAGE, recursive=True, filter=owned_by_root)


def main(out, venv=None):
    ROOTS.extend(owners(alternative_links()))
    pkgs = closure()
    files = set()
    for p in pkgs:
        r = subprocess.run(["dpkg", "-L", p], capture_output=True, text=True)
        files.update(l for l in r.stdout.splitlines() if l.startswith("/"))
    # Merged-/usr symlinks, the dynamic loader's cache and the alternatives that link BLAS/LAPACK.
    extra = ["/bin", "/lib", "/lib64", "/sbin", "/etc/ld.so.cache", "/etc/alternatives"]
    added = set()

    def add(path, recursive=False):
        # /bin/x and /usr/bin/x are one file under merged /usr: name it by its real folder, once.
        name = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)).lstrip("/")
        if name in added:
            return
        # Parent folders get ordinary permissions (docker import would otherwise make them 0700).
        parts = name.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent not in added:
                added.add(parent)
                info = tarfile.TarInfo(parent)
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
        added.add(name)
        tar.add(path, arcname=name, recursive=recursive)

    with tarfile.open(out, "w") as tar:
        for d in ["tmp", "workspace", "task", "proc", "dev", "etc"]:
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if d == "tmp" else 0o755
            if d == "workspace":
                # Steps run as nobody; a volume mounted here starts with this owner.
                info.uid = info.gid = 65534
            tar.addfile(info)
            added.add(d)
        for f in extra:
            if os.path.lexists(f):
                add(f, recursive=f == "/etc/alternatives")
        for f in sorted(files):
            if DROP.search(f) or not os.path.lexists(f) or (os.path.isdir(f) and not os.path.islink(f)):
                continue
            add(f)
        for f in alternative_links():
            add(f)
        # SONAME links made by ldconfig (libopenblas.so.0 -> libopenblasp-r0.3.21.so) belong to no package.
        dirs = {os.path.dirname(os.path.realpath(f)) for f in files if os.path.isfile(f)}
        reals = {os.path.realpath(f) for f in files if os.path.isfile(f)}
        for d in sorted(dirs):
            for name in sorted(os.listdir(d)):
                f = os.path.join(d, name)
                if os.path.islink(f) and os.path.realpath(f) in reals:
                    add(f)
        passwd = b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        added.discard("etc/passwd")
        info = tarfile.TarInfo("etc/passwd")
        info.size = len(passwd)
        tar.addfile(info, io.BytesIO(passwd))
        if venv:
            add_venv(tar, venv, added)
    print(f"{len(pkgs)} packages, {len(files)} paths -> {out} ({os.path.getsize(out) / 1e6:.0f} MB)")


if __name__ == "__main__":
    args = sys.argv[1:]
    venv = None
    if "--venv" in args:
        i = args.index("--venv")
        venv = args[i + 1]
        del args[i : i + 2]
    main(args[0], venv)
