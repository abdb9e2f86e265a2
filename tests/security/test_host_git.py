"""git never runs the repository's configuration on the host; the walk opens regular files only.

Issue 21: ``git archive`` of a bare repository (or of ``--repo WORKTREE/.git``)
ran the ``filter.<x>.smudge`` command its ``config`` defines, selected by
``info/attributes`` or a committed ``.gitattributes``, as root on the host,
also for a ``.tgz`` uploaded to the service; ``--apply`` ran the work tree's
clean and smudge filters; a FIFO in the repository hung the walk. Each test
builds the hostile repository, and every command it configures would touch
a marker file: no marker may appear, and the files still come out as
committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import socket
import stat
import subprocess
import tarfile
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from gitkit import git
from svckit import in_process, memory_service, whole_report

from fixbugs.errors import InputError
from fixbugs.inputs import load_inputs, open_repo
from fixbugs.run.agent import apply_to_repo
from fixbugs.run.progress import EventSink
from fixbugs.run.report_schema import ReportModel
from fixbugs.sandbox import Sandbox
from fixbugs.service import ApiKeys, BugSpec, create_app

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
VERSION = "$Format:%H$\n"  # export-subst would expand it; an export keeps it as committed
PATCH = textwrap.dedent(
    """\
    --- a/pkg/calc.py
    +++ b/pkg/calc.py
    @@ -1,2 +1,2 @@
     def add(a, b):
    -    return a - b
    +    return a + b
    """
)
# every command git can be told to run for a read or an apply
HOOKS = ("pre-applypatch", "post-applypatch", "post-checkout", "post-index-change", "pre-commit")


@dataclass(frozen=True)
class Markers:
    """The hostile commands and the files they touch when they run."""

    dir: Path

    def script(self, name: str) -> Path:
        """A command that touches ``name`` and passes its input through (a working filter)."""
        path = self.dir / f"{name}.sh"
        path.write_text(f"#!/bin/sh\ntouch {self.dir / ('MARK-' + name)}\ncat\n")
        path.chmod(0o755)
        return path

    def seen(self) -> list[str]:
        return sorted(p.name for p in self.dir.glob("MARK-*"))

    def filter_config(self) -> str:
        return textwrap.dedent(
            f"""\
            [filter "evil"]
            \tsmudge = {self.script("smudge")}
            \tclean = {self.script("clean")}
            \tprocess = {self.script("process")}
            \trequired = true
            [core]
            \tfsmonitor = {self.script("fsmonitor")}
            \thooksPath = {self.hooks()}
            \tsshCommand = {self.script("ssh")}
            [diff]
            \texternal = {self.script("diff")}
            [uploadpack]
            \tpackObjectsHook = {self.script("packobjects")}
            """
        )

    def hooks(self) -> Path:
        hooks = self.dir / "hooks"
        hooks.mkdir(exist_ok=True)
        for name in HOOKS:
            (hooks / name).write_text(f"#!/bin/sh\ntouch {self.dir / ('MARK-hook-' + name)}\n")
            (hooks / name).chmod(0o755)
        return hooks


@pytest.fixture
def markers(tmp_path: Path) -> Markers:
    d = tmp_path / "markers"
    d.mkdir()
    return Markers(d)


def committed_tree(root: Path, *, attributes: str | None = None) -> Path:
    """A work tree with one commit: the buggy module, a script, a link, and ``.gitattributes``."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(BUGGY)
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / "VERSION").write_text(VERSION)
    os.symlink("pkg/calc.py", root / "alias.py")
    os.symlink("/etc/passwd", root / "absolute.txt")
    os.symlink("../../outside", root / "pkg" / "escape.txt")
    if attributes is not None:
        (root / ".gitattributes").write_text(attributes)
    git(root, "init", "--quiet", "--template=", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "init")
    return root


def bare_clone(tree: Path, dest: Path) -> Path:
    git(tree.parent, "clone", "--quiet", "--bare", "--template=", str(tree), str(dest))
    return dest


