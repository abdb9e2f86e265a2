"""Inside the sandbox a test suite sees an ordinary machine (issue 23, item 2).

The sandbox uid has a passwd and group entry, ``HOME`` is the private home,
the locale is C.UTF-8, the time zone UTC, and loopback is up in its network
namespace. Each is shown by a synthetic test repository's own pytest run in
a real :class:`~fixbugs.sandbox.Sandbox`; its tests drop ``HOME``, ``USER``
and ``LOGNAME`` where a library would fall back to the passwd database, as
thefuck's conftest does. The host's ``/etc`` is never written.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from fixbugs.sandbox import Sandbox, interpreter_paths
from fixbugs.sandbox.containment import Confinement, Mechanisms, View, wrap
from fixbugs.sandbox.identity import USER, write_identity
from fixbugs.sandbox.limits import Limits

PY = sys.executable

MACHINE_TESTS = textwrap.dedent(
    """
    import getpass, grp, locale, os, pwd, socket, threading, time
    from pathlib import Path


    def without(*names):
        return {k: v for k, v in os.environ.items() if k not in names}


    def test_home_from_the_environment_and_from_passwd(monkeypatch):
        home = os.environ["HOME"]
        assert Path.home() == Path(home) and os.path.expanduser("~") == home
        monkeypatch.setattr(os, "environ", without("HOME"))
        assert os.path.expanduser("~") == home and str(Path.home()) == home
        assert pwd.getpwuid(os.getuid()).pw_dir == home
        (Path.home() / ".config").mkdir()  # the home is the user's to write


    def test_the_user_has_a_name_and_a_group(monkeypatch):
        monkeypatch.setattr(os, "environ", without("USER", "LOGNAME", "LNAME", "USERNAME"))
        assert getpass.getuser() == "{user}" == pwd.getpwuid(os.getuid()).pw_name
        assert grp.getgrgid(os.getgid()).gr_name == "{user}"


    def test_locale_and_time_zone():
        assert os.environ["LANG"] == os.environ["LC_ALL"] == "C.UTF-8"
        assert locale.setlocale(locale.LC_ALL, "") == "C.UTF-8"
        assert time.tzname == ("UTC", "UTC") and time.timezone == 0


    def test_a_server_on_loopback():
        server = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=lambda: server.accept()[0].sendall(b"hi"), daemon=True).start()
        with socket.create_connection(server.getsockname(), timeout=10) as client:
            assert client.recv(2) == b"hi"
    """
).replace("{user}", USER)


def host_passwd() -> bytes:
    return Path("/etc/passwd").read_bytes()


@pytest.mark.needs_namespaces
async def test_a_suite_that_needs_an_ordinary_machine_passes(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "test_machine.py").write_text(MACHINE_TESTS)
    before = host_passwd()
    with Sandbox.create(repo, base_dir=tmp_path, readonly_paths=interpreter_paths(Path(PY))) as sb:
        result = await sb.run(
            [PY, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_machine.py"], timeout_s=120
        )
        assert sb.uid is not None and str(sb.uid).encode() not in host_passwd()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
    assert host_passwd() == before


def test_the_identity_files_keep_the_hosts_entries_but_none_of_the_same_name_or_id(
    tmp_path: Path,
) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "passwd").write_text(
        "root:x:0:0:root:/root:/bin/bash\n"
        f"{USER}:x:1000:1000::/home/{USER}:/bin/sh\n"
        "other:x:42:42::/home/other:/bin/sh\n"
    )
    (etc / "group").write_text("root:x:0:\nother:x:42:\n")
    ident = write_identity(tmp_path / "sb-etc", uid=42, home=tmp_path / "home", host_etc=etc)
    assert ident.passwd.read_text().splitlines() == [
        "root:x:0:0:root:/root:/bin/bash",
        f"{USER}:x:42:42:FixBugs sandbox:{tmp_path / 'home'}:/bin/sh",
    ]
    assert ident.group.read_text().splitlines() == ["root:x:0:", f"{USER}:x:42:"]
    assert ident.binds() == (
        (ident.passwd, Path("/etc/passwd")),
        (ident.group, Path("/etc/group")),
    )
    assert ident.environment() == {"USER": USER, "LOGNAME": USER}


def test_named_files_are_bound_read_only_over_the_system_directories() -> None:
    mechanisms = Mechanisms(root=True, namespaces=True, setpriv=True, prlimit=False)
    files = ((Path("/sb/etc/passwd"), Path("/etc/passwd")),)
    argv = wrap(
        ["id"],
        Confinement(
            limits=Limits(),
            mechanisms=mechanisms,
            uid=7,
            base=Path("/sb"),
            workdir=Path("/sb/repo"),
            view=View(writable=(Path("/sb/repo"),), files=files),
        ),
    )
    bind = argv.index("/sb/etc/passwd")
    assert argv[bind - 1 : bind + 2] == ["--ro-bind", "/sb/etc/passwd", "/etc/passwd"]
    assert argv.index("/etc") < bind < argv.index("--remount-ro")
