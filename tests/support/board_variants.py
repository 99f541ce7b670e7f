"""Variants of the QEMU board for tests: a copy of its folder, changed the way real boards
differ in where their kernel arguments come from.

`BoardCopy.make` copies the board folder (`BOARD_OUT`) into a test's temporary folder: the big
read-only files (kernel, FIT, U-Boot, QEMU) are symlinked, the environment and the disk image are
copied sparse, so each test changes its own. Then:

- `set_env` rewrites the factory environment image (the board is started with
  `--factory-env`), e.g. a `bootcmd` that rebuilds `bootargs` from another variable;
- `put` / `remove` rewrite the FAT boot partition with mtools, and `put_script` makes a U-Boot
  script image with mkimage (a `boot.scr` that sets `bootargs` itself);
- `use_extlinux` switches the board to distro boot from `/extlinux/extlinux.conf`;
- `add_fat_modules` gives the root file system the kernel's FAT modules, so Linux can mount the
  boot partition (`modprobe vfat`) as real boards can: the `--from-linux` file route.

`start` powers the copy on with its console on a TCP port, like the `board_url` fixture.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support.paths import BOARD_OUT, LAB

LINKED = ("Image", "board.itb", "u-boot.bin", "qemu", "initrd.cpio.gz", "kernel.config")
"""Files the board only reads: symlinked, not copied."""
COPIED = ("board.env", "boot.cmd", "boot.scr", "env-factory.txt")
SPARSE = ("disk.img", "env-factory.img", "env.img")
MTOOLS_ENV = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}


def _env_size(image: bytes) -> int:
    """The environment's size in its flash image: the size whose CRC32 matches the header."""
    crc = int.from_bytes(image[:4], "little")
    for shift in range(10, 22):
        size = 1 << shift
        if size <= len(image) and zlib.crc32(image[4:size]) == crc:
            return size
    raise ValueError("no U-Boot environment (CRC32 + data) found in the image")


def read_env_image(image: bytes) -> dict[str, str]:
    """The variables of a U-Boot environment image (CRC32, then `name=value` NUL-separated)."""
    size = _env_size(image)
    data = image[4:size].split(b"\0\0", 1)[0]
    pairs = (entry.decode("latin-1").split("=", 1) for entry in data.split(b"\0") if entry)
    return {name: value for name, value in pairs}


def write_env_image(image: bytes, env: Mapping[str, str]) -> bytes:
    """`image` holding `env` instead (same size, padding 0xff, new CRC)."""
    size = _env_size(image)
    data = b"".join(f"{k}={v}".encode("latin-1") + b"\0" for k, v in sorted(env.items()))
    body = (data + b"\0").ljust(size - 4, b"\xff")
    if len(body) > size - 4:
        raise ValueError("the environment does not fit its flash area")
    return zlib.crc32(body).to_bytes(4, "little") + body + image[size:]


def partition_offset(disk: Path, number: int) -> int:
    """Byte offset of MBR partition `number` (1-4) in a disk image."""
    return partition_extent(disk, number)[0]


def partition_extent(disk: Path, number: int) -> tuple[int, int]:
    """Byte offset and size of MBR partition `number` (1-4) in a disk image."""
    with disk.open("rb") as handle:
        mbr = handle.read(512)
    entry = mbr[446 + 16 * (number - 1): 446 + 16 * number]
    return (int.from_bytes(entry[8:12], "little") * 512,
            int.from_bytes(entry[12:16], "little") * 512)


FAT_MODULES = ("kernel/fs/fat/fat.ko", "kernel/fs/fat/vfat.ko", "kernel/fs/nls/nls_cp437.ko",
               "kernel/fs/nls/nls_ascii.ko", "kernel/fs/nls/nls_utf8.ko",
               "kernel/fs/nls/nls_iso8859-1.ko")
"""What mounting the FAT boot partition needs: vfat and the default code page and charset."""


def _listening(port: int) -> bool:
    wanted = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(row.split()[1].endswith(wanted) and row.split()[3] == "0A"
                   for row in list(table)[1:])


