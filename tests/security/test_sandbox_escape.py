"""A hostile test keeps no capability: ``open_by_handle_at`` cannot reach the host.

The attack of issue 14: with ``CAP_DAC_READ_SEARCH`` a process can open any
inode of a filesystem it can see by forging a file handle, past a read-only
bind mount, and create files in the host's ``/tmp``. The same ctypes
program runs on the host as root (the positive control: the call works
there) and in the sandbox (it must fail with ``EPERM``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from hostile import NEEDS_NAMESPACES, host_has, hostile, open_sandbox, pytest_argv_for

from fixbugs.sandbox import Sandbox, probe

pytestmark = NEEDS_NAMESPACES

HANDLE_ATTACK = """
import ctypes, errno, os

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100


class FileHandle(ctypes.Structure):
    _fields_ = [
        ("handle_bytes", ctypes.c_uint),
        ("handle_type", ctypes.c_int),
        ("f_handle", ctypes.c_ubyte * 128),
    ]


def attack(target_dir, marker):
    status = open("/proc/self/status").read()
    print("CAPEFF", [l.split()[1] for l in status.splitlines() if l.startswith("CapEff")][0])
    fh = FileHandle()
    fh.handle_bytes = 128
    mount_id = ctypes.c_int()
    rc = libc.name_to_handle_at(AT_FDCWD, b"/usr", ctypes.byref(fh), ctypes.byref(mount_id), 0)
    print("NAME_TO_HANDLE", rc, errno.errorcode.get(ctypes.get_errno(), 0))
    mfd = os.open("/usr", os.O_RDONLY | os.O_DIRECTORY)
    fd = libc.open_by_handle_at(mfd, ctypes.byref(fh), os.O_RDONLY | os.O_DIRECTORY)
    print("OPEN_BY_HANDLE", "ok" if fd >= 0 else errno.errorcode.get(ctypes.get_errno()))
    if fd >= 0:
        os.close(fd)
    # and the plain way: write the marker into the host folder named by path
    try:
        with open(os.path.join(target_dir, marker), "w") as f:
            f.write("escaped")
        print("WRITE ok")
    except OSError as exc:
        print("WRITE", errno.errorcode.get(exc.errno))
"""


async def test_open_by_handle_at_fails_with_eperm_and_no_host_file_appears(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    outside = tmp_path / "world-writable"
    outside.mkdir(mode=0o777)
    outside.chmod(0o777)
    marker = "escaped.txt"
    # positive control: as root on the host the same program reaches the inode
    control = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HANDLE_ATTACK + f"\nattack({str(tmp_path)!r}, 'control.txt')",
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await control.communicate()
    assert b"OPEN_BY_HANDLE ok" in out, out

    source = HANDLE_ATTACK + (
        f"\n\ndef test_attack():\n    attack({str(outside)!r}, {marker!r})\n"
        f"    attack('/tmp', {marker!r})\n"
    )
    sb = open_sandbox(hostile(tmp_path, source), tmp_path)
    sandboxes.append(sb)
    result = await sb.run(pytest_argv_for("test_attack.py"), timeout_s=60)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text
    assert text.count("CAPEFF 0000000000000000") == 2, text
    assert text.count("OPEN_BY_HANDLE EPERM") == 2, text
    assert "WRITE ok" in text  # /tmp inside is private and writable ...
    assert not host_has(outside / marker)  # ... but nothing reached the host
    assert not host_has(Path("/tmp") / marker)


async def test_no_capability_survives_setuid_or_exec(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    """Every capability set is empty and no_new_privs is on, so a setuid binary gives nothing."""
    source = """
    import subprocess

    def test_attack():
        status = open("/proc/self/status").read()
        for line in status.splitlines():
            if line.startswith(("Cap", "NoNewPrivs", "Uid")):
                print(line)
        print("SU", subprocess.run(["su", "-c", "id -u"], capture_output=True).returncode)
        print("USERNS", open("/proc/self/uid_map").read().split()[:2])
    """
    sb = open_sandbox(hostile(tmp_path, source), tmp_path)
    sandboxes.append(sb)
    result = await sb.run(pytest_argv_for("test_attack.py"), timeout_s=60)
    text = result.stdout
    assert result.returncode == 0, text + result.stderr
    for cap in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert f"{cap}:\t0000000000000000" in text, text
    if probe().userns:
        # a new user namespace resets the bounding set, but caps there are that
        # namespace's, the uid is not its root, and no_new_privs blocks file caps
        assert "USERNS ['1', '1']" in text.replace(str(sb.uid), "1"), text
    else:
        assert "CapBnd:\t0000000000000000" in text, text
    assert "NoNewPrivs:\t1" in text
    assert "Uid:\t0\t" not in text
    assert "SU 0" not in text


async def test_a_user_namespace_of_its_own_gains_nothing_outside_it(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    """Root in a nested user namespace cannot unlock the read-only mounts it was given."""
    marker = f"fixbugs-userns-{tmp_path.name}"
    script = (
        "unshare --user --map-root-user --mount sh -c '"
        "id -u; mount -o remount,rw,bind /usr && echo REMOUNTED; "
        f"touch /usr/{marker} && echo WROTE; "
        "umount -l /usr && echo UNMOUNTED; ls /root | head -3' ; echo DONE"
    )
    sb = open_sandbox(hostile(tmp_path, "def test_x():\n    pass\n"), tmp_path)
    sandboxes.append(sb)
    result = await sb.run(script, timeout_s=60)
    text = result.stdout + result.stderr
    assert "DONE" in text, text
    if not result.stdout.startswith("0\n"):
        pytest.skip("needs unprivileged user namespaces (the kernel refused one: no attack)")
    # the nested namespace was made (root in it), so the refusals below are real
    assert "REMOUNTED" not in text and "WROTE" not in text, text
    assert not host_has(Path("/usr") / marker)