def poison(git_dir: Path, markers: Markers, *, info_attributes: bool) -> None:
    """Add the hostile commands to ``git_dir``'s config (and select them for every path)."""
    with (git_dir / "config").open("a") as f:
        f.write(markers.filter_config())
    if info_attributes:
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("* filter=evil diff=evil\n")


def assert_exported_as_committed(root: Path) -> None:
    assert (root / "pkg" / "calc.py").read_text() == BUGGY
    assert (root / "VERSION").read_text() == VERSION  # no export-subst, no filter
    assert os.stat(root / "run.sh").st_mode & stat.S_IXUSR
    assert os.readlink(root / "alias.py") == "pkg/calc.py"
    # links that leave the tree are not written (tarfile's data filter refused them too)
    assert not os.path.lexists(root / "absolute.txt")
    assert not os.path.lexists(root / "pkg" / "escape.txt")
    assert not (root / ".git").exists()


ATTRIBUTES = "*.py filter=evil diff=evil\nVERSION export-subst filter=evil\n"


@pytest.mark.parametrize(
    "form",
    ["bare+info/attributes", "bare+.gitattributes", "worktree/.git", "include.path"],
)
def test_exporting_a_git_directory_runs_nothing_it_configures(
    tmp_path: Path, markers: Markers, form: str
) -> None:
    committed = ATTRIBUTES if form != "bare+info/attributes" else None
    tree = committed_tree(tmp_path / "tree", attributes=committed)
    if form == "worktree/.git":
        git_dir = tree / ".git"
        poison(git_dir, markers, info_attributes=False)
    elif form == "include.path":
        git_dir = bare_clone(tree, tmp_path / "repo.git")
        included = tmp_path / "included.gitconfig"
        included.write_text(markers.filter_config())
        with (git_dir / "config").open("a") as f:
            f.write(f"[include]\n\tpath = {included}\n")
            f.write(f'[includeIf "gitdir:/"]\n\tpath = {included}\n')
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("* filter=evil\n")
    else:
        git_dir = bare_clone(tree, tmp_path / "repo.git")
        poison(git_dir, markers, info_attributes=form == "bare+info/attributes")

    repo = open_repo(git_dir)
    try:
        assert markers.seen() == []
        assert repo.root != tree.resolve() and repo.is_git
        assert set(repo.files()) >= {"pkg/calc.py", "pkg/__init__.py", "VERSION", "run.sh"}
        assert repo.read("pkg/calc.py") == BUGGY
        assert_exported_as_committed(repo.root)
    finally:
        repo.close()
    assert markers.seen() == []


def test_an_export_follows_no_alternates_and_no_linked_ref(
    tmp_path: Path, markers: Markers
) -> None:
    """The repository's data is copied as regular files; nothing it names elsewhere is read."""
    tree = committed_tree(tmp_path / "tree")
    git_dir = bare_clone(tree, tmp_path / "repo.git")
    poison(git_dir, markers, info_attributes=True)
    # another repository on the host, whose objects the attacker names
    other = committed_tree(tmp_path / "other")
    (other / "pkg" / "calc.py").write_text("HOST-SECRET = 1\n")
    git(other, "commit", "--quiet", "-am", "secret")
    (git_dir / "objects" / "info").mkdir(exist_ok=True)
    (git_dir / "objects" / "info" / "alternates").write_text(f"{other / '.git' / 'objects'}\n")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=other, capture_output=True, text=True, check=True
    ).stdout.strip()
    (git_dir / "refs" / "heads" / "main").write_text(head + "\n")
    with pytest.raises(InputError, match="no commit to read"):
        open_repo(git_dir)
    # a ref that is a symlink to a host file is not read either
    (git_dir / "refs" / "heads" / "main").unlink()
    (git_dir / "packed-refs").unlink(missing_ok=True)
    os.symlink(other / ".git" / "refs" / "heads" / "main", git_dir / "refs" / "heads" / "main")
    with pytest.raises(InputError, match="no commit to read") as info:
        open_repo(git_dir)
    assert "HOST-SECRET" not in str(info.value) and "\n" not in str(info.value)
    assert markers.seen() == []