@dataclass(frozen=True)
class BoardCopy:
    """A test's own copy of the QEMU board folder."""

    folder: Path

    @classmethod
    def make(cls, folder: Path, source: Path = BOARD_OUT) -> BoardCopy:
        """Copy the board in `source` into `folder` (created)."""
        folder.mkdir(parents=True)
        for name in LINKED:
            if (source / name).exists():
                (folder / name).symlink_to((source / name).resolve())
        for name in COPIED:
            shutil.copyfile(source / name, folder / name)
        for name in SPARSE:
            subprocess.run(["cp", "--sparse=always", str(source / name), str(folder / name)],
                           check=True)
        return cls(folder)

    @property
    def boot_partition(self) -> str:
        """The FAT boot partition as mtools names it (`disk.img@@OFFSET`)."""
        return f"{self.folder / 'disk.img'}@@{partition_offset(self.folder / 'disk.img', 1)}"

    def env(self) -> dict[str, str]:
        """The factory environment the board starts from."""
        return read_env_image((self.folder / "env-factory.img").read_bytes())

    def set_env(self, changes: Mapping[str, str | None]) -> None:
        """Change the factory environment (None deletes a variable)."""
        path = self.folder / "env-factory.img"
        env = self.env()
        for name, value in changes.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        path.write_bytes(write_env_image(path.read_bytes(), env))

    def put(self, name: str, data: bytes | Path) -> None:
        """Write a file into the boot partition (`extlinux/extlinux.conf`; folders made)."""
        source = data if isinstance(data, Path) else self.folder / f".put-{Path(name).name}"
        if not isinstance(data, Path):
            source.write_bytes(data)
        parts = Path(name).parts
        for depth in range(1, len(parts)):
            folder = "::/" + "/".join(parts[:depth])
            subprocess.run(["mmd", "-D", "s", "-i", self.boot_partition, folder],
                           env=MTOOLS_ENV, capture_output=True, check=False)
        subprocess.run(["mcopy", "-o", "-i", self.boot_partition, str(source), f"::/{name}"],
                       env=MTOOLS_ENV, check=True, capture_output=True)

    def get(self, name: str) -> bytes:
        """A file of the boot partition."""
        return subprocess.run(["mtype", "-i", self.boot_partition, f"::/{name}"],
                              env=MTOOLS_ENV, check=True, capture_output=True).stdout

    def remove(self, name: str) -> None:
        """Delete a file of the boot partition."""
        subprocess.run(["mdel", "-i", self.boot_partition, f"::/{name}"], env=MTOOLS_ENV,
                       check=True, capture_output=True)

    def put_script(self, text: str, name: str = "boot.scr") -> None:
        """Make `text` a U-Boot script image (mkimage) and write it as `name`."""
        source = self.folder / f".{Path(name).stem}.cmd"
        image = self.folder / f".{Path(name).name}"
        source.write_text(text)
        subprocess.run(["mkimage", "-A", "arm64", "-O", "linux", "-T", "script", "-C", "none",
                        "-n", "test boot script", "-d", str(source), str(image)],
                       check=True, capture_output=True)
        self.put(name, image)

    def use_extlinux(self, append: str | None) -> None:
        """Distro boot from `/extlinux/extlinux.conf` (kernel `Image`, the initramfs, the device
        tree QEMU made), its `append` line `append` (None: no append line); no boot.scr."""
        self.put("Image", self.folder / "Image")
        self.put("initrd.cpio.gz", self.folder / "initrd.cpio.gz")
        lines = ["default linux", "timeout 0", "", "label linux", "    kernel /Image",
                 "    initrd /initrd.cpio.gz"]
        if append is not None:
            lines.append(f"    append {append}")
        self.put("extlinux/extlinux.conf", ("\n".join(lines) + "\n").encode())
        self.remove("boot.scr")

    def use_extlinux_ext4(self, append: str, work: Path) -> None:
        """Distro boot from `/extlinux/extlinux.conf` on an ext4 boot partition, as Debian,
        Fedora and Yocto `wic` images have it: the disk is made again (no loop device:
        `mkfs.ext4 -d` from a folder, `sfdisk`, `dd`) with partition 1 ext4 and bootable
        (the kernel `Image`, the initramfs, extlinux.conf with `append`) and partition 2 the
        board's root file system as it was. `work` is a scratch folder."""
        tree = work / "boot"
        (tree / "extlinux").mkdir(parents=True)
        shutil.copyfile(self.folder / "Image", tree / "Image")
        shutil.copyfile(self.folder / "initrd.cpio.gz", tree / "initrd.cpio.gz")
        (tree / "extlinux" / "extlinux.conf").write_text(
            "default linux\ntimeout 0\n\nlabel linux\n    kernel /Image\n"
            f"    initrd /initrd.cpio.gz\n    append {append}\n")
        disk = self.folder / "disk.img"
        offset, size = partition_extent(disk, 2)
        boot = work / "p1.img"
        subprocess.run(["truncate", "-s", "96M", str(boot)], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "boot", "-d", str(tree), str(boot)],
                       check=True, capture_output=True)
        rebuilt = work / "disk.img"
        subprocess.run(["truncate", "-s", f"{1 + 96 + size // 2**20 + 1}M", str(rebuilt)],
                       check=True)
        table = ("label: dos\nstart=1MiB, size=96MiB, type=83, bootable\n"
                 f"start=97MiB, size={size // 2**20}MiB, type=83\n")
        subprocess.run(["sfdisk", "-q", str(rebuilt)], input=table.encode(), check=True,
                       capture_output=True)
        subprocess.run(["dd", f"if={boot}", f"of={rebuilt}", "bs=1M", "seek=1",
                        "conv=notrunc,sparse", "status=none"], check=True)
        with disk.open("rb") as source, rebuilt.open("r+b") as target:
            source.seek(offset)
            target.seek(97 * 2**20)
            target.write(source.read(size))
        rebuilt.replace(disk)

    def boot_file(self, path: str) -> bytes:
        """A file of the ext4 boot partition (`use_extlinux_ext4`), read with debugfs."""
        offset, _ = partition_extent(self.folder / "disk.img", 1)
        return subprocess.run(["debugfs", "-R", f"cat {path}",
                               f"{self.folder / 'disk.img'}?offset={offset}"],
                              check=True, capture_output=True).stdout

    def add_fat_modules(self, work: Path) -> str:
        """Put the kernel package's FAT modules (`FAT_MODULES`) with a `modules.dep` (host
        depmod) under /lib/modules/KVER of the root file system (ext4, partition 2, written
        with debugfs through a copy of the partition); `work` is a scratch folder. Returns
        KVER."""
        (deb,) = sorted((BOARD_OUT / "cache" / "debs").glob("linux-image-*.deb"))
        tree = work / "modules"
        tree.mkdir(parents=True)
        unpack = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                                  stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(tree), "--wildcards",
                        *(f"./lib/modules/*/{name}" for name in FAT_MODULES),
                        "./lib/modules/*/modules.builtin", "./lib/modules/*/modules.order"],
                       stdin=unpack.stdout, check=True)
        assert unpack.wait() == 0
        (kver,) = [path.name for path in (tree / "lib" / "modules").iterdir()]
        subprocess.run(["depmod", "-b", str(tree), kver], check=True, capture_output=True)
        base = tree / "lib" / "modules" / kver
        files = sorted(path.relative_to(base) for path in base.rglob("*") if path.is_file())
        folders = sorted({parent for path in files for parent in path.parents
                          if parent != Path(".")}, key=lambda path: len(path.parts))
        script = [f"mkdir /lib/modules/{kver}",
                  *(f"mkdir /lib/modules/{kver}/{folder}" for folder in folders),
                  *(f"write {base / path} /lib/modules/{kver}/{path}" for path in files)]
        (work / "debugfs.cmd").write_text("\n".join(script) + "\n")
        disk = self.folder / "disk.img"
        offset, size = partition_extent(disk, 2)
        rootfs = work / "rootfs.img"
        with disk.open("rb") as source, rootfs.open("wb") as copy:
            source.seek(offset)
            copy.write(source.read(size))
        subprocess.run(["debugfs", "-w", "-f", str(work / "debugfs.cmd"), str(rootfs)],
                       check=True, capture_output=True)
        listed = subprocess.run(["debugfs", "-R", f"ls -l /lib/modules/{kver}/kernel/fs/fat",
                                 str(rootfs)], check=True, capture_output=True, text=True)
        if "vfat.ko" not in listed.stdout:
            raise RuntimeError(f"debugfs did not write the modules: {listed.stdout}")
        with disk.open("r+b") as target:
            target.seek(offset)
            target.write(rootfs.read_bytes())
        return kver

    @contextmanager
    def start(self) -> Iterator[str]:
        """Power the copy on (factory environment, console on TCP): its `socket://` URL."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        board = subprocess.Popen(["bash", str(LAB / "run-board.sh"), "--out", str(self.folder),
                                  "--serial", f"tcp:{port}", "--factory-env"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not _listening(port):  # connecting would power the board on: only look
                if board.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the QEMU board copy did not open its console port")
                time.sleep(0.1)
            yield f"socket://127.0.0.1:{port}"
        finally:
            board.terminate()
            board.wait(timeout=30)
