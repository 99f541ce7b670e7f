"""One test per class of line that real boards print and the milestone rules must read right.

Each excerpt is quoted from a real capture in ../shared/corpus/logs (the file is named; line
endings, backspaces, NUL bytes and colours as the board sent them) or, where it says so, from a
real capture of a board outside the corpus. The whole corpus is scored in tests/test_corpus.py;
these pin each rule to the lines that made it.
"""

from __future__ import annotations

import pytest

from bootlab.core.analysis.phases import Boot
from bootlab.core.analysis.pipeline import Analysis, analyze
from bootlab.core.analysis.profiles import Profile, load_profile


@pytest.fixture(scope="module")
def linux() -> Profile:
    return load_profile("linux")


def _run(linux: Profile, *lines: str | bytes, eol: bytes = b"\n") -> Analysis:
    data = eol.join(line if isinstance(line, bytes) else line.encode() for line in lines) + eol
    return analyze(data, linux)


def _at(boot: Boot, ident: str) -> int | None:
    """The line (1-based) of a milestone's first occurrence in the boot."""
    milestone = boot.reached(ident)
    return None if milestone is None else milestone.line


# --- kernel_loaded: the kernel's load, not the device tree's or initrd's --------------------

def test_kernel_read_is_the_one_named_zimage_not_the_initrd_or_dtb_after_it(
        linux: Profile) -> None:
    # 031-beaglebone-black (uEnv.txt uenvcmd: zImage, then initrd.img, then the dtb)
    boot = _run(linux,
                "U-Boot 2014.04-00014-g47880f5 (Apr 22 2014 - 13:23:54)",
                "reading zImage",
                "4103240 bytes read in 276 ms (14.2 MiB/s)",
                "reading initrd.img",
                "2952604 bytes read in 187 ms (15.1 MiB/s)",
                "reading /dtbs/am335x-boneblack.dtb",
                "25926 bytes read in 11 ms (2.2 MiB/s)",
                "Starting kernel ...").boots[0]
    assert _at(boot, "kernel_loaded") == 3
    assert boot.reached("kernel_loaded").values == {"load": "zImage", "bytes": 4103240,
                                                    "ms": 276}


def test_extlinux_reads_the_initrd_before_the_kernel_by_name(linux: Profile) -> None:
    # 035-firefly-itx3588j (extlinux.conf, then /initrd-5.10.66, then /Image-5.10.66, dtb)
    analysis = _run(linux,
                    "U-Boot 2017.09(u-boot commit id: fb3b51b0fc)-gfb3b51b0fc-dirty (Apr 18 2022 "
                    "- 18:13:34 +0800)",
                    "Retrieving file: /extlinux/extlinux.conf",
                    "101 bytes read in 3 ms (32.2 KiB/s)",
                    "Retrieving file: /initrd-5.10.66",
                    "=================begin===================",
                    "9233322 bytes read in 55 ms (160.1 MiB/s)",
                    "Retrieving file: /Image-5.10.66",
                    "=================begin===================",
                    "35807744 bytes read in 229 ms (149.1 MiB/s)",
                    "Retrieving file: /rk-kernel.dtb",
                    "159672 bytes read in 8 ms (19 MiB/s)",
                    "Starting kernel ...")
    assert _at(analysis.boots[0], "kernel_loaded") == 9
    reasons = {r.line: r.reason for r in analysis.rejected if r.marker == "kernel_loaded"}
    assert "initrd" in reasons[6] and "extlinux.conf" in reasons[3]


def test_a_kernel_fetched_twice_by_tftp_counts_the_first_time(linux: Profile) -> None:
    # 034-ti-am642-sk (autoboot stopped; tftp Image typed twice, then the dtb)
    boot = _run(linux,
                "U-Boot 2026.01-g2549829cc194 (May 14 2026 - 08:09:09 +0900)",
                "Hit any key to stop autoboot: 0",
                "=> tftp 0x82000000 Image",
                "Filename 'Image'.",
                "Bytes transferred = 42686976 (28b5a00 hex)",
                "=>",
                "Filename 'Image'.",
                "Bytes transferred = 42686976 (28b5a00 hex)",
                "=> tftp 0x88000000 k3-am642-sk.dtb",
                "Filename 'k3-am642-sk.dtb'.",
                "Bytes transferred = 63022 (f62e hex)",
                "Starting kernel ...").boots[0]
    assert _at(boot, "kernel_loaded") == 5


