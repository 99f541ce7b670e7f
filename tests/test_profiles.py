"""The built-in marker profiles (linux, resume) against real console lines, and profile loading.

Example lines come from real boot logs (the QEMU board in ../shared/lab, vendor forums, GitHub
issues, mailing lists) or from the format strings of the programs that print them (U-Boot,
barebox, TF-A, OP-TEE, Linux, systemd, BusyBox, procd).
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
from support.paths import BOOTLAB

from bootlab.core.analysis.pipeline import Capture, MarkerSet, analyze, parse_line
from bootlab.core.analysis.profiles import (
    STAGES,
    Profile,
    ProfileError,
    load_profile,
    parse_profile,
)

STANDARD_IDS = (
    "spl", "bootloader", "autoboot", "kernel_loaded", "starting_kernel", "decompressed", "linux",
    "calibrate", "root_wait", "ubi_attached", "root_mounted", "kernel_done", "init", "network_up",
    "login",
)


@pytest.fixture(scope="module")
def linux() -> Profile:
    return load_profile("linux")


@pytest.fixture(scope="module")
def resume() -> Profile:
    return load_profile("resume")


def _hits(markers: MarkerSet, line: str, partial: bool = False) -> dict[str, dict]:
    """Milestone id -> values, for the markers whose match or weak patterns the line fits."""
    parsed = parse_line(1, line.encode("utf-8"), None)
    return {m.id: hit.values for m, hit in markers.match(parsed, partial=partial)
            if hit.kind in ("match", "weak")}


def _variants(line: str) -> list[str]:
    """The line as it reaches the matcher: bare, with printk stamps, with CRLF."""
    return [
        line,
        line + "\r",
        f"[    1.234567] {line}",
        f"[    1.234567] {line}\r",
        f"[    2.000001][    T1] {line}\r",
        f"<6>[   12.500000] {line}",
    ]


# --- positive examples: (milestone id(s), line, values the match must extract) ----------------

LINUX_MATCHES: list[tuple[str | frozenset[str], str, dict]] = [
    # firmware: boot ROM companions, one banner per boot
    ("firmware", "G12B:BL:6e7c85:7898ac;FEAT:E0F83180:402000;POC:F;RCY:0;EMMC:0;READ:0;0.0;CHK:0;",
     {}),
    ("firmware", "GXL:BL1:9ac50e:bb16dc;FEAT:ADFC318C:0;POC:3;RCY:0;EMMC:0;READ:0;CHK:AA;SD:0;",
     {}),
    ("firmware", "I> MB1 (prd-version: 1.5.1.3-t194-41334769-d2a21c57)", {}),
    ("firmware", "I> MB1 (version: 1.4.0.1-t234-54845784-08e631ca)", {}),
    ("firmware", "DDR Version 1.25 20210517", {}),
    ("firmware", "DDR V1.09 a930779e06 typ 22/11/21-17:50:56", {}),
    ("firmware", "DDR Version V1.08 20220617", {}),
    ("firmware", "[238]HELLO! SBOOT is starting!", {}),
    ("firmware", "HELLO! BOOT0 is starting!", {}),
    ("firmware", "coreboot-4.19 Mon Jan 09 10:00:00 UTC 2023 bootblock starting (log level: 7)...",
     {}),
    ("firmware", "NOTICE:  Booting Trusted Firmware", {}),
    ("tpl", "U-Boot TPL 2021.01 (Jan 17 2021 - 23:49:14)", {}),
    ("tpl", "U-Boot TPL 2026.07-1 (Aug 02 2026 - 18:22:19)", {"tpl_version": "2026.07-1"}),
    ("spl", "U-Boot SPL 2021.04 (Apr 12 2021 - 10:00:00 +0000)", {}),
    ("spl", "U-Boot SPL 2021.01-g2ee8efd654 (Feb 24 2023 - 05:37:51 +0000)",
     {"spl_version": "2021.01-g2ee8efd654"}),
    ("spl", "U-Boot SPL 2017.09-gc060f28d70-220414 #zyf (Apr 18 2022 - 18:13:34)", {}),
    ("spl", "U-Boot SPL board init", {}),
    ("bl2", "NOTICE:  BL2: v2.6(release):v2.6-dirty", {"bl2_version": "v2.6(release):v2.6-dirty"}),
    ("bl2", "BL2 Built : 20:29:41, Jun 18 2019. g12b g486bc38 - gongwei.chen@droid11-sz", {}),
    ("bl31", "NOTICE:  BL31: v2.6(release):v2.6-rc0-2-g0ae2a7e5a",
     {"tfa_version": "v2.6(release):v2.6-rc0-2-g0ae2a7e5a"}),
    ("bl31", "NOTICE: BL31: v2.8(release):v2.8-226-g2fcd408bb3-dirty", {}),
    ("bl31", "NOTICE:  BL31: v2.3():v2.3-557-g9609b9c19:derrick.huang", {}),
    ("bl31", "NOTICE:  BL31: v1.3(release):4fc40b1", {"tfa_version": "v1.3(release):4fc40b1"}),
    ("bl31", "NOTICE:  BL3-1: v1.0(debug):a1b2c3d", {}),
    ("optee", "I/TC: OP-TEE version: 3.19.0 (gcc version 12.2.0 (GCC)) #1 Fri Jan 13 10:00:00 UTC "
              "2023 aarch64", {"optee_version": "3.19.0"}),
    ("optee", "I/TC: OP-TEE version: ti2019.05-rc1-dev (gcc version 8.3.0) #1 Mon Nov 2 2020 "
              "aarch64", {"optee_version": "ti2019.05-rc1-dev"}),
    ("optee", "M/TC: OP-TEE version: 15ee1539b (gcc version 5.3.1 20160412) #1 Tue Mar 29 2022 arm",
     {}),
    # bootloader
    ("bootloader", "U-Boot 2023.01+dfsg-2+deb12u3 (Jun 22 2026 - 08:38:07 +0000)",
     {"uboot_version": "2023.01+dfsg-2+deb12u3"}),
    ("bootloader", "U-Boot 2021.01 (Jan 17 2021 - 23:49:14 +0000) OpenWrt", {}),
    ("bootloader", "U-Boot 2018.07 (Jan 12 2024 - 03:37:35 +0000) Allwinner Technology", {}),
    ("bootloader", "U-Boot 1.1.4 (Sep 25 2012 - 10:00:00)", {"uboot_version": "1.1.4"}),
    ("bootloader", "barebox 2017.12.0-bsp-yocto-i.mx6-pd18.1.1 #1 Thu Jul 25 13:13:48 UTC 2019",
     {"barebox_version": "2017.12.0-bsp-yocto-i.mx6-pd18.1.1"}),
    ("bootloader", "barebox 2023.01.0 #1 Mon Jan 9 10:00:00 UTC 2023",
     {"barebox_version": "2023.01.0"}),
    ("bootloader", "Jetson UEFI firmware (version 36.4.4-gcid-41062509 built on "
                   "2025-06-16T15:25:51+00:00)", {}),
    # x86, UEFI: GRUB is the bootloader
    (frozenset({"grub", "bootloader"}), "Welcome to GRUB!", {}),
    (frozenset({"grub", "bootloader"}),
     "    GNU GRUB  version 0.97  (604K lower / 244604K upper memory)", {"grub_version": "0.97"}),
    ("env_loaded", "In:    pl011@9000000", {}),
    ("env_loaded", "In:    serial", {}),
    ("autoboot", "Hit any key to stop autoboot:  2 ", {}),
    ("autoboot", "Hit any key to stop autoboot:  2 \x08\x08\x08 1 \x08\x08\x08 0 ", {}),
    ("autoboot", "Press SPACE to abort autoboot in 2 seconds", {"bootdelay": 2}),
    ("autoboot", "Autoboot in 5 seconds", {"bootdelay": 5}),
    ("autoboot", "Hit SPACE in 3 seconds to stop autoboot", {"bootdelay": 3}),
    ("autoboot", "Hit m for menu or any other key to stop autoboot:    1", {}),
    ("autoboot", "Hit any to stop autoboot:    3", {}),
    ("autoboot", "Hit ctrl-c to stop autoboot:    3", {}),
    ("autoboot", "The highlighted entry will be executed automatically in 5s.", {"bootdelay": 5}),
    ("kernel_loaded", "34514312 bytes read in 96 ms (342.9 MiB/s)", {"bytes": 34514312, "ms": 96}),
    ("kernel_loaded", "697 bytes read in 8 ms (85 KiB/s)", {"bytes": 697, "ms": 8}),
    ("kernel_loaded", "Bytes transferred = 4578816 (45de00 hex)", {"bytes": 4578816}),
    ("kernel_loaded", " 6291456 bytes read: OK", {"bytes": 6291456}),
    ("kernel_loaded", "SF: 4194304 bytes @ 0x100000 Read: OK", {"bytes": 4194304}),
    ("kernel_loaded", "16384 blocks read: OK", {"blocks": 16384}),
    ("kernel_loaded", "Loading ARM Linux zImage '/mnt/emmc/zImage'", {}),
    ("kernel_loaded", "Loading initial ramdisk ...", {}),
    ("image_info", "     Data Size:    32956352 Bytes = 31.4 MiB", {"image_bytes": 32956352}),
    ("image_info", "   Data Size:    1246156 Bytes = 1.2 MiB", {"image_bytes": 1246156}),
    ("kernel_verified", "   Verifying Hash Integrity ... sha256+ OK", {}),
    ("kernel_verified", "   Verifying Hash Integrity ... OK", {}),
    # with no read line before them (an image booted in place) these show the kernel loaded
    (frozenset({"kernel_verified", "kernel_loaded"}), "   Verifying Checksum ... OK", {}),
    (frozenset({"kernel_uncompressed", "kernel_loaded"}), "   Loading Kernel Image", {}),
    # ... and, until a "Starting kernel" line comes, the last line before the jump
    (frozenset({"kernel_uncompressed", "kernel_loaded", "starting_kernel"}),
     "   Uncompressing Kernel Image", {}),
    (frozenset({"kernel_uncompressed", "kernel_loaded", "starting_kernel"}),
     "   Uncompressing Kernel Image ... OK", {}),
    ("kernel_uncompressed", "   XIP Kernel Image", {}),
    ("starting_kernel", "Starting kernel ...", {}),
    ("starting_kernel", "Starting kernel in secure mode", {}),
    ("starting_kernel", "jumping to kernel", {}),
    ("starting_kernel", "Booting from ROM...", {}),
    (frozenset({"starting_kernel", "efi_stub"}), "EFI stub: Booting Linux Kernel...", {}),
    (frozenset({"starting_kernel", "efi_stub"}), "EFI stub: Decompressing Linux Kernel...", {}),
    ("efi_stub", "EFI stub: Exiting boot services...", {}),
    ("efi_stub", "EFI stub: Using DTB from configuration table", {}),
    # kernel
    ("decompressed", "Uncompressing Linux... done, booting the kernel.", {}),
    ("decompressed", "Booting the kernel (entry_offset: 0x0000000000000000).", {}),
    ("decompressed", "Decompressing Linux... Parsing ELF... done.", {}),
    ("linux", "Booting Linux on physical CPU 0x0000000000 [0x411fd070]", {}),
    ("linux", "Linux version 6.1.0-57-arm64 (debian-kernel@lists.debian.org) (gcc-12 (Debian "
              "12.2.0-14+deb12u1) 12.2.0) #1 SMP Debian 6.1.192-3 (2026-11-26)",
     {"kernel_version": "6.1.0-57-arm64"}),
    ("calibrate", "Calibrating delay loop (skipped), value calculated using timer frequency.. "
                  "125.00 BogoMIPS (lpj=250000)", {"lpj": 250000, "bogomips": 125.0}),
    ("calibrate", "Calibrating delay loop (skipped) preset value.. 125.00 BogoMIPS (lpj=250000)",
     {"lpj": 250000}),
    # a message printed in between splits the line: the figures come later, on their own
    ("calibrate", "Calibrating delay loop... ", {}),
    ("calibrate", "Calibrating delay loop... 2013.49 BogoMIPS (lpj=7864320)",
     {"lpj": 7864320, "bogomips": 2013.49}),
    ("calibrate", "Calibrating delay using timer specific routine.. 5000.00 BogoMIPS "
                  "(lpj=10000000)", {"lpj": 10000000}),
    ("root_wait", "Waiting for root device /dev/mmcblk0p2...", {"root": "/dev/mmcblk0p2"}),
    ("root_wait", "Waiting for root device PARTUUID=6c586e13-02...",
     {"root": "PARTUUID=6c586e13-02"}),
    ("root_wait", "Waiting 5 sec before mounting root device...", {"rootdelay": 5}),
    ("ubi_attached", 'ubi0: attached mtd2 (name "rootfs", size 120 MiB)', {"mtd": 2}),
    ("ubi_attached", "UBI: attached mtd2 to ubi0", {"mtd": 2}),
    ("root_mounted", "VFS: Mounted root (ext4 filesystem) readonly on device 179:2.",
     {"fstype": "ext4", "device": "179:2"}),
    ("root_mounted", "VFS: Mounted root (ext2 filesystem) on device 8:1.", {"fstype": "ext2"}),
    ("root_mounted", "VFS: Mounted root (ext3 filesystem) on device 8:1.", {"fstype": "ext3"}),
    ("root_mounted", "VFS: Mounted root (ubifs filesystem) readonly on device 0:13.",
     {"fstype": "ubifs", "device": "0:13"}),
    ("root_mounted", "VFS: Mounted root (jffs2 filesystem) on device 31:3.", {"fstype": "jffs2"}),
    ("root_mounted", "VFS: Mounted root (yaffs2 filesystem) on device 31:2.",
     {"fstype": "yaffs2"}),
    ("root_mounted", "VFS: Mounted root (squashfs filesystem) readonly on device 31:2.",
     {"fstype": "squashfs"}),
    ("root_mounted", "VFS: Mounted root (nfs filesystem) on device 0:13.",
     {"fstype": "nfs", "device": "0:13"}),
    ("root_mounted", "VFS: Mounted root (nfs4 filesystem) on device 0:20.", {"fstype": "nfs4"}),
    ("root_mounted", "VFS: Mounted root (ext4 filesystem) on device 43:0.",     # nbd root
     {"fstype": "ext4", "device": "43:0"}),
    ("root_mounted", "EXT4-fs (vda2): mounted filesystem with ordered data mode. Quota mode: none.",
     {"device": "vda2"}),
    ("root_mounted", "EXT4-fs (mmcblk0p2): mounted filesystem 3f5b2c1d-0000-4000-8000-00000000abcd "
                     "ro with ordered data mode. Quota mode: none.", {"device": "mmcblk0p2"}),
    ("root_mounted", 'UBIFS (ubi0:0): mounted UBI device 0, volume 0, name "rootfs"', {}),
    ("root_mounted", 'UBIFS (ubi0:0): UBIFS: mounted UBI device 0, volume 0, name "rootfs"', {}),
    ("root_mounted", 'UBIFS: mounted UBI device 0, volume 0, name "rootfs", R/O mode', {}),
    ("root_mounted", "systemd[1]: Switching root.", {}),
    ("root_mounted", "dracut: Switching root", {}),
    ("root_mounted", "[initramfs] mounted /dev/vda2 (ext4, ro), switching root, uptime 1.70s", {}),
    ("kernel_done", "Freeing unused kernel memory: 6464K", {"freed_kb": 6464}),
    ("kernel_done", "Freeing unused kernel image (initmem) memory: 2660K", {"freed_kb": 2660}),
    ("kernel_done", "Freeing unused kernel image memory: 2012K", {"freed_kb": 2012}),
    ("kernel_done", "Freeing unused kernel memory: 1024K (c0a00000 - c0b00000)",
     {"freed_kb": 1024}),
    ("kernel_done", "Write protecting the kernel read-only data: 20480k", {}),
    # userspace
    ("init", "Run /init as init process", {"init_path": "/init"}),
    ("init", "Run /sbin/init as init process", {"init_path": "/sbin/init"}),
    ("init", "INIT: version 3.06 booting", {}),
    ("init", "INIT: version 2.88 booting", {}),
    ("init", "systemd[1]: systemd 252.22-1~deb12u1 running in system mode (+PAM +AUDIT +SELINUX)",
     {"systemd_version": "252"}),
    ("init", "systemd 215 running in system mode. (+PAM +AUDIT +SELINUX)",
     {"systemd_version": "215"}),
    ("init", "Welcome to Debian GNU/Linux 12 (bookworm)!", {}),
    ("init", "Welcome to \x1b[1mDebian GNU/Linux 12 (bookworm)\x1b[0m!", {}),
    ("init", "init: init first stage started!", {}),
    ("init", "init: Console is alive", {}),
    ("init", "procd: - early -", {}),
    ("init", "init started: BusyBox v1.35.0 (2022-06-26 14:58:05 UTC)", {}),
    ("network_up", "fec 30be0000.ethernet eth0: Link is Up - 1Gbps/Full - flow control rx/tx", {}),
    ("network_up", "airoha_eth 1fb50000.ethernet eth0: Link is Up - 10Gbps/Full - flow control "
                   "rx/tx", {}),
    ("network_up", "cpsw 4a100000.ethernet eth0: Link is Up - 100Mbps/Full - flow control off", {}),
    ("network_up", "libphy: 4a101000.mdio:00 - Link is Up - 100/Full", {}),
    ("network_up", "smsc95xx 1-1.1:1.0 eth0: link up, 100Mbps, full-duplex, lpa 0xC5E1", {}),
    ("network_up", "IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready", {}),
    ("network_up", "udhcpc: lease of 192.168.1.5 obtained, lease time 86400",
     {"ip": "192.168.1.5"}),
    ("network_up", "udhcpc: lease of 10.0.0.23 obtained from 10.0.0.1, lease time 3600",
     {"ip": "10.0.0.23"}),
    ("network_up", "eth0: leased 192.168.1.50 for 86400 seconds", {"ip": "192.168.1.50"}),
    ("network_up", "IP-Config: Complete:", {}),
    ("network_up", "[  OK  ] Reached target Network.", {}),
    ("network_up", "[  OK  ] Reached target network.target - Network.", {}),
    ("login", "board login: ", {}),
    ("login", "board login: root", {}),
    ("login", "buildroot login: ", {}),
    ("login", "\rboard login: root", {}),
    ("login", "login: ", {}),
    ("console", "Please press Enter to activate this console.", {}),
    ("login", "beaglebone login", {}),       # cut by grabserial's quit pattern (corpus 031)
    ("panic", "Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)", {}),
    ("panic", "Internal error: Oops: 96000004 [#1] PREEMPT SMP", {}),
    ("panic", "Unable to handle kernel NULL pointer dereference at virtual address "
              "0000000000000000", {}),
    ("panic", "BUG: scheduling while atomic: swapper/0/1/0x00000002", {}),
    ("panic", "kernel BUG at kernel/sched/core.c:7596!", {}),
]

# Lines that look like a milestone but are not it: (milestone id, line). None of them may match
# that milestone; most match nothing at all.
LINUX_NEAR_MISSES: list[tuple[str, str]] = [
    ("firmware", "W> RATCHET: MB1 binary ratchet value 4 is too large than ratchet level 2"),
    ("firmware", "DDRINFO: start DRAM init"),
    ("firmware", "NOTICE:  BL1: Built : 10:00:00, Jan  1 2023"),
    ("firmware", "coreboot-4.19 Mon Jan 09 10:00:00 UTC 2023 romstage starting (log level: 7)..."),
    ("tpl", "Trying to boot from BOOTROM"),
    ("tpl", "Returning to boot ROM..."),
    ("spl", "SPL: failed to boot from all boot devices"),
    ("spl", "SPL initial stack usage: 13424 bytes"),
    ("spl", "Trying to boot from MMC1"),
    ("bl2", "NOTICE:  BL2: Built : 10:00:00, Jan  1 2023"),
    ("bl2", "INFO:    BL2: Doing platform setup"),
    ("bl2", "NOTICE:  BL1: Booting BL2"),
    ("bl31", "NOTICE:  BL31: Built : 05:33:19, Feb 24 2023"),
    ("bl31", "INFO:    BL31: Initializing runtime services"),
    ("bl31", "INFO:    BL31: Preparing for EL3 exit to normal world"),
    ("bl31", "NOTICE:  BL31: G12A normal boot!"),
    ("bl31", "NOTICE:  BL1: Booting BL31"),
    ("optee", "I/TC: Primary CPU switching to normal world boot"),
    ("optee", "I/TC: Primary CPU initializing"),
    ("optee", "I/TC: "),
    ("bootloader", "U-Boot menu"),
    ("bootloader", "Found U-Boot script /boot.scr"),
    ("bootloader", "U-Boot SPL 2021.04 (Apr 12 2021 - 10:00:00 +0000)"),
    ("bootloader", "U-Boot TPL 2021.01 (Jan 17 2021 - 23:49:14)"),
    ("bootloader", "U-Boot> "),
    ("bootloader", "barebox@TI AM335x BeagleBone black:/ "),
    ("grub", "GNU GRUB  version 2.06"),
    ("env_loaded", "Loading Environment from SPIFlash... "),
    # TI K3's R5 SPL prints this before BL31: it must not count as a bootloader-stage line
    ("env_loaded", "Loading Environment from MMC... *** Warning - No MMC card found, using "
                   "default environment"),
    ("env_loaded", "Loading Environment from Flash... OK"),
    ("autoboot", "bootdelay=2"),
    ("autoboot", "## Error: \"bootcmd_mmc0\" not defined"),
    ("kernel_loaded", "Loading devicetree from '/mnt/emmc/oftree'"),
    ("kernel_loaded", "## Loading kernel from FIT Image at 48000000 ..."),
    ("kernel_loaded", "Loading Environment from Flash... OK"),
    ("image_info", "     Data Start:   0x480000f0"),
    ("kernel_verified", "   Verifying Hash Integrity ... sha256 error!"),
    ("kernel_verified", "   Bad Data CRC"),
    ("kernel_uncompressed", "   Loading Ramdisk to 7dc2d000, end 7dda8ead ... OK"),
    ("kernel_uncompressed",
     "   Loading Device Tree to 000000007db2a000, end 000000007dc2cfff ... OK"),
    ("starting_kernel", "## Starting application at 0x01C00000 ..."),
    ("starting_kernel", "Starting ATF on ARM64 core..."),
    ("starting_kernel", "starting USB..."),
    ("decompressed", "Uncompressing Linux..."),
    ("decompressed", "Decompressing Linux... "),
    ("linux", "board-in-a-box: Debian Linux 6.1.0-57-arm64 on aarch64 (/dev/ttyAMA0)"),
    ("linux", "     Description:  Linux 6.1.0-57-arm64"),
    ("calibrate", "SMP: Total of 4 processors activated (24.00 BogoMIPS)."),
    ("root_wait", "mmc0: new high speed SDHC card at address aaaa"),
    ("ubi_attached", "ubi0: attaching mtd2"),
    ("ubi_attached", "UBI: attaching mtd2 to ubi0"),
    ("ubi_attached", "ubi0: attached by fastmap"),
    ("root_mounted", "squashfs: version 4.0 (2009/01/31) Phillip Lougher"),
    ("root_mounted", "jffs2: version 2.2. (NAND) (SUMMARY)  (c) 2001-2006 Red Hat, Inc."),
    ("root_mounted", "VFS: Disk quotas dquot_6.6.0"),
    ("root_mounted", "EXT4-fs (mmcblk0p2): re-mounted. Opts: (null)"),
    ("root_mounted", "Root-NFS: no NFS server address"),
    ("root_mounted", 'UBIFS (ubi0:0): background thread "ubifs_bgt0_0" started, PID 87'),
    ("root_mounted", "mtd: device 6 (rootfs) set to be root filesystem"),
    ("root_mounted", "Trying to unpack rootfs image as initramfs..."),
    ("kernel_done", "Freeing initrd memory: 1516K"),
    ("kernel_done", "Freeing unused decrypted memory: 2036K"),
    ("kernel_done", "Freeing SMP alternatives memory: 32K"),
    ("init", "Welcome to Buildroot"),
    ("init", "INIT: Entering runlevel: 5"),
    ("init", "Starting init: /sbin/init exists but couldn't execute it (error -8)"),
    ("init", "procd: - watchdog -"),
    ("init", "systemd[1]: Started Journal Service."),
    ("init", "[rcS] S10hello: example service started, uptime 1.99s"),
    ("network_up", "imx6q-pcie 1ffc000.pcie: Link up"),
    ("network_up", "fec 30be0000.ethernet eth0: Link is Down"),
    ("network_up", "udhcpc: sending discover"),
    ("network_up", "br-lan: port 1(lan1) entered forwarding state"),
    ("network_up", "Net:   No ethernet found."),
    ("login", "login[117]: root login on 'ttyAMA0'"),
    ("login", "Last login: Thu Jan  1 00:00:00 UTC 1970 on ttyS0"),
    ("login", "systemd-logind[212]: New seat seat0."),
    ("login", "pam_unix(login:session): session opened for user root"),
    ("login", "board-in-a-box: Debian Linux 6.1.0-57-arm64 on aarch64 (/dev/ttyAMA0)"),
    ("panic", "hw-breakpoint: found 6 breakpoint and 4 watchpoint registers."),
    ("panic", "debug: unmapping init [mem 0xffffffc0]"),
]

# Ordinary lines of real logs: no milestone at all, and the fast prefilter rejects them.
ORDINARY = [
    "DRAM:  1 GiB",
    "Core:  47 devices, 13 uclasses, devicetree: board",
    "Out:   pl011@9000000",
    "Scanning virtio 0:1...",
    "## Executing script at 40200000",
    "   Using 'board' configuration",
    "Working FDT set to 7edb6db0",
    "Random: crng init done",
    "Machine model: linux,dummy-virt",
    "Kernel command line: console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait",
    "sched_clock: 57 bits at 63MHz, resolution 16ns, wraps every 4398046511096ns",
    "pid_max: default: 32768 minimum: 301",
    "smp: Bringing up secondary CPUs ...",
    "printk: console [ttyAMA0] enabled",
    "Mount-cache hash table entries: 2048 (order: 2, 16384 bytes, linear)",
    "NET: Registered PF_INET6 protocol family",
    "rtc-pl031 9010000.pl031: setting system clock to 2026-11-30T01:58:35 UTC (1796003915)",
    "virtio_blk virtio0: [vda] 395264 512-byte logical blocks (202 MB/193 MiB)",
    " vda: vda1 vda2",
    "Checked W+X mappings: passed, no W+X pages found",
    "clk: Disabling unused clocks",
    "[rcS] system ready, uptime 2.00s",
    "Enter 'help' for a list of built-in commands.",
    "mmc3: detected MMC card version 5.0",
    "running /env/bin/init...",
    "commandline:  console=ttymxc1,115200n8  root=/dev/mmcblk1p2 rootwait rw",
    "INFO:    GICv3 without legacy support detected.",
    "Trying to boot from MMC2",
    "channel[0] BW=16 Col=10 Bk=8 CS0 Row=17 CS=1 Die BW=16 Size=2048MB",
    "kmodloader: loading kernel modules from /etc/modules-boot.d/*",
]


def _ids(expected: str | frozenset[str]) -> set[str]:
    return {expected} if isinstance(expected, str) else set(expected)


@pytest.mark.parametrize(("expected", "line", "values"), LINUX_MATCHES,
                         ids=[f"{e}:{line[:32]}" for e, line, _ in LINUX_MATCHES])
def test_linux_marker_matches(linux: Profile, expected, line: str, values: dict) -> None:
    markers = MarkerSet(linux)
    for variant in _variants(line):
        hits = _hits(markers, variant)
        assert set(hits) == _ids(expected), variant
        for key, value in values.items():
            got = hits[next(iter(_ids(expected)))][key]
            assert got == pytest.approx(value) if isinstance(value, float) else got == value
        # the fast path must not reject a line the exact matcher accepts
        assert markers.candidate(variant.encode("utf-8").decode("latin-1")), variant


@pytest.mark.parametrize(("expected", "line"), LINUX_NEAR_MISSES,
                         ids=[f"{e}:{line[:32]}" for e, line in LINUX_NEAR_MISSES])
def test_linux_near_misses(linux: Profile, expected: str, line: str) -> None:
    markers = MarkerSet(linux)
    for variant in _variants(line):
        assert expected not in _hits(markers, variant), variant


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_lines_match_nothing(linux: Profile, resume: Profile, line: str) -> None:
    for profile in (linux, resume):
        markers = MarkerSet(profile)
        for variant in _variants(line):
            assert _hits(markers, variant) == {}, variant
            # no linux pattern so loose that the fast prefilter lets ordinary lines through
            if profile is linux and "\r" not in variant:
                assert not markers.candidate(variant), variant


def test_bootloader_stamp_is_removed_before_matching(linux: Profile) -> None:
    markers = MarkerSet(linux)
    assert set(_hits(markers, "[0000.033] I> MB1 (prd-version: 1.5.1.3-t194-41334769-d2a21c57)")) \
        == {"firmware"}
    assert set(_hits(markers, "[   5.878] Starting kernel ...")) == {"starting_kernel"}


def test_prompts_match_while_arriving_and_with_echoed_input(linux: Profile) -> None:
    markers = MarkerSet(linux)
    for line, expected in [("Hit any key to stop autoboot:  2 ", "autoboot"),
                           ("Hit any key to stop autoboot:  2 \x08\x08\x08 1 ", "autoboot"),
                           ("Press SPACE to abort autoboot in 2 seconds", "autoboot"),
                           ("board login: ", "login"), ("board login: root", "login"),
                           ("login: admin", "login"),
                           ("Please press Enter to activate this console.", "console")]:
        assert set(_hits(markers, line, partial=True)) == {expected}
        assert set(_hits(markers, line + "\r")) == {expected}


def test_a_prompt_cut_before_its_colon_counts_only_once_the_line_is_finished(
        linux: Profile) -> None:
    # "beaglebone login" as a whole line is a prompt cut off (grabserial quitting on "login");
    # while the line is still arriving, "board login" is only the prompt's start: the ": "
    # may follow, and a goal met on it would stop before the board printed it
    markers = MarkerSet(linux)
    assert set(_hits(markers, "beaglebone login")) == {"login"}
    assert _hits(markers, "board login", partial=True) == {}
    assert set(_hits(markers, "board login:", partial=True)) == {"login"}


def test_patterns_anchored_at_the_line_end() -> None:
    from bootlab.core.analysis.marker_match import ends_line

    assert ends_line(r"login$") and ends_line(r"x\\$") and ends_line(r"done\Z")
    assert not ends_line(r"cost \$") and not ends_line(r"x\\Z") and not ends_line("login: ")


def test_resume_profile_adds_nothing_to_linux_lines(resume: Profile) -> None:
    markers = MarkerSet(resume)
    for expected, line, _ in LINUX_MATCHES:
        assert set(_hits(markers, line)) == _ids(expected), line


# --- profile shape ---------------------------------------------------------------------------


def test_linux_profile_keeps_the_standard_ids_in_stage_order(linux: Profile) -> None:
    ids = [m.id for m in linux.markers]
    for ident in STANDARD_IDS:
        assert ident in ids
    assert [i for i in ids if i in STANDARD_IDS] == list(STANDARD_IDS)
    stages = [m.stage_index for m in linux.markers if not m.fail]
    assert stages == sorted(stages)
    assert linux.by_id["image_info"].stage == "bootloader"
    assert linux.by_id["kernel_done"].fallback is not None
    assert linux.by_id["init"].fallback is not None


def test_partial_markers_do_not_rely_on_end_of_line(linux: Profile, resume: Profile) -> None:
    # A prompt line finished by echoed input ("board login: root") must still match: only the
    # cut prompt of a capture that stopped at it ("beaglebone login", grabserial -q login)
    # may be matched to its end, beside a pattern for the whole prompt.
    for profile in (linux, resume):
        for marker in profile.markers:
            if marker.partial:
                ended = [p.pattern for p in marker.patterns if p.pattern.endswith("$")]
                assert ended in ([], ["^(?!Last |Failed |Incorrect |Invalid )\\S{1,64} login$"]), \
                    marker.id
                assert len(ended) < len(marker.patterns)


def test_new_boot_markers_are_banners(linux: Profile) -> None:
    assert {m.id for m in linux.markers if m.new_boot} == \
        {"firmware", "tpl", "spl", "bl2", "bl31", "optee", "opensbi", "bootloader", "grub",
         "decompressed"}
    assert linux.by_id["spl"].repeats          # TI K3 prints two SPL banners per boot


NASTY = [
    "a" * 20000, " " * 20000, "9" * 20000, "." * 20000, "(" * 20000, "\t" * 20000,
    "U-Boot " + "9" * 20000, "Calibrating delay " + "1." * 10000, "PM: Loading " + "." * 20000,
    "Hit " + "x " * 10000, "app " * 5000, "VFS: Mounted root (" + "a" * 20000,
    "EXT4-fs (" + "x" * 20000, "NOTICE: " + " " * 20000, "udhcpc: lease of " + "1." * 10000,
    "Welcome to " + "x" * 20000, "Waiting for root device " + "x" * 20000,
]


def test_patterns_are_bounded(linux: Profile, resume: Profile) -> None:
    patterns = {p.pattern: p for profile in (linux, resume) for m in profile.markers
                for p in m.patterns}
    start = time.perf_counter()
    for pattern in patterns.values():
        for text in NASTY:
            pattern.search(text)
    elapsed = time.perf_counter() - start
    assert elapsed < 3.0, f"{elapsed:.2f}s"


# --- whole logs ----------------------------------------------------------------------------

# The QEMU board of ../shared/lab (Debian U-Boot 2023.01, Linux 6.1) as captured on its serial
# console: the U-Boot part complete, the kernel part shortened to its milestones and a few
# ordinary lines. Lines end in CRLF; some start with CR; the countdown uses backspaces.
BOARD_UBOOT = [
    "", "",
    "U-Boot 2023.01+dfsg-2+deb12u3 (Jun 22 2026 - 08:38:07 +0000)",
    "",
    "DRAM:  1 GiB",
    "Core:  47 devices, 13 uclasses, devicetree: board",
    "Flash: 64 MiB",
    "Loading Environment from Flash... OK",
    "In:    pl011@9000000",
    "Out:   pl011@9000000",
    "Err:   pl011@9000000",
    "Net:   No ethernet found.",
    "Hit any key to stop autoboot:  2 \x08\x08\x08 1 \x08\x08\x08 0 ",
    "fatal: no kernel available",
    "Command 'load' failed: Error 1",
    "starting USB...",
    "No working controllers found",
    "USB is stopped. Please issue 'usb start' first.",
    "scanning bus for devices...",
    "",
    "Device 0: unknown device",
    "",
    "Device 0: 1af4 VirtIO Block Device",
    "            Type: Hard Disk",
    "            Capacity: 193.0 MB = 0.1 GB (395264 x 512)",
    "... is now current device",
    "Scanning virtio 0:1...",
    "Found U-Boot script /boot.scr",
    "697 bytes read in 8 ms (85 KiB/s)",
    "## Executing script at 40200000",
    "boot.scr: board-in-a-box boot script",
    "boot.scr: bootargs=console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 ro rootwait",
    "34514312 bytes read in 96 ms (342.9 MiB/s)",
    "## Loading kernel from FIT Image at 48000000 ...",
    "   Using 'board' configuration",
    "   Verifying Hash Integrity ... OK",
    "   Trying 'kernel' kernel subimage",
    "     Description:  Linux 6.1.0-57-arm64",
    "     Created:      2026-11-30   1:53:06 UTC",
    "     Type:         Kernel Image",
    "     Compression:  uncompressed",
    "     Data Start:   0x480000f0",
    "     Data Size:    32956352 Bytes = 31.4 MiB",
    "     Architecture: AArch64",
    "     OS:           Linux",
    "     Load Address: 0x40400000",
    "     Entry Point:  0x40400000",
    "     Hash algo:    sha256",
    "     Hash value:   0c9509f29ba6872423482954ef135db50f0e70ebdbbcaf4a81526590b18a1c45",
    "   Verifying Hash Integrity ... sha256+ OK",
    "## Loading ramdisk from FIT Image at 48000000 ...",
    "   Using 'board' configuration",
    "   Verifying Hash Integrity ... OK",
    "   Trying 'ramdisk' ramdisk subimage",
    "     Description:  busybox initramfs",
    "     Type:         RAMDisk Image",
    "     Compression:  uncompressed",
    "     Data Start:   0x49f6e1ac",
    "     Data Size:    1556141 Bytes = 1.5 MiB",
    "     Hash algo:    sha256",
    "     Hash value:   e0e234b117a540f65f80fcd75028259fb0a0725533872f3e55828f3b14d3521a",
    "   Verifying Hash Integrity ... sha256+ OK",
    "## Flattened Device Tree blob at 7edb6db0",
    "   Booting using the fdt blob at 0x7edb6db0",
    "Working FDT set to 7edb6db0",
    "   Loading Kernel Image",
    "   Loading Ramdisk to 7dc2d000, end 7dda8ead ... OK",
    "   Loading Device Tree to 000000007db2a000, end 000000007dc2cfff ... OK",
    "Working FDT set to 7db2a000",
    "",
    "Starting kernel ...",
    "",
]
BOARD_KERNEL = [
    "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x411fd070]",
    "[    0.000000] Linux version 6.1.0-57-arm64 (debian-kernel@lists.debian.org) (gcc-12 "
    "(Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP Debian "
    "6.1.192-3 (2026-11-26)",
    "[    0.000000] random: crng init done",
    "[    0.000000] Machine model: linux,dummy-virt",
    "[    0.000000] Kernel command line: console=ttyAMA0,115200 root=/dev/vda2 rootfstype=ext4 "
    "ro rootwait",
    "[    0.000000] \tRude variant of Tasks RCU enabled.",
    "[    0.009574] Calibrating delay loop (skipped), value calculated using timer frequency.. "
    "125.00 BogoMIPS (lpj=250000)",
    "[    0.009749] pid_max: default: 32768 minimum: 301",
    "[    0.226882] printk: console [ttyAMA0] enabled",
    "[    0.445104] Trying to unpack rootfs image as initramfs...",
    "[    0.572745] Freeing initrd memory: 1516K",
    "[    1.241684] clk: Disabling unused clocks",
    "[    1.305625] Freeing unused kernel memory: 6464K",
    "[    1.327920] Checked W+X mappings: passed, no W+X pages found",
    "[    1.328407] Run /init as init process",
]
BOARD_USERSPACE = [
    "[initramfs] /init started, kernel 6.1.0-57-arm64, uptime 1.37s",
    "[    1.520312] virtio_blk virtio0: 1/0/0 default/read/poll queues",
    "[    1.533311] virtio_blk virtio0: [vda] 395264 512-byte logical blocks (202 MB/193 MiB)",
    "[    1.548325]  vda: vda1 vda2",
    "[    1.734481] EXT4-fs (vda2): mounted filesystem with ordered data mode. Quota mode: none.",
    "[initramfs] mounted /dev/vda2 (ext4, ro), switching root, uptime 1.70s",
    "[    1.894499] Not activating Mandatory Access Control as /sbin/tomoyo-init does not exist.",
    "[rcS] starting system on rootfs (/dev/vda2), uptime 1.97s",
    "[rcS] S10hello: example service started, uptime 1.99s",
    "[rcS] system ready, uptime 2.00s",
    "\r",
    "",
    "\rboard-in-a-box: Debian Linux 6.1.0-57-arm64 on aarch64 (/dev/ttyAMA0)",
    "\rlog in as root, no password",
    "\r",
    "\rboard login: root",
    "login[117]: root login on 'ttyAMA0'\r",
    "",
    "",
    "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) built-in shell (ash)",
    "Enter 'help' for a list of built-in commands.",
    "",
    "[shell] logged in, uptime 2.51s",
    "root@board:/root# \x1b[6nreboot -f",
    "[    3.113807] reboot: Restarting system",
    "",
]

# The same board booted with `quiet`: the kernel prints nothing at all.
BOARD_QUIET_USERSPACE = [line for line in BOARD_USERSPACE if not line.startswith("[    1.")]

BOARD_IDS = [
    "bootloader", "env_loaded", "autoboot", "kernel_loaded", "image_info", "kernel_verified",
    "kernel_uncompressed", "starting_kernel", "linux", "calibrate", "kernel_done", "init",
    "root_mounted", "login", "restart",
]


def _log(lines: list[str]) -> bytes:
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def _line_no(lines: list[str], needle: str, start: int = 1) -> int:
    for number in range(start, len(lines) + 1):
        if needle in lines[number - 1]:
            return number
    raise AssertionError(needle)


def test_board_log_gives_the_milestones_in_order(linux: Profile) -> None:
    lines = BOARD_UBOOT + BOARD_KERNEL + BOARD_USERSPACE
    result = analyze(_log(lines), linux)
    assert len(result.boots) == 1
    boot = result.boots[0]
    assert [m.id for m in boot.milestones] == BOARD_IDS
    assert not any(m.fallback for m in boot.milestones)
    got = {m.id: m for m in boot.milestones}
    # the boot script was read first; the 33 MB FIT last: that is the kernel load
    assert got["kernel_loaded"].values == {"bytes": 34514312, "ms": 96}
    assert got["image_info"].values == {"image_bytes": 32956352}    # the kernel, not the ramdisk
    # the last hash check before the start (the ramdisk's)
    assert got["kernel_verified"].line == _line_no(lines, "sha256+ OK", 60)
    assert got["calibrate"].values == {"bogomips": 125.0, "lpj": 250000}
    assert got["calibrate"].kernel_s == pytest.approx(0.009574)
    assert got["kernel_done"].values == {"freed_kb": 6464}
    assert got["init"].values == {"init_path": "/init"}
    assert got["root_mounted"].values == {"device": "vda2"}
    assert got["login"].text == "board login: root"
    assert got["autoboot"].text == "Hit any key to stop autoboot:  0 "


def test_board_log_live_capture_agrees_with_analysis(linux: Profile) -> None:
    lines = BOARD_UBOOT + BOARD_KERNEL + BOARD_USERSPACE
    data = _log(lines)
    prompt = data.index(b"board login: ") + len(b"board login: ")
    capture = Capture(linux)
    found = []
    # odd-sized chunks; the login prompt arrives without its newline first
    chunks = [data[i:i + 37] for i in range(0, prompt - 37, 37)]
    chunks.append(data[len(chunks) * 37:prompt])
    chunks.append(data[prompt:])
    for n, chunk in enumerate(chunks):
        update = capture.feed(chunk, n * 1_000_000)
        found += update.milestones
        if chunk.endswith(b"board login: "):
            # the prompt is seen while it arrives, before its line is complete
            assert [m.id for m in update.milestones] == ["login"]
    found += capture.finish().milestones
    # updates also report the moves of "last" milestones (kernel_loaded, kernel_verified)
    assert {m.id for m in found} == set(BOARD_IDS)
    assert len(capture.boots) == 1
    live = [(m.id, m.line, m.values) for m in capture.boots[0].milestones]
    offline = [(m.id, m.line, m.values) for m in analyze(data, linux).milestones]
    assert live == offline
    assert capture.boots[0].reached("login").text == "board login: root"


def test_quiet_boot_places_kernel_done_and_init_by_fallback(linux: Profile) -> None:
    # With `quiet` the kernel prints nothing: the first line after "Starting kernel" is the
    # initramfs' own (real capture of the board booted with quiet).
    lines = BOARD_UBOOT + BOARD_QUIET_USERSPACE
    result = analyze(_log(lines), linux)
    assert len(result.boots) == 1
    milestones = result.boots[0].milestones
    assert [m.id for m in milestones] == [
        "bootloader", "env_loaded", "autoboot", "kernel_loaded", "image_info", "kernel_verified",
        "kernel_uncompressed", "starting_kernel", "kernel_done", "init", "root_mounted", "login",
        "restart"]
    first_userspace = _line_no(lines, "[initramfs] /init started")
    got = {m.id: m for m in milestones}
    for ident in ("kernel_done", "init"):
        assert got[ident].fallback
        assert got[ident].line == first_userspace
    assert not got["root_mounted"].fallback
    assert got["root_mounted"].line == _line_no(lines, "switching root")


def test_quiet_arm_boot_skips_the_decompressor_line(linux: Profile) -> None:
    lines = ["U-Boot 2019.04 (Apr 01 2019 - 10:00:00 +0000)", "Starting kernel ...", "",
             "Uncompressing Linux... done, booting the kernel.",
             "Starting syslogd: OK", "Welcome to Buildroot", "buildroot login: "]
    milestones = analyze(_log(lines), linux).boots[0].milestones
    assert [(m.id, m.fallback) for m in milestones] == [
        ("bootloader", False), ("starting_kernel", False), ("decompressed", False),
        ("kernel_done", True), ("init", True), ("login", False)]
    assert milestones[3].line == _line_no(lines, "Starting syslogd")


def test_second_banner_after_login_starts_a_second_boot(linux: Profile) -> None:
    first = BOARD_UBOOT + BOARD_KERNEL + BOARD_USERSPACE
    lines = first + BOARD_UBOOT + BOARD_QUIET_USERSPACE       # reboot -f, then a quiet boot
    result = analyze(_log(lines), linux)
    assert len(result.boots) == 2
    second = result.boots[1]
    banner = _line_no(lines, "U-Boot 2023.01", len(first) + 1)
    assert second.first_line == banner
    assert second.milestones[0].id == "bootloader"
    assert second.milestones[0].line == banner
    assert [m.id for m in result.boots[0].milestones] == BOARD_IDS
    assert [m.id for m in second.milestones][-5:] == [
        "kernel_done", "init", "root_mounted", "login", "restart"]


def test_interrupted_autoboot_then_boot_command_is_one_boot(linux: Profile) -> None:
    uboot = list(BOARD_UBOOT)
    at = uboot.index("Hit any key to stop autoboot:  2 \x08\x08\x08 1 \x08\x08\x08 0 ")
    uboot[at:at + 1] = ["Hit any key to stop autoboot:  2 \x08\x08\x08 0 ",
                        "=> setenv bootargs console=ttyAMA0,115200 root=/dev/vda2 ro quiet",
                        "=> version",
                        "=> boot"]
    result = analyze(_log(uboot + BOARD_QUIET_USERSPACE), linux)
    assert len(result.boots) == 1
    assert result.boots[0].reached("login") is not None


def test_panic_marks_the_boot_failed(linux: Profile) -> None:
    lines = BOARD_UBOOT + BOARD_KERNEL[:8] + [
        "[    1.100000] VFS: Cannot open root device \"vda2\" or unknown-block(0,0): error -6",
        "[    1.100001] Kernel panic - not syncing: VFS: Unable to mount root fs on "
        "unknown-block(0,0)",
        "[    1.100002] ---[ end Kernel panic - not syncing: VFS: Unable to mount root fs ]---"]
    boot = analyze(_log(lines), linux).boots[0]
    assert boot.failed
    assert [m.id for m in boot.milestones if m.fail] == ["panic", "panic"]


# Boot chains of other SoC families, from their real console logs (shortened). Each is one boot;
# "restart" is the milestone a second boot starts at after a reset from Linux.
LINUX_TAIL = [
    "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]",
    "[    0.000000] Linux version 5.15.71 (oe-user@oe-host) (aarch64-poky-linux-gcc (GCC) 11.3.0) "
    "#1 SMP PREEMPT Thu Oct 6 10:00:00 UTC 2022",
    "[    0.000000] Calibrating delay loop (skipped), value calculated using timer frequency.. "
    "16.00 BogoMIPS (lpj=32000)",
    "[    1.500000] Waiting for root device /dev/mmcblk1p2...",
    "[    1.900000] EXT4-fs (mmcblk1p2): mounted filesystem with ordered data mode. Quota mode: "
    "none.",
    "[    1.900100] VFS: Mounted root (ext4 filesystem) readonly on device 179:26.",
    "[    1.950000] Freeing unused kernel memory: 3072K",
    "[    1.990000] Run /sbin/init as init process",
    "[    2.300000] systemd[1]: systemd 250.5+ running in system mode (+PAM -AUDIT +SELINUX)",
    "",
    "Welcome to Poky (Yocto Project Reference Distro) 4.0.4 (kirkstone)!",
    "",
    "[    4.100000] fec 30be0000.ethernet eth0: Link is Up - 1Gbps/Full - flow control rx/tx",
    "[  OK  ] Reached target Network.",
    "",
    "Poky (Yocto Project Reference Distro) 4.0.4 imx8mm-evk ttymxc1",
    "",
    "imx8mm-evk login: ",
]
KERNEL_IDS = ["linux", "calibrate", "root_wait", "root_mounted", "kernel_done", "init",
              "network_up", "login"]

FAMILIES: dict[str, tuple[list[str], list[str], str]] = {
    "imx8m": ([
        "U-Boot SPL 2021.04 (Apr 12 2021 - 10:00:00 +0000)",
        "DDRINFO: start DRAM init",
        "DDRINFO:ddrphy calibration done",
        "Normal Boot",
        "Trying to boot from MMC1",
        "NOTICE:  BL31: v2.4(release):lf-5.10.72-2.2.0-0-g5782363f9",
        "NOTICE:  BL31: Built : 10:00:00, Jan  1 2022",
        "",
        "",
        "U-Boot 2021.04 (Apr 12 2021 - 10:00:00 +0000)",
        "",
        "Loading Environment from MMC... OK",
        "In:    serial",
        "Hit any key to stop autoboot:  0 ",
        "30679552 bytes read in 345 ms (84.8 MiB/s)",
        "Booting from mmc ...",
        "Starting kernel ...",
        "",
    ], ["spl", "bl31", "bootloader", "env_loaded", "autoboot", "kernel_loaded",
        "starting_kernel"], "spl"),
    "ti_k3": ([
        "U-Boot SPL 2021.01-g2ee8efd654 (Feb 24 2023 - 05:37:51 +0000)",
        "SYSFW ABI: 3.1 (firmware rev 0x0008 '8.6.4--v08.06.04 (Chill Capybar')",
        "SPL initial stack usage: 13424 bytes",
        "Trying to boot from MMC2",
        "Loading Environment from MMC... *** Warning - No MMC card found, using default "
        "environment",
        "Starting ATF on ARM64 core...",
        "",
        "NOTICE:  BL31: v2.8(release):v2.8-226-g2fcd408bb3-dirty",
        "NOTICE:  BL31: Built : 05:33:19, Feb 24 2023",
        "I/TC: ",
        "I/TC: OP-TEE version: 3.20.0 (gcc version 9.2.1 20191025) #1 Fri Feb 24 2023 aarch64",
        "I/TC: Primary CPU initializing",
        "I/TC: Primary CPU switching to normal world boot",
        "",
        "U-Boot SPL 2021.01-g2ee8efd654 (Feb 24 2023 - 05:36:12 +0000)",
        "SYSFW ABI: 3.1 (firmware rev 0x0008 '8.6.4--v08.06.04 (Chill Capybar')",
        "Trying to boot from MMC2",
        "",
        "",
        "U-Boot 2021.01-g2ee8efd654 (Feb 24 2023 - 05:36:12 +0000)",
        "",
        "Hit any key to stop autoboot:  0 ",
        "17764864 bytes read in 731 ms (23.2 MiB/s)",
        "Starting kernel ...",
        "",
    ], ["spl", "bl31", "optee", "bootloader", "autoboot", "kernel_loaded", "starting_kernel"],
        "spl"),
    "rockchip_mainline": ([
        "U-Boot TPL 2021.01 (Jan 17 2021 - 23:49:14)",
        "Channel 0: LPDDR4, 50MHz",
        "BW=32 Col=10 Bk=8 CS0 Row=16/15 CS=1 Die BW=16 Size=2048MB",
        "Trying to boot from BOOTROM",
        "Returning to boot ROM...",
        "",
        "U-Boot SPL 2021.01 (Jan 17 2021 - 23:49:14 +0000)",
        "Trying to boot from MMC2",
        "NOTICE:  BL31: v2.3():v2.3-607-gbf602aff1:cl",
        "NOTICE:  BL31: Built : 10:11:21, Jun  5 2020",
        "",
        "",
        "U-Boot 2021.01 (Jan 17 2021 - 23:49:14 +0000) OpenWrt",
        "",
        "Model: Pine64 RockPro64 v2.1",
        "In:    serial",
        "Hit any key to stop autoboot:  0 ",
        "Starting kernel ...",
        "",
    ], ["tpl", "spl", "bl31", "bootloader", "env_loaded", "autoboot", "starting_kernel"], "tpl"),
    "rockchip_vendor": ([
        "DDR V1.09 a930779e06 typ 22/11/21-17:50:56",
        "LPDDR4X, 2112MHz",
        "channel[0] BW=16 Col=10 Bk=8 CS0 Row=17 CS=1 Die BW=16 Size=2048MB",
        "change to F0: 2112MHz",
        "out",
        "U-Boot SPL board init",
        "U-Boot SPL 2017.09-gc060f28d70-220414 #zyf (Apr 18 2022 - 18:13:34)",
        "Trying to boot from MMC2",
        "## Checking atf-1 0x00040000 ... sha256(ac799e4aa0...) + OK",
        "Jumping to U-Boot(0x00200000) via ARM Trusted Firmware(0x00040000)",
        "Total: 595.626 ms",
        "INFO:    Preloader serial: 2",
        "NOTICE:  BL31: v2.3():v2.3-557-g9609b9c19:derrick.huang",
        "NOTICE:  BL31: Built : 14:29:57, Mar  8 2023",
        "INFO:    GICv3 without legacy support detected.",
        "I/TC: OP-TEE version: 3.13.0-651-gd84087907 #hisilicon.wu (gcc version 10.2.1) #1 "
        "2022 aarch64",
        "I/TC: Primary CPU switching to normal world boot",
        "",
        "U-Boot 2017.09-gbf47e8171f4-220414 #zyf (Apr 18 2022 - 18:14:11 +0800)",
        "",
        "Hit key to stop autoboot('CTRL+C'):  0 ",
        "Starting kernel ...",
        "",
    ], ["firmware", "spl", "bl31", "optee", "bootloader", "autoboot", "starting_kernel"],
        "firmware"),
    "amlogic": ([
        "G12B:BL:6e7c85:7898ac;FEAT:E0F83180:402000;POC:F;RCY:0;EMMC:0;READ:0;0.0;CHK:0;",
        "bl2_stage_init 0x01",
        "bl2_stage_init 0x81",
        "",
        "BL2 Built : 20:29:41, Jun 18 2019. g12b g486bc38 - gongwei.chen@droid11-sz",
        "",
        "Board ID = 1",
        "NOTICE:  BL31: v1.3(release):4fc40b1",
        "NOTICE:  BL31: Built : 15:57:33, May 22 2019",
        "NOTICE:  BL31: G12A normal boot!",
        "NOTICE:  BL31: BL33 decompress pass",
        "",
        "",
        "U-Boot 2015.01 (Jul 02 2020 - 10:00:00)",
        "",
        "Hit Enter or space or Ctrl+C key to stop autoboot -- :  0 ",
        "Starting kernel ...",
        "",
    ], ["firmware", "bl2", "bl31", "bootloader", "autoboot", "starting_kernel"], "firmware"),
    "tegra": ([
        "[0000.024] W> RATCHET: MB1 binary ratchet value 4 is too large than ratchet level 2",
        "[0000.033] I> MB1 (prd-version: 1.5.1.3-t194-41334769-d2a21c57)",
        "[0000.038] I> Boot-mode: Coldboot",
        "[0000.450] I> MB2 (version: 0.0.0.0-t194-41334769-e29e4a22)",
        "NOTICE:  BL31: v2.8(release):e12e3d8a3",
        "NOTICE:  BL31: Built : 10:00:00, Jun 16 2025",
        "I/TC: OP-TEE version: 4.2 (gcc version 11.3.0) #2 Mon Jun 16 2025 aarch64",
        "I/TC: Primary CPU switching to normal world boot",
        "",
        "Jetson UEFI firmware (version 36.4.4-gcid-41062509 built on 2025-06-16T15:25:51+00:00)",
        "L4TLauncher: Attempting Direct Boot",
        "EFI stub: Booting Linux Kernel...",
    ], ["firmware", "bl31", "optee", "bootloader", "starting_kernel", "efi_stub"], "firmware"),
    "uboot_grub_efi": ([
        "U-Boot 2023.04 (Apr 03 2023 - 10:00:00 +0000)",
        "",
        "Hit any key to stop autoboot:  0 ",
        "Scanning mmc 0:1...",
        "Booting /\\EFI\\BOOT\\BOOTAA64.EFI",
        "Welcome to GRUB!",
        "",
        "Loading Linux 6.1.0-13-arm64 ...",
        "Loading initial ramdisk ...",
        "EFI stub: Booting Linux Kernel...",
        "EFI stub: Exiting boot services...",
    ], ["bootloader", "autoboot", "grub", "kernel_loaded", "starting_kernel", "efi_stub"],
        "bootloader"),
    "barebox": ([
        "barebox 2017.12.0-bsp-yocto-i.mx6-pd18.1.1 #1 Thu Jul 25 13:13:48 UTC 2019",
        "",
        "",
        "Board: Phytec phyCORE-i.MX6 Quad with eMMC",
        "mmc3: detected MMC card version 5.0",
        "running /env/bin/init...",
        "",
        "Hit m for menu or any other key to stop autoboot:    1",
        "booting 'emmc'",
        "",
        "Loading ARM Linux zImage '/mnt/emmc/zImage'",
        "Loading devicetree from '/mnt/emmc/oftree'",
        "commandline:  console=ttymxc1,115200n8  root=/dev/mmcblk1p2 rootwait rw",
        "Starting kernel in secure mode",
    ], ["bootloader", "autoboot", "kernel_loaded", "starting_kernel"], "bootloader"),
    "tfa_bl1": ([
        "NOTICE:  Booting Trusted Firmware",
        "NOTICE:  BL1: v2.6(release):v2.6",
        "NOTICE:  BL1: Built : 10:00:00, Jan  1 2022",
        "NOTICE:  BL1: Booting BL2",
        "NOTICE:  BL2: v2.6(release):v2.6",
        "NOTICE:  BL2: Built : 10:00:00, Jan  1 2022",
        "NOTICE:  BL1: Booting BL31",
        "NOTICE:  BL31: v2.6(release):v2.6",
        "NOTICE:  BL31: Built : 10:00:00, Jan  1 2022",
        "",
        "",
        "U-Boot 2022.04 (Apr 04 2022 - 10:00:00 +0000)",
        "",
        "Hit any key to stop autoboot:  0 ",
        "Starting kernel ...",
        "",
    ], ["firmware", "bl2", "bl31", "bootloader", "autoboot", "starting_kernel"], "firmware"),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_boot_chains_are_one_boot_each(linux: Profile, family: str) -> None:
    head, head_ids, restart = FAMILIES[family]
    lines = head + LINUX_TAIL
    result = analyze(_log(lines), linux)
    assert len(result.boots) == 1
    assert [m.id for m in result.boots[0].milestones] == head_ids + KERNEL_IDS
    # reset after the login prompt: the second boot starts at the first new_boot banner
    result = analyze(_log(lines + lines), linux)
    assert len(result.boots) == 2
    second = result.boots[1]
    assert second.milestones[0].id == restart
    assert second.first_line == second.milestones[0].line
    assert second.first_line == len(lines) + head.index(
        next(line for line in head if linux.by_id[restart].match(
            parse_line(1, line.encode(), None).message) is not None)) + 1
    assert [m.id for m in second.milestones][-len(KERNEL_IDS):] == KERNEL_IDS


def test_uboot_ubi_attach_is_replaced_by_the_kernels(linux: Profile) -> None:
    # OpenWrt on NAND: U-Boot attaches UBI to read the kernel, then the kernel attaches again.
    lines = [
        "U-Boot 2021.01 (Jan 17 2021 - 23:49:14 +0000) OpenWrt",
        "ubi0: attaching mtd1",
        'ubi0: attached mtd1 (name "ubi", size 124 MiB)',
        "Starting kernel ...",
        "",
        "[    0.000000] Linux version 5.15.134 (builder@buildhost) (aarch64-openwrt-linux-musl-gcc "
        "(OpenWrt GCC 12.3.0 r23630-842932a63d) 12.3.0) #0 SMP Mon Oct 9 21:45:35 2023",
        "[    0.812345] ubi0: attaching mtd1",
        '[    1.012345] ubi0: attached mtd1 (name "ubi", size 124 MiB)',
        "[    1.112345] VFS: Mounted root (squashfs filesystem) readonly on device 254:0.",
        "[    1.200000] Freeing unused kernel image (initmem) memory: 1024K",
        "[    1.400000] init: Console is alive",
        "[    1.410000] init: - watchdog -",
        "[    6.106503] procd: - early -",
        "[    6.771552] procd: - init -",
        "Please press Enter to activate this console.",
        "[   20.438356] airoha_eth 1fb50000.ethernet eth0: Link is Up - 10Gbps/Full - flow "
        "control rx/tx",
        "[   21.000000] ubi1: attached mtd5 (name \"data\", size 16 MiB)",
    ]
    boot = analyze(_log(lines), linux).boots[0]
    assert [m.id for m in boot.milestones] == [
        "bootloader", "starting_kernel", "linux", "ubi_attached", "root_mounted", "kernel_done",
        "init", "console", "network_up"]
    ubi = boot.reached("ubi_attached")
    assert ubi.line == 8 and ubi.kernel_s == pytest.approx(1.012345)
    assert ubi.values == {"mtd": 1}
    assert boot.reached("root_mounted").values == {"fstype": "squashfs", "device": "254:0"}
    assert boot.reached("init").line == 11


# --- profile loading -------------------------------------------------------------------------

GOOD_HEAD = '[profile]\nname = "board"\n\n'


def _error(tmp_path: Path, text: str) -> tuple[Path, ProfileError]:
    path = tmp_path / "board.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path))
    return path, caught.value


def _check(error: ProfileError, path: Path, line: int, reason: str) -> None:
    assert error.source == str(path)
    assert error.line == line
    assert reason in error.reason
    assert str(error).startswith(f"{path}:{line}: ")
    assert reason in str(error)


def test_error_bad_toml(tmp_path: Path) -> None:
    text = GOOD_HEAD + '[[milestone]]\nid = "app"\nmatch = [\'^app\'\nstage = "userspace"\n'
    path, error = _error(tmp_path, text)
    assert error.source == str(path)
    assert error.line is not None and 6 <= error.line <= 7
    assert "not valid TOML" in str(error)
    assert str(error).startswith(f"{path}:{error.line}: ")


def test_error_bad_toml_value(tmp_path: Path) -> None:
    path, error = _error(tmp_path, GOOD_HEAD + "[[milestone]]\nid = app\n")
    _check(error, path, 5, "not valid TOML")


def test_error_bad_regex(tmp_path: Path) -> None:
    text = GOOD_HEAD + (
        '[[milestone]]\nid = "ok"\nmatch = "^fine"\n\n'
        '[[milestone]]\nid = "app"\nstage = "userspace"\nmatch = [\'^app (started\']\n')
    path, error = _error(tmp_path, text)
    _check(error, path, 9, "app: bad pattern")
    assert "missing )" in error.reason


def test_error_unknown_key(tmp_path: Path) -> None:
    text = GOOD_HEAD + '[[milestone]]\nid = "app"\nmatch = "^app"\npatern = "^x"\n'
    path, error = _error(tmp_path, text)
    _check(error, path, 7, "unknown key 'patern' in [[milestone]] 'app'; allowed there: id, ")


@pytest.mark.parametrize(("text", "line", "reason"), [
    # a [profile] key above its table: the profile would load with no name and find nothing
    ('name = "x"\n[profile]\ntitle = "X"\n', 1,
     "unknown key 'name' at the top level: a profile holds only the tables [profile] and "
     "[[milestone]]; write it under [profile]"),
    ('[profile]\nname = "x"\n\n[profil]\nextends = "linux"\n', 4,
     "unknown key 'profil' at the top level"),
    ('id = "x"\n', 1, "write it under a [[milestone]]"),
    ('[profile]\nname = "x"\ntitel = "X"\n', 3,
     "unknown key 'titel' in [profile]; allowed there: name, title, kind, reference, extends, "
     "include, order, kernel_lines"),
    (GOOD_HEAD + '[[milestone]]\nid = "a"\nmatch = "^a"\n\n[[milestone]]\nid = "b"\n'
     'match = "^b"\n# stage = "userspace"\nstage = "userspace"\nstages = "userspace"\n', 13,
     "unknown key 'stages' in [[milestone]] 'b'"),
    (GOOD_HEAD + '[[milestone]]\nid = "a"\nmatch = "^a"\n[[milestone]]\nid = "b"\n'
     'match = "^b"\n[milestone.fallback]\nafter = ["a"]\nskipp = ["a"]\n', 12,
     "unknown key 'skipp' in the fallback of [[milestone]] 'b'; allowed there: after, skip"),
    (GOOD_HEAD + '[[milestone]]\nid = "a"\nmatch = "^a"\n'
     'fallback = { after = "a", skip = [], afterwards = 1 }\n', 7,
     "unknown key 'afterwards' in the fallback"),
    (GOOD_HEAD + '[[milestone]]\nid = "a"\nmatch = "^(?P<size>\\\\d+) read"\n'
     'context = "^reading (?P<load>\\\\S+)"\n\n[milestone.at_least]\nsize = 10\nbytes = 10\n',
     11, "a: at_least names the value 'bytes', which no pattern of the milestone extracts; its "
     "patterns extract load, size"),
    (GOOD_HEAD + '[[milestone]]\nid = "a"\nmatch = "^a"\nunless = { load = "x" }\n', 7,
     "its patterns extract no values"),
])
def test_error_unknown_keys_at_every_level(tmp_path: Path, text: str, line: int,
                                           reason: str) -> None:
    path, error = _error(tmp_path, text)
    _check(error, path, line, reason)


def test_analyze_refuses_a_profile_with_a_key_outside_its_table(tmp_path: Path) -> None:
    """`name` above [profile] once loaded a profile that found nothing, and analyze said 0."""
    profile = tmp_path / "board.toml"
    profile.write_text('name = "board"\nextends = "linux"\n\n[profile]\ntitle = "Board"\n',
                       encoding="utf-8")
    log = tmp_path / "boot.log"
    log.write_text("\n".join(BOARD_UBOOT + BOARD_KERNEL) + "\n", encoding="utf-8")
    done = subprocess.run([*BOOTLAB, "analyze", "--profile", str(profile), str(log)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout
    assert f"{profile}:1: unknown key 'name' at the top level" in done.stderr


def test_error_unknown_fallback_id(tmp_path: Path) -> None:
    text = GOOD_HEAD + (
        '[[milestone]]\nid = "app"\nstage = "userspace"\nmatch = "^app"\n\n'
        '[milestone.fallback]\nafter = "starting_kernal"\n')
    path, error = _error(tmp_path, text)
    _check(error, path, 10, "fallback names unknown milestone 'starting_kernal'")


def test_error_missing_match(tmp_path: Path) -> None:
    text = GOOD_HEAD + (
        '[[milestone]]\nid = "one"\nmatch = "^one"\n\n'
        '[[milestone]]\nid = "app"\nstage = "userspace"\ntitle = "App"\n')
    path, error = _error(tmp_path, text)
    _check(error, path, 9, "app: 'match' must be a pattern or a list of them")


def test_error_in_user_profile_extending_linux_names_the_user_file(tmp_path: Path) -> None:
    path = tmp_path / "board.toml"
    path.write_text('[profile]\nextends = "linux"\n\n[[milestone]]\nid = "app"\n'
                    'match = "(unclosed"\n', encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile("board", [tmp_path])
    _check(caught.value, path, 5, "app: bad pattern")


def test_user_profile_extending_linux_adds_a_milestone(tmp_path: Path, linux: Profile) -> None:
    (tmp_path / "myboard.toml").write_text(
        '[profile]\nname = "myboard"\nextends = "linux"\n\n'
        '[[milestone]]\nid = "app_ready"\ntitle = "App ready"\nstage = "userspace"\n'
        "match = ['^myapp\\[\\d+\\]: ready']\n", encoding="utf-8")
    profile = load_profile("myboard", [tmp_path])
    assert profile.name == "myboard"
    assert [m.id for m in profile.markers] == [m.id for m in linux.markers] + ["app_ready"]
    lines = BOARD_UBOOT + BOARD_KERNEL + BOARD_USERSPACE[:10] + ["myapp[201]: ready"] + \
        BOARD_USERSPACE[10:]
    ids = [m.id for m in analyze(_log(lines), profile).milestones]
    assert ids == [*BOARD_IDS[:-2], "app_ready", "login", "restart"]


def test_user_profile_named_linux_replaces_the_builtin(tmp_path: Path) -> None:
    (tmp_path / "linux.toml").write_text(
        '[[milestone]]\nid = "bootloader"\nstage = "bootloader"\nnew_boot = true\n'
        "match = '^U-Boot \\d'\n", encoding="utf-8")
    profile = load_profile("linux", [tmp_path])
    assert [m.id for m in profile.markers] == ["bootloader"]
    assert profile.source == str(tmp_path / "linux.toml")


def test_parse_profile_reports_the_source(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as caught:
        parse_profile('[[milestone]]\nid = "Bad-Id"\nmatch = "x"\n', "inline.toml")
    assert caught.value.source == "inline.toml"
    assert caught.value.line == 2
    assert "lower_snake_case" in caught.value.reason


def test_builtin_profiles_load_and_prefilter(linux: Profile, resume: Profile) -> None:
    for profile in (linux, resume):
        for marker in profile.markers:
            assert marker.stage in STAGES
            for pattern in marker.patterns:
                re.compile(pattern.pattern)
        markers = MarkerSet(profile)
        assert not markers.candidate("[    0.000000] Memory: 954572K/1048576K available")


# --- resume ----------------------------------------------------------------------------------

RESUME_MATCHES: list[tuple[str | frozenset[str], str, dict]] = [
    ("resume_start", "PM: Image signature found, resuming", {}),
    ("resume_start", "PM: hibernation: resume from hibernation", {}),
    ("resume_start", "PM: resume from hibernation", {}),
    ("resume_start", "PM: Starting manual resume from disk", {}),
    ("image_load", "PM: Loading and decompressing image data (505553 pages)...",
     {"pages": 505553}),
    ("image_load", "PM: Loading image data pages (27439 pages)...", {"pages": 27439}),
    ("image_load", "PM: hibernation: Loading image data pages (1234 pages)...", {"pages": 1234}),
    ("image_load", "PM: Image loading progress:   0%", {}),
    ("image_loaded", "PM: Image loading done", {}),
    ("image_loaded", "PM: Image loading done.", {}),
    ("image_loaded", "PM: Image successfully loaded", {}),
    (frozenset({"image_load", "image_loaded"}),
     "PM: Loading image data pages (27439 pages) ...     \x08\x08\x08\x08  0%\x08\x08\x08\x08 50%"
     "\x08\x08\x08\x08done", {"pages": 27439}),
    ("image_read", "PM: hibernation: Read 2022212 kbytes in 5.05 seconds (400.43 MB/s)",
     {"kbytes": 2022212, "seconds": 5.05, "mb_per_s": 400.43}),
    ("image_read", "PM: Read 109756 kbytes in 0.54 seconds (203.25 MB/s)",
     {"kbytes": 109756, "seconds": 0.54, "mb_per_s": 203.25}),
    ("restored", "Enabling non-boot CPUs ...", {}),
    ("restored", "ACPI: Waking up from system sleep state S4", {}),
    ("restored", "PM: restore of devices complete after 123.456 msecs", {"ms": 123.456}),
    ("restored", "PM: noirq restore of devices complete after 2.091 msecs", {"ms": 2.091}),
    ("resumed", "Restarting tasks ... done.", {}),
    ("resumed", "Restarting tasks: Starting", {}),
    ("resumed", "Done restarting tasks.", {}),
    ("resumed", "PM: resume devices took 0.150 seconds", {"seconds": 0.15}),
    ("post_resume", "PM: hibernation: hibernation exit", {}),
    ("post_resume", "systemd-sleep[1234]: System returned from sleep state.", {}),
    ("post_resume", "systemd-sleep[812]: System returned from sleep operation 'hibernate'.", {}),
    ("post_resume", "systemd[1]: Finished systemd-hibernate.service - System Hibernation.", {}),
    ("app_init", "myapp: application ready", {}),
    ("app_init", "[app] camera pipeline running", {}),
    ("app_init", "Application started (pid 412)", {}),
    ("resume_failed", "PM: hibernation: resume failed (-22)", {}),
    ("resume_failed", "PM: hibernation: Failed to load image, recovering.", {}),
    ("resume_failed", "PM: Failed to load hibernation image, recovering.", {}),
    ("resume_failed", "PM: Invalid image CRC32!", {}),
]

RESUME_NEAR_MISSES: list[tuple[str, str]] = [
    ("resume_start", "PM: hibernation: hibernation entry"),
    ("resume_start", "PM: Checking hibernation image partition /dev/sda2"),
    ("resume_start", "PM: Hibernation image not present or could not be loaded."),
    ("image_load", "PM: Image loading progress:  10%"),
    ("image_load", "PM: Using 3 thread(s) for decompression"),
    ("image_load", "PM: Loading hibernation image."),
    ("image_loaded", "PM: Image loading progress:  90%"),
    ("image_loaded", "PM: Image saving done"),
    ("image_read", "PM: hibernation: Wrote 2022212 kbytes in 9.10 seconds (222.22 MB/s)"),
    ("restored", "Disabling non-boot CPUs ..."),
    ("restored", "PM: quiesce of devices complete after 1431.879 msecs"),
    ("resumed", "Restarting kernel threads ... done."),
    ("resumed", "Freezing user space processes ... (elapsed 0.001 seconds) done."),
    ("post_resume", "systemd-sleep[812]: Performing sleep operation 'hibernate'..."),
    ("app_init", "AppArmor: AppArmor Filesystem Enabled"),
    ("app_init", "PM: hibernation: hibernation exit"),
    ("app_init", "snapd[512]: daemon.go:247: started snapd/2.61 (series 16)"),
    ("resume_failed", "PM: hibernation: resume from hibernation"),
]


@pytest.mark.parametrize(("expected", "line", "values"), RESUME_MATCHES,
                         ids=[f"{e}:{line[:32]}" for e, line, _ in RESUME_MATCHES])
def test_resume_marker_matches(resume: Profile, expected, line: str, values: dict) -> None:
    markers = MarkerSet(resume)
    for variant in _variants(line):
        hits = _hits(markers, variant)
        assert set(hits) == _ids(expected), variant
        merged = {k: v for hit in hits.values() for k, v in hit.items()}
        for key, value in values.items():
            assert merged[key] == pytest.approx(value)
        assert markers.candidate(variant.encode("utf-8").decode("latin-1")), variant


@pytest.mark.parametrize(("expected", "line"), RESUME_NEAR_MISSES,
                         ids=[f"{e}:{line[:32]}" for e, line in RESUME_NEAR_MISSES])
def test_resume_near_misses(resume: Profile, expected: str, line: str) -> None:
    markers = MarkerSet(resume)
    for variant in _variants(line):
        assert expected not in _hits(markers, variant), variant


RESUME_KERNEL = [
    *BOARD_KERNEL[:8],
    "[    0.950000] Freezing user space processes ... (elapsed 0.001 seconds) done.",
    "[    1.210000] PM: Image signature found, resuming",
    "[    1.210400] PM: hibernation: resume from hibernation",
    "[    1.215000] Freezing user space processes ... (elapsed 0.001 seconds) done.",
    "[    1.215100] OOM killer disabled.",
    "[    1.231706] PM: hibernation: Basic memory bitmaps created",
    "[    1.265205] PM: Using 1 thread(s) for lzo decompression",
    "[    1.269590] PM: Loading and decompressing image data (17495 pages)...",
    "[    1.292790] PM: Image loading progress:   0%",
    "[    1.390380] PM: Image loading progress:  50%",
    "[    1.525804] PM: Image loading progress: 100%",
    "[    1.530241] PM: Image loading done",
    "[    1.533295] PM: hibernation: Read 69980 kbytes in 0.26 seconds (269.15 MB/s)",
    "[    1.540827] PM: Image successfully loaded",
    "[    1.599243] Disabling non-boot CPUs ...",
    # the restored kernel: its own printk clock
    "[  812.044639] Enabling non-boot CPUs ...",
    "[  812.148863] PM: restore of devices complete after 98.210 msecs",
    "[  812.160000] OOM killer enabled.",
    "[  812.160100] Restarting tasks ... done.",
    "[  812.170000] PM: hibernation: hibernation exit",
]
RESUME_IDS = [
    "bootloader", "env_loaded", "autoboot", "kernel_loaded", "image_info", "kernel_verified",
    "kernel_uncompressed", "starting_kernel", "linux", "calibrate", "resume_start",
    "image_load", "image_loaded", "image_read", "restored", "resumed", "post_resume", "app_init",
]


def test_resume_log(resume: Profile) -> None:
    lines = BOARD_UBOOT + RESUME_KERNEL + ["dashboard: application running, 3 views",
                                           "[  812.900000] random: crng reseeded"]
    result = analyze(_log(lines), resume)
    assert len(result.boots) == 1
    boot = result.boots[0]
    assert [m.id for m in boot.milestones] == RESUME_IDS
    assert not any(m.fallback for m in boot.milestones)
    got = {m.id: m for m in boot.milestones}
    assert got["resume_start"].line == _line_no(lines, "Image signature found")
    assert got["image_load"].values == {"pages": 17495}
    assert got["image_read"].values == {"kbytes": 69980, "seconds": 0.26, "mb_per_s": 269.15}
    assert got["restored"].kernel_s == pytest.approx(812.044639)
    assert got["restored"].line == _line_no(lines, "Enabling non-boot CPUs")
    assert got["app_init"].line == _line_no(lines, "dashboard:")
    assert not boot.failed


def test_resume_app_line_by_fallback(resume: Profile) -> None:
    lines = BOARD_UBOOT + RESUME_KERNEL + [
        "", "[  812.200000] systemd-sleep[812]: System returned from sleep state.",
        "camd[412]: streaming 1920x1080@30"]
    boot = analyze(_log(lines), resume).boots[0]
    assert [m.id for m in boot.milestones] == RESUME_IDS
    app = boot.reached("app_init")
    assert app.fallback and app.line == _line_no(lines, "camd[412]")


def test_resume_app_pattern_overridden_by_user_profile(tmp_path: Path) -> None:
    (tmp_path / "cam.toml").write_text(
        '[profile]\nextends = "resume"\n\n[[milestone]]\nid = "app_init"\n'
        'title = "Camera streaming"\nstage = "userspace"\n'
        "match = ['^camd\\[\\d+\\]: streaming (?P<mode>\\S+)']\n", encoding="utf-8")
    profile = load_profile("cam", [tmp_path])
    lines = BOARD_UBOOT + RESUME_KERNEL + ["camd[412]: init", "camd[412]: streaming 1920x1080@30"]
    boot = analyze(_log(lines), profile).boots[0]
    app = boot.reached("app_init")
    assert app.title == "Camera streaming"
    assert not app.fallback
    assert app.values == {"mode": "1920x1080@30"}


def test_resume_failure_falls_back_to_a_cold_boot(resume: Profile) -> None:
    lines = BOARD_UBOOT + BOARD_KERNEL[:8] + [
        "[    1.210400] PM: hibernation: resume from hibernation",
        "[    1.269590] PM: Loading and decompressing image data (17495 pages)...",
        "[    1.300000] PM: Invalid image CRC32!",
        "[    1.300100] PM: hibernation: Failed to load image, recovering.",
        "[    1.300200] PM: hibernation: resume failed (-61)",
    ] + BOARD_KERNEL[12:] + BOARD_USERSPACE
    boot = analyze(_log(lines), resume).boots[0]
    assert boot.failed
    ids = [m.id for m in boot.milestones]
    assert ids.count("resume_failed") == 3
    assert ids[-5:] == ["kernel_done", "init", "root_mounted", "login", "restart"]