def tar_gz(root: Path, top: str) -> bytes:
    """A plain ``.tar.gz`` of ``root`` under ``top``: files and folders, no links."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(root, arcname=top)
        assert not any(m.issym() or m.islnk() for m in tar.getmembers())
    return buf.getvalue()


async def files_investigator(spec: BugSpec, sink: EventSink) -> ReportModel:
    """The service's input loading, as the agent's investigator does it; reports what it read."""
    inputs = await asyncio.to_thread(spec.load)
    try:
        return whole_report(
            spec.title, files=list(inputs.repo.files()), calc=inputs.repo.read("pkg/calc.py")
        )
    finally:
        inputs.repo.close()


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    service = memory_service(tmp_path / "ws", files_investigator, capacity=4)
    app = create_app(service, keys=ApiKeys({"k": "tenant"}), run_workers=False)
    async with in_process(app, service) as c:
        yield c


async def test_an_uploaded_bare_repository_runs_no_filter_on_the_service_host(
    tmp_path: Path, markers: Markers, client: httpx.AsyncClient
) -> None:
    tree = committed_tree(tmp_path / "tree", attributes=ATTRIBUTES)
    git_dir = bare_clone(tree, tmp_path / "repo.git")
    poison(git_dir, markers, info_attributes=True)
    r = await client.post(
        "/v1/bugs/upload",
        headers={"X-API-Key": "k"},
        files={
            "report": ("report.md", b"# add is wrong\n\nadd(2, 2) returns 0\n"),
            "repo": ("repo.tar.gz", tar_gz(git_dir, "repo.git")),
        },
    )
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    async with client.stream("GET", f"/v1/bugs/{job}/events", headers={"X-API-Key": "k"}) as s:
        kinds = [ln async for ln in s.aiter_lines() if ln.startswith("event: ")]
    assert kinds[-1] == "event: end"
    status = (await client.get(f"/v1/bugs/{job}", headers={"X-API-Key": "k"})).json()
    assert status["state"] == "done", str(status)
    report = (await client.get(f"/v1/bugs/{job}/report", headers={"X-API-Key": "k"})).json()
    assert report["calc"] == BUGGY and "pkg/calc.py" in report["files"]
    assert markers.seen() == []


def hostile_work_tree(tmp_path: Path, markers: Markers) -> Path:
    """The user's work tree whose ``.git/config`` and ``.gitattributes`` select hostile filters."""
    tree = committed_tree(tmp_path / "work", attributes=ATTRIBUTES)
    poison(tree / ".git", markers, info_attributes=True)
    (tree / ".git" / "hooks").mkdir(exist_ok=True)
    for name in HOOKS:
        hook = tree / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\ntouch {markers.dir / ('MARK-githook-' + name)}\n")
        hook.chmod(0o755)
    return tree