def test_a_nameless_read_is_told_by_its_size(linux: Profile) -> None:
    # 033-ekahau-sidekick (two 1-byte flag files, then the 62 MB FIT)
    boot = _run(linux,
                "U-Boot 2015.04 (Apr 16 2018 - 07:43:23)",
                "** File not found /current.txt **",
                "1 bytes read in 58 ms (0 Bytes/s)",
                "### APP 3 TEST ...",
                "1 bytes read in 62 ms (0 Bytes/s)",
                "### APP 3 BOOT ...",
                "62045406 bytes read in 1704 ms (34.7 MiB/s)",
                "Starting kernel ...", eol=b"\r\n").boots[0]
    assert _at(boot, "kernel_loaded") == 7


def test_an_image_header_shows_a_nameless_read_was_the_ramdisk(linux: Profile) -> None:
    # Orange Pi RV2 (outside the corpus): boot.scr reads uInitrd, then Image, then the dtb, all
    # nameless; the uInitrd header's Data Size (+64 bytes of legacy header) names the first.
    boot = _run(linux,
                "[   0.123] U-Boot 2022.10ky (Mar 11 2025 - 22:24:18 +0800)",
                "[   5.878] 2544 bytes read in 15 ms (165 KiB/s)",
                "[   5.879] ## Executing script at 2c100000",
                "[   7.181] 20488358 bytes read in 1257 ms (15.5 MiB/s)",
                "[   9.307] 34558464 bytes read in 2110 ms (15.6 MiB/s)",
                "[   9.353] 112811 bytes read in 31 ms (3.5 MiB/s)",
                "[   9.373] ## Loading init Ramdisk from Legacy Image at 21000000 ...",
                "[   9.376]    Image Name:   uInitrd",
                "[   9.386]    Data Size:    20488294 Bytes = 19.5 MiB",
                "[   9.420] Starting kernel ...").boots[0]
    assert _at(boot, "kernel_loaded") == 5
    assert [m.id for m in boot.milestones].count("kernel_loaded") == 1


@pytest.mark.parametrize(("excerpt", "line"), [
    # 040-asus-rt-ac59u-v2: the image is checked in flash; no read line
    (["U-Boot 1.1.4-gf5a7e7fc-dirty (Dec 12 2019 - 16:21:11)",
      "## Checking 1st firmware at 9f060000 ...",
      "   Data Size:    23915742 Bytes = 22.8 MB",
      "   Verifying Checksum ... OK",
      "   Uncompressing Kernel Image ... OK",
      "Starting kernel ..."], 4),
    # 039-tplink-wa855re: no checksum line either
    (["U-Boot 1.1.4 (Feb 19 2018 - 17:27:22)", "Autobooting in 1 seconds",
      "## Booting image at 9f020000 ...", "   Uncompressing Kernel Image ... OK", "",
      "Starting kernel ..."], 4),
    # 046-hi3518-ipcam: the SPI NOR read is silent
    (["U-Boot 2010.06 (Oct 08 2016 - 18:19:00)",
      "## Booting kernel from Legacy Image at 82000000 ...",
      "   Loading Kernel Image ... OK", "OK", "", "Starting kernel ..."], 3),
    # 042-igate-gw040: Broadcom CFE reads and decompresses in one step
    (["CFE version 1.0.38-118.3 for BCM96838 (32bit,SP,BE)",
      "Decompression LZ4 Image OK!", "Entry at 0x8041b7f0",
      "Starting program at 0x8041b7f0"], 2),
    # 043-motorola-mh7601: a UBI volume read (and a 4-byte read after it)
    (["U-Boot 2019.07 (Sep 20 2021 - 17:51:57 -0400)",
      "No size specified -> Using max size (8488240)",
      "Read 8488240 bytes from volume bootfs1 to 02000000",
      "Read 4 bytes from volume rootfs1 to 0df0e9ec", "Starting kernel ..."], 3),
])
def test_a_kernel_without_a_read_line_is_loaded_at_its_check_or_placement(
        linux: Profile, excerpt: list[str], line: int) -> None:
    assert _at(_run(linux, *excerpt, eol=b"\r\n").boots[0], "kernel_loaded") == line


# --- autoboot --------------------------------------------------------------------------------

def test_autobooting_in_n_seconds(linux: Profile) -> None:
    # 039-tplink-wa855re (Atheros U-Boot 1.1.4)
    boot = _run(linux, "U-Boot 1.1.4 (Feb 19 2018 - 17:27:22)", "Setting 0x181162c0 to "
                "0x1021a100", "Autobooting in 1 seconds").boots[0]
    assert _at(boot, "autoboot") == 3
    assert boot.reached("autoboot").values == {"bootdelay": 1}


