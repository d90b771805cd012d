"""The guests of tests/vm: a Debian cloud kernel and a busybox initramfs.

Everything comes from Debian packages and this tree:

  kernel      vmlinuz of the Debian cloud kernel (linux-image-cloud-amd64's
              versioned dependency), taken with 'apt-get download' and
              'dpkg-deb -x' into build/guest/: nothing is installed on the
              host.  The virtio and ACPI button modules the guest needs
              (with their dependencies from modules.dep) go into the
              initramfs.
  initramfs   /bin/busybox (busybox-static) with a link per applet, /init
              (guest/init: modules, eth0 from the kernel command line
              "pac.ip=ADDR/LEN", the command server on TCP port 7000),
              /bin/xfer (guest/xfer.c, static: the guest's end of a checked
              transfer, the protocol of tcp_xfer.py) and /bin/incast
              (tools/incast-app, static).

build() returns a Guest with the two paths.  The result is cached in
build/guest/<digest>/, where the digest covers every input (the kernel
package's file name, busybox's and the sources' contents, this file), so
it is remade only when one of them changes.

    python3 tools/testbed/guest.py      # builds, prints the two paths
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent
GUEST_SRC = HERE / "guest"
BUSYBOX = Path("/bin/busybox")
KERNEL_META = "linux-image-cloud-amd64"
# Modules the guest loads (with what they depend on), in this order.
MODULES = ["virtio_pci", "virtio_net", "button", "evdev"]


@dataclass
class Guest:
    kernel: Path
    initrd: Path
    release: str        # uname -r of the kernel


class GuestBuildError(RuntimeError):
    pass


def _run(cmd: list[str], cwd: Optional[Path] = None,
         timeout: float = 300) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise GuestBuildError(f"{' '.join(cmd)}: exit {proc.returncode}: "
                              f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def kernel_package() -> str:
    """The versioned kernel package that linux-image-cloud-amd64 names."""
    out = _run(["apt-cache", "depends", KERNEL_META])
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Depends:") and "linux-image-" in line:
            return line.split()[1]
    raise GuestBuildError(f"apt-cache depends {KERNEL_META}: no kernel "
                          f"image package in:\n{out}")


def kernel_deb(cache: Path) -> Path:
    """The kernel package's .deb in 'cache' (downloaded once)."""
    cache.mkdir(parents=True, exist_ok=True)
    name = kernel_package()
    debs = sorted(cache.glob(f"{name}_*.deb"))
    if not debs:
        _run(["apt-get", "download", name], cwd=cache)
        debs = sorted(cache.glob(f"{name}_*.deb"))
        if not debs:
            raise GuestBuildError(f"apt-get download {name} left no .deb "
                                  f"in {cache}")
    return debs[-1]


def _digest(deb: Path) -> str:
    h = hashlib.sha256()
    h.update(deb.name.encode())
    sources = sorted(GUEST_SRC.iterdir()) + sorted(
        (TOP / "tools" / "incast-app").glob("*.[ch]")) + [Path(__file__),
                                                       BUSYBOX]
    for p in sources:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    h.update(" ".join(MODULES).encode())
    return h.hexdigest()[:16]


def _module_closure(moddir: Path) -> list[str]:
    """Paths (relative to moddir) of MODULES and their dependencies,
    dependencies first."""
    deps: dict[str, list[str]] = {}
    by_name: dict[str, str] = {}
    for line in (moddir / "modules.dep").read_text().splitlines():
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
        by_name[Path(path).name.split(".")[0].replace("-", "_")] = path
    order: list[str] = []

    def visit(path: str) -> None:
        if path in order:
            return
        for dep in deps.get(path, []):
            visit(dep)
        order.append(path)
    for name in MODULES:
        if name not in by_name:
            continue        # built in
        visit(by_name[name])
    return order