def test_apply_changes_the_file_and_runs_no_filter_or_hook(
    tmp_path: Path, markers: Markers, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = hostile_work_tree(tmp_path, markers)
    monkeypatch.chdir(tmp_path)  # --repo as a user types it
    message = apply_to_repo(PATCH, Path("work"))
    assert message == "validated patch applied to work"
    assert (tree / "pkg" / "calc.py").read_text() == FIXED
    assert markers.seen() == []


def test_apply_refuses_a_patch_that_does_not_apply_and_keeps_the_file(
    tmp_path: Path, markers: Markers
) -> None:
    tree = hostile_work_tree(tmp_path, markers)
    (tree / "pkg" / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    message = apply_to_repo(PATCH, tree)
    assert message.startswith(f"the validated patch did not apply to {tree}: ")
    assert (tree / "pkg" / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"
    assert markers.seen() == []


def test_apply_writes_nothing_through_a_link_of_the_work_tree(
    tmp_path: Path, markers: Markers
) -> None:
    """A diff to ``alias.py`` (a link into the tree) or a link out of it changes no target."""
    tree = hostile_work_tree(tmp_path, markers)
    outside = tmp_path / "outside.py"
    outside.write_text(BUGGY)
    os.symlink(outside, tree / "out.py")
    patch = PATCH.replace("pkg/calc.py", "out.py")
    message = apply_to_repo(patch, tree)
    assert "did not apply" in message
    assert outside.read_text() == BUGGY
    assert markers.seen() == []


def test_apply_refuses_a_git_directory_without_work_tree(tmp_path: Path) -> None:
    git_dir = bare_clone(committed_tree(tmp_path / "tree"), tmp_path / "repo.git")
    before = sorted(p.name for p in git_dir.iterdir())
    message = apply_to_repo(PATCH, git_dir)
    assert message.endswith("is a git repository without a work tree")
    assert sorted(p.name for p in git_dir.iterdir()) == before


def test_the_sandbox_baseline_git_reads_no_config_of_the_copy(
    tmp_path: Path, markers: Markers, sandboxes: list[Sandbox]
) -> None:
    """What a test writes in the copy (``.git/config``, ``.gitattributes``) configures no git.

    The copy's diff runs git on the host, with our own git directory; a
    ``.git`` and a nested repository written into the copy are data.
    """
    tree = committed_tree(tmp_path / "tree")
    sb = Sandbox.create(tree, base_dir=tmp_path)
    sandboxes.append(sb)
    (sb.root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    git(sb.root, "init", "--quiet", "--template=")
    poison(sb.root / ".git", markers, info_attributes=True)
    # a nested repository with a commit (git add reads its HEAD as a gitlink)
    (sb.root / "sub").mkdir()
    (sb.root / "sub" / "x.py").write_text("x = 1\n")
    git(sb.root / "sub", "init", "--quiet", "--template=")
    git(sb.root / "sub", "add", "-A")
    git(sb.root / "sub", "commit", "--quiet", "-m", "sub")
    poison(sb.root / "sub" / ".git", markers, info_attributes=True)
    (sb.root / "pkg" / "calc.py").write_text(FIXED)
    diff = sb.diff()
    assert "+    return a + b" in diff
    assert markers.seen() == []


class Blocked(Exception):
    """The body of :func:`deadline` blocked (not an ``OSError``: nothing may catch it as one)."""


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail, instead of hanging the suite, when the body blocks (on a FIFO's open)."""

    def expired(_sig: int, _frame: object) -> None:
        raise Blocked(f"still blocked after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def special_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A work tree holding a FIFO, a listening unix socket and (where allowed) a device."""
    root = tmp_path / "special"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(BUGGY)
    os.mkfifo(root / "pkg" / "pipe.py")
    monkeypatch.chdir(root / "pkg")  # a socket's path must be short
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind("sock.py")
    sock.listen(1)
    monkeypatch.undo()
    # without CAP_MKNOD there is no device; the FIFO and the socket still make the test
    with contextlib.suppress(PermissionError):
        os.mknod(root / "pkg" / "null.py", 0o644 | stat.S_IFCHR, os.makedev(1, 3))
    yield root
    sock.close()


SPECIAL = {"pkg/pipe.py", "pkg/sock.py", "pkg/null.py"}


def test_the_walk_lists_regular_files_only_and_notes_the_others(special_tree: Path) -> None:
    present = {p for p in SPECIAL if os.path.lexists(special_tree / p)}
    report = special_tree.parent / "report.md"
    report.write_text("# add is wrong\n\nadd(2, 2) returns 0\n")
    with deadline(10):
        inputs = load_inputs(report, special_tree)
        assert inputs.repo.files() == ("pkg/__init__.py", "pkg/calc.py")
        assert set(inputs.repo.special_files()) == present
        with pytest.raises(InputError, match=r"pipe\.py"):
            inputs.repo.read("pkg/pipe.py")
    [note] = [n for n in inputs.notes if "special file" in n]
    assert "pkg/pipe.py" in note and "pkg/sock.py" in note and "\n" not in note


def test_the_sandbox_copy_leaves_special_files_out(
    special_tree: Path, tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    with deadline(10):
        sb = Sandbox.create(special_tree, base_dir=tmp_path)
    sandboxes.append(sb)
    assert (sb.root / "pkg" / "calc.py").read_text() == BUGGY
    for rel in SPECIAL:
        assert not os.path.lexists(sb.root / rel)
        assert not os.path.lexists(sb.baseline / rel)