def test_a_boot_menu_countdown_of_backspaced_numbers(linux: Profile) -> None:
    # 040-asus-rt-ac59u-v2: the menu, then a line of nothing but a countdown
    boot = _run(linux,
                b"U-Boot 1.1.4-gf5a7e7fc-dirty (Dec 12 2019 - 16:21:11)",
                b"Please choose the operation: ",
                b"   3: Boot System code via Flash (default).",
                b"   4: Entr boot command line interface.",
                b"\x08\x08\x08 1 \x08\x08\x08 0 ",
                b"   3: Boot System code via Flash (default).", eol=b"\r\n").boots[0]
    assert _at(boot, "autoboot") == 5
    assert boot.reached("autoboot").values == {"bootdelay": 1}
    assert boot.reached("autoboot").text == " 0 "        # shown as the terminal drew it


def test_the_countdowns_first_number_is_the_bootdelay(linux: Profile) -> None:
    # 031-beaglebone-black: "1", backspaces, "0" on one line
    boot = _run(linux, b"U-Boot 2014.04-00014-g47880f5 (Apr 22 2014 - 13:23:54)",
                b"Hit any key to stop autoboot:  1 \x08\x08\x08 0 ").boots[0]
    assert boot.reached("autoboot").values == {"bootdelay": 1}


def test_cfe_auto_run(linux: Profile) -> None:
    # 042-igate-gw040
    boot = _run(linux, "CFE version 1.0.38-118.3 for BCM96838 (32bit,SP,BE)",
                "*** Press any key to stop auto run (1 seconds) ***",
                b"Auto run second count down: 1\x081\x080", eol=b"\r\n").boots[0]
    assert _at(boot, "autoboot") == 2 and boot.reached("autoboot").values == {"bootdelay": 1}


# --- a bootloader nobody's marker set knows ---------------------------------------------------

def test_broadcom_cfe_is_a_bootloader_with_its_own_hand_off(linux: Profile) -> None:
    # 042-igate-gw040 (the CFE ROM's progress codes come first; HELO twice is not two boots)
    analysis = _run(linux, "HELO", "CPUI", "L1CI", "HELO", "CPUI", "PASS", "",
                    "Base: G6.16_04RTMP1",
                    "CFE version 1.0.38-118.3 for BCM96838 (32bit,SP,BE)",
                    "*** Press any key to stop auto run (1 seconds) ***",
                    "Decompression LZ4 Image OK!",
                    "Starting program at 0x8041b7f0",
                    "Linux version 3.4.11-rt19 (vinhnv@localhost.localdomain) (gcc version 4.6.2 "
                    "(Buildroot 2011.11) ) #3 SMP PREEMPT Mon Sep 11 17:26:47 +07 2017",
                    eol=b"\r\n")
    assert len(analysis.boots) == 1
    boot = analysis.boots[0]
    assert [(m.id, m.line) for m in boot.milestones] == [
        ("bootloader", 9), ("autoboot", 10), ("kernel_loaded", 11), ("starting_kernel", 12),
        ("linux", 13)]
    assert boot.reached("bootloader").values == {"cfe_version": "1.0.38-118.3"}


# --- root_mounted: the kernel's VFS line ----------------------------------------------------

@pytest.mark.parametrize(("excerpt", "line"), [
    # 032-pine64plus: ext4 says "mounted filesystem" first
    (["[    1.259231] EXT4-fs (mmcblk0p2): mounted filesystem with ordered data mode. Opts: "
      "(null)",
      "[    1.267359] VFS: Mounted root (ext4 filesystem) on device 179:2."], 2),
    # 042-igate-gw040: UBIFS's own line, no printk times
    (['UBIFS: mounted UBI device 0, volume 0, name "rootfs_ubifs"',
      "UBIFS: mounted read-only",
      "VFS: Mounted root (ubifs filesystem) readonly on device 0:11."], 3),
])
def test_root_mounted_is_the_vfs_line_not_the_filesystems_own(
        linux: Profile, excerpt: list[str], line: int) -> None:
    boot = _run(linux, "Starting kernel ...", *excerpt).boots[0]
    assert _at(boot, "root_mounted") == line + 1


def test_an_initramfs_mount_holds_root_mounted_when_no_vfs_line_comes(linux: Profile) -> None:
    # 035-firefly-itx3588j: the initramfs mounts the real root; the kernel prints no VFS line
    boot = _run(linux, "Starting kernel ...",
                "[    5.914444] Run /init as init process",
                "Loading, please wait...",
                "[    6.715990] EXT4-fs (mmcblk0p6): mounted filesystem with ordered data mode. "
                "Opts: (null)").boots[0]
    assert _at(boot, "root_mounted") == 4 and boot.reached("root_mounted").weak