def _cpio_newc(root: Path, out: Path) -> None:
    """Writes 'root' as a gzipped newc cpio archive (the initramfs)."""
    ino = 1
    with gzip.open(out, "wb", compresslevel=6) as f:
        def entry(name: str, mode: int, data: bytes) -> None:
            nonlocal ino
            nb = name.encode() + b"\0"
            hdr = "070701" + "".join(f"{v:08x}" for v in (
                ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0))
            ino += 1
            f.write(hdr.encode() + nb)
            f.write(b"\0" * (-(110 + len(nb)) % 4))
            f.write(data)
            f.write(b"\0" * (-len(data) % 4))
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            if rel != ".":
                entry(rel, 0o040755, b"")
            for fn in sorted(filenames):
                p = Path(dirpath) / fn
                name = os.path.normpath(os.path.join(rel, fn))
                st = p.lstat()
                if p.is_symlink():
                    entry(name, 0o120777, os.readlink(p).encode())
                else:
                    entry(name, 0o100000 | (st.st_mode & 0o7777),
                          p.read_bytes())
        entry("TRAILER!!!", 0, b"")


def _static_cc(out: Path, sources: list[Path], libs: list[str]) -> None:
    _run(["gcc", "-O2", "-static", "-std=gnu11", "-Wall", "-o", str(out)]
         + [str(s) for s in sources] + libs)


def build(dest: Optional[Path] = None) -> Guest:
    """The guest's kernel and initramfs, made if missing or stale."""
    top = Path(dest or TOP / "build" / "guest")
    if not os.access(BUSYBOX, os.X_OK):
        raise GuestBuildError(f"{BUSYBOX} missing: install busybox-static "
                              "(tools/install-deps)")
    deb = kernel_deb(top / "debs")
    out = top / _digest(deb)
    guest_file = out / "release"
    if guest_file.exists():
        return Guest(out / "vmlinuz", out / "initrd.gz",
                     guest_file.read_text().strip())

    tmp = Path(tempfile.mkdtemp(prefix="guest-", dir=top))
    try:
        kroot = tmp / "kernel"
        _run(["dpkg-deb", "-x", str(deb), str(kroot)])
        vmlinuz = sorted((kroot / "boot").glob("vmlinuz-*"))
        if not vmlinuz:
            raise GuestBuildError(f"{deb.name} holds no /boot/vmlinuz-*")
        release = vmlinuz[0].name[len("vmlinuz-"):]
        moddir = kroot / "lib" / "modules" / release
        # The package leaves modules.dep to its postinst.
        _run(["depmod", "-b", str(kroot), release])

        root = tmp / "root"
        for d in ("bin", "sbin", "proc", "sys", "dev", "tmp", "etc",
                  "lib/modules"):
            (root / d).mkdir(parents=True, exist_ok=True)
        shutil.copy2(BUSYBOX, root / "bin" / "busybox")
        applets = _run([str(BUSYBOX), "--list"]).split()
        for applet in applets:
            if applet != "busybox" and not (root / "bin" / applet).exists():
                os.symlink("busybox", root / "bin" / applet)
        shutil.copy2(GUEST_SRC / "init", root / "init")
        os.chmod(root / "init", 0o755)
        _static_cc(root / "bin" / "xfer", [GUEST_SRC / "xfer.c"], [])
        _static_cc(root / "bin" / "incast",
                   sorted((TOP / "tools" / "incast-app").glob("*.c")),
                   ["-lm"])
        order = _module_closure(moddir)
        for rel in order:
            dst = root / "lib" / "modules" / Path(rel).name
            shutil.copy2(moddir / rel, dst)
        (root / "modules.order").write_text(
            "".join(Path(rel).name + "\n" for rel in order))

        stage = tmp / "out"
        stage.mkdir()
        shutil.copy2(vmlinuz[0], stage / "vmlinuz")
        _cpio_newc(root, stage / "initrd.gz")
        (stage / "release").write_text(release + "\n")
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Guest(out / "vmlinuz", out / "initrd.gz", release)


def main() -> int:
    try:
        g = build()
    except GuestBuildError as e:
        print(f"guest.py: {e}", file=sys.stderr)
        return 1
    print(f"kernel {g.kernel} ({g.release})\ninitrd {g.initrd}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