# --- kernel_done ----------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "Freeing init memory: 212K",                                 # 041-aerohive (2.6.36)
    "Freeing init memory: 120K",                                 # 046-hi3518 (3.0.8)
    "Freeing unused kernel memory: 216k freed",                  # 042-igate-gw040 (3.4)
    "[    1.248650] Freeing unused kernel memory: 432K (c079c000 - c0808000)",   # 037
    "[    2.101234] Freeing unused kernel image (initmem) memory: 2184K",        # 045 (6.x)
])
def test_kernel_done_in_every_wording(linux: Profile, line: str) -> None:
    boot = _run(linux, "Starting kernel ...", line).boots[0]
    assert _at(boot, "kernel_done") == 2 and not boot.reached("kernel_done").fallback


def test_a_quiet_looking_line_before_the_kernels_own_is_not_user_space(linux: Profile) -> None:
    # 043-motorola-mh7601: the Broadcom kernel prints three unstamped lines before "Booting
    # Linux"; a fallback placed on them is taken back when the kernel shows up.
    boot = _run(linux,
                "Starting kernel ...", "",
                "remove sysport",
                "system port tx wait 0 timeout 1000 p 0 c 0",
                "sysport reset 0",
                "Booting Linux on physical CPU 0x0",
                "VFS: Mounted root (squashfs filesystem) readonly on device 254:0.",
                "devtmpfs: mounted",
                "Freeing unused kernel memory: 1024K",
                "Run /sbin/init as init process",
                "init: Console is alive").boots[0]
    assert [(m.id, m.line, m.fallback) for m in boot.milestones] == [
        ("starting_kernel", 1, False), ("linux", 6, False), ("root_mounted", 7, False),
        ("kernel_done", 9, False), ("init", 10, False)]


# --- init: where user space starts ----------------------------------------------------------

@pytest.mark.parametrize(("tail", "line"), [
    # 037-tiny4412: BusyBox init's askfirst prompt is its first output
    (["[    1.248650] Freeing unused kernel memory: 432K (c079c000 - c0808000)", "",
      "Please press Enter to activate this console. ", "[root@tiny4412 ]# "], 3),
    # 044-sama5d26: BusyBox init prints nothing; its first init script does
    (["Freeing unused kernel memory: 1024K", "Starting logging: OK",
      "Initializing random number generator... done."], 2),
    # 040-asus-rt-ac59u-v2: a kernel line (no printk time) comes before ASUS rc's first line
    (["Freeing unused kernel memory: 176K (804a4000 - 804d0000)",
      "random: init: uninitialized urandom read (4 bytes read, 8 bits of entropy available)",
      "init_main start."], 3),
    # 046-hi3518: an init script's ASCII logo
    (["Freeing init memory: 120K", "", "            _ _ _ _ _ _ _ _ _ _ _ _"], 3),
    # 041-aerohive: a 2.6-era rc script
    (["Freeing init memory: 212K", "Mounting local file systems..."], 2),
    # 039-tplink-wa855re: OpenWrt procd, through the kernel log (printk time)
    (["[    1.364445] Freeing unused kernel memory: 244K",
      "[    1.369086] This architecture does not have kernel memory protection.",
      "[    2.166982] init: Console is alive"], 3),
    # 038-odroid-c4: Android init, with Amlogic's "@cpu" printk times
    (["[    5.434249@0] Freeing unused kernel memory: 5056K",
      "[    5.453197@0] init: init first stage started!"], 2),
])
def test_init_is_the_first_line_user_space_prints(linux: Profile, tail: list[str],
                                                  line: int) -> None:
    boot = _run(linux, "Starting kernel ...", "Linux version 4.4.40 (a@b) (gcc) #2",
                *tail).boots[0]
    assert _at(boot, "init") == line + 2


# --- captures that hold more than one boot ----------------------------------------------------

def test_a_capture_that_begins_with_the_previous_boots_shutdown(linux: Profile) -> None:
    # 035-firefly-itx3588j: "reboot" typed, the old boot shuts down, the board restarts
    analysis = _run(linux,
                    "",
                    "root@firefly:~# reboot",
                    "[  OK  ] Stopped target Multi-User System.",
                    "[  105.697141] IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready",
                    "[  106.554170] reboot: Restarting system",
                    "DDR Version V1.07 20220412",
                    "U-Boot SPL board init",
                    "U-Boot 2017.09-gfb3b51b0fc (Apr 18 2022 - 18:13:34 +0800)",
                    "Starting kernel ...",
                    "[    1.208310] Booting Linux on physical CPU 0x0000000000 [0x412fd050]")
    first, second = analysis.boots
    assert first.partial and [m.id for m in first.milestones] == ["restart"]
    assert second.first_line == 6
    assert [m.id for m in second.milestones] == [
        "firmware", "spl", "bootloader", "starting_kernel", "linux"]


def test_a_capture_that_begins_at_the_previous_sessions_login_prompt(linux: Profile) -> None:
    # IPQ4019 mesh router (outside the corpus): a failed login, then a power-on reset
    analysis = _run(linux, "", "M9Plus login: dfd", "Password: ", "Login incorrect",
                    "M9Plus login: \x00\x00\xff\x00",
                    "Format: Log Type - Time(microsec) - Message - Optional Info",
                    "U-Boot 2012.07 [Chaos Calmer 15.05.1,unknown] (Oct 14 2019 - 10:40:32)",
                    "Starting kernel ...", "M9Plus login: ", eol=b"\r\n")
    assert analysis.boots[0].partial and analysis.boots[0].milestones == []
    assert [m.line for m in analysis.milestones if m.id == "login"] == [9]


def test_a_reset_inside_the_firmware_is_the_same_boot(linux: Profile) -> None:
    # 034-ti-am642-sk: the R5 SPL resets itself once for an erratum, then boots on
    analysis = _run(linux,
                    "U-Boot SPL 2026.01-g2549829cc194 (May 14 2026 - 08:08:16 +0900)",
                    "Resetting on cold boot to workaround ErrataID:i2331",
                    "resetting ...", "",
                    "U-Boot SPL 2026.01-g2549829cc194 (May 14 2026 - 08:08:16 +0900)",
                    "NOTICE:  BL31: v2.14.0(release):sandbox/v2.14-472-g76500ceaee",
                    "I/TC: OP-TEE version: 4.9.0-49-gf2a7ad063 (gcc version 15.2.0 (GCC)) #1",
                    "U-Boot 2026.01-g2549829cc194 (May 14 2026 - 08:09:09 +0900)",
                    "Starting kernel ...")
    assert len(analysis.boots) == 1
    assert [m.id for m in analysis.boots[0].milestones] == [
        "spl", "restart", "bl31", "optee", "bootloader", "starting_kernel"]


# --- login -----------------------------------------------------------------------------------

@pytest.mark.parametrize("prompt", [
    "beaglebone login",                      # 031: cut by grabserial's quit pattern
    "am64xx-evm login: ***************************************************************",  # 034
    "(none) login: PID file /tmpfs/boottab.pid",                                          # 046
    "m500768 login: get EDID from drive.",                                                 # 044
    "firefly login: root (automatic login)",                                               # 035
])
def test_a_login_prompt_cut_or_followed_by_other_text(linux: Profile, prompt: str) -> None:
    boot = _run(linux, "Starting kernel ...", "", prompt).boots[0]
    assert _at(boot, "login") == 3


def test_busybox_askfirst_is_a_ready_console_not_a_login(linux: Profile) -> None:
    # 043-motorola-mh7601 (OpenWrt): no login prompt ever comes
    boot = _run(linux, "Starting kernel ...", "procd: - init -",
                "Please press Enter to activate this console.").boots[0]
    assert _at(boot, "console") == 3 and boot.reached("login") is None


# --- printk times of vendor kernels --------------------------------------------------------

@pytest.mark.parametrize(("line", "kernel_s"), [
    ("[    0.000000@0] Booting Linux on physical CPU 0x0", 0.0),        # 038-odroid-c4 (Amlogic)
    # RK3368 Android box (outside the corpus): [cpu: task: pid] after two spaces
    ("[    0.000000]  [0:        swapper:    0] Linux version 3.10.0 (foxluo@skykirin2) "
     "(gcc version 4.9 20140514 (prerelease) (GCC) ) #2 SMP PREEMPT", 0.0),
])
def test_vendor_printk_times_are_read(linux: Profile, line: str, kernel_s: float) -> None:
    boot = _run(linux, "Starting kernel ...", line).boots[0]
    assert _at(boot, "linux") == 2 and boot.reached("linux").kernel_s == kernel_s


def test_power_on_garbage_before_a_banner(linux: Profile) -> None:
    # 038-odroid-c4: the Amlogic ROM's first line starts with a 0xff byte
    boot = _run(linux, b"\xffSM1:BL:511f6b:81ca2f;FEAT:A0F83180:20282000;POC:F;RCY:0;EMMC:800;"
                b"NAND:81;SD?:0;SD:0;READ:0;0.0;CHK:0;", eol=b"\r\n").boots[0]
    assert _at(boot, "firmware") == 1
