"""``fixbugs run --branch NAME``: the fix as one commit on a new branch of the user's repository.

The repository is hostile like every input, on the host too (issue 21): its
``.git/config`` names commands (``filter.<x>.smudge``/``clean``,
``core.fsmonitor``, hooks and ``core.hooksPath``, ``gpg.program`` with
``commit.gpgSign``, includes), and what it holds can be links planted where
FixBugs would write. So no git command runs in the repository. git runs in
a private git directory (:func:`fixbugs.inputs.hostgit.private_copy`:
copies of the objects, refs and ``HEAD`` as regular files, our config, no
system or global config) with a temporary index: ``read-tree HEAD``,
``apply --cached`` (the index only: no work tree exists for it),
``write-tree``, ``commit-tree --no-gpg-sign``. The objects it writes go to a
folder of their own (``GIT_OBJECT_DIRECTORY``, the copy its alternate), so
what the commit added is exactly that folder's files.

Then FixBugs itself writes into the repository's git directory: those loose
objects, then ``refs/heads/NAME``, nothing else. Each folder is opened with
``O_NOFOLLOW | O_DIRECTORY`` from the one above (``.git``, ``objects``,
``objects/xx``, ``refs``, ``heads``, ...), each file is written under a
temporary name (``O_CREAT | O_EXCL | O_NOFOLLOW``) and takes its name by
``link``, which fails when the name exists, whatever it is (a planted link
too): an object already there is left alone, and a branch that appeared
meanwhile stops the write. The work tree, the index, ``HEAD`` and the
config are never opened for writing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from fixbugs.diffs import touched_files
from fixbugs.errors import InputError
from fixbugs.inputs.hostgit import GIT_TIMEOUT_S, is_git_dir, private_copy, set_object_format
from fixbugs.run.handoff import commit_message, held_back, identity
from fixbugs.run.report_schema import ReportModel
from fixbugs.sandbox.hosttools import ToolRun, git_env, run_tool
from fixbugs.sandbox.untrusted import UntrustedFile, open_folder, read_untrusted_sync

__all__ = ["branch_report", "check_branch"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_COMPARED = 64 << 20  # a patched file read back from the work tree, at most


@dataclass(frozen=True, slots=True)
class _Target:
    """The user's repository: what they named, and its git directory below it."""

    root: Path
    rel: str  # the git directory under root, opened without following a link: ".git" or ""

    @property
    def git_dir(self) -> Path:
        return self.root / self.rel if self.rel else self.root


def _target(repo: Path) -> _Target:
    """The repository's git directory: ``.git`` a folder (no link), or a bare repository."""
    root = repo.expanduser()
    try:
        st = os.lstat(root / ".git")
    except FileNotFoundError:
        if is_git_dir(root):
            return _Target(root, "")
        raise InputError(f"--branch needs a git repository: {root} has no .git folder") from None
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"--branch: {root / '.git'} is a link, which FixBugs does not follow")
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(
            f"--branch: {root / '.git'} is a file (a linked worktree or a submodule), which "
            "FixBugs does not follow; give the main work tree of the repository"
        )
    if os.path.lexists(root / ".git" / "reftable"):
        raise InputError(
            f"--branch: {root} keeps its refs in a reftable, which FixBugs cannot write"
        )
    return _Target(root, ".git")


class _Private:
    """Our git directory with the repository's data, an index and a folder for new objects."""

    def __init__(self, tmp: Path, target: _Target) -> None:
        self.dir = tmp / "git"
        self.new = tmp / "new"
        private_copy(target.git_dir, self.dir)
        self.new.mkdir()
        self.env = git_env(
            {
                "GIT_OBJECT_DIRECTORY": str(self.new),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.dir / "objects"),
                "GIT_INDEX_FILE": str(tmp / "index"),
            }
        )

    def git(
        self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> ToolRun:
        return run_tool(
            ["git", f"--git-dir={self.dir}", *args],
            timeout_s=GIT_TIMEOUT_S,
            cwd=self.dir,
            env={**self.env, **(env or {})},
            stdin=stdin,
        )

    def out(
        self, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        done = self.git(*args, stdin=stdin, env=env)
        if not done.ok:
            raise InputError(f"--branch: git {args[0]} failed: {_last_line(done)}")
        return done.stdout_text.strip()


@dataclass(frozen=True, slots=True)
class _Prepared:
    target: _Target
    private: _Private
    name: str
    head: str  # the commit HEAD names
    current: str  # the branch HEAD names, or "detached HEAD"


@contextlib.contextmanager
def _prepared(repo: Path, name: str) -> Iterator[_Prepared]:
    """The checks every ``--branch`` makes (before the run and after it), in a private copy."""
    target = _target(repo)
    with tempfile.TemporaryDirectory(prefix="fixbugs-branch-") as tmp:
        p = _Private(Path(tmp), target)
        head = _head(p, target.root)
        _check_name(p, name)
        # create-only in the copy: the branch must not exist, nor a branch that is its folder
        ref = f"refs/heads/{name}"
        if not p.git("update-ref", ref, head, "0" * len(head)).ok:
            if p.git("rev-parse", "--verify", "-q", ref).ok:
                raise InputError(f"--branch: branch {name} already exists in {target.root}")
            raise InputError(f"--branch: {name} clashes with a branch of {target.root}")
        p.git("update-ref", "-d", ref)
        _refs_clear(target, name)
        current = p.git("symbolic-ref", "-q", "--short", "HEAD").stdout_text.strip()
        yield _Prepared(target, p, name, head, current or "detached HEAD")


def _refs_clear(target: _Target, name: str) -> None:
    """What the copy left out: a link (or other non-file) on the branch's path in ``.git``."""
    parts = ["refs", "heads", *name.split("/")]
    here = target.git_dir
    for i, part in enumerate(parts):
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return
        shown = "/".join(parts[: i + 1])
        if stat.S_ISLNK(st.st_mode):
            raise InputError(
                f"--branch: {shown} in {target.root} is a link; FixBugs does not follow it"
            )
        if i == len(parts) - 1 or not stat.S_ISDIR(st.st_mode):
            raise InputError(f"--branch: {shown} is already there in {target.root}")


def _head(p: _Private, root: Path) -> str:
    """HEAD's commit, SHA-1 or else SHA-256; none (an unborn branch) is refused."""
    for object_format in ("sha1", "sha256"):
        if object_format != "sha1":
            set_object_format(p.dir, object_format)
        done = p.git("rev-parse", "--verify", "-q", "HEAD^{commit}")
        if done.ok:
            return done.stdout_text.strip()
    raise InputError(
        f"--branch: HEAD of {root} names no commit FixBugs can read (a new repository, or "
        "objects kept elsewhere); commit first"
    )


def _check_name(p: _Private, name: str) -> None:
    """``git check-ref-format --branch`` as is, and no shorthand it would expand."""
    done = p.git("check-ref-format", "--branch", name) if name and "\0" not in name else None
    if (
        done is None
        or not done.ok
        or done.stdout_text.strip() != name
        or name == "HEAD"
        or name.startswith("-")
    ):
        raise InputError(f"--branch: {name!r} is not a valid branch name")


def check_branch(repo: Path, name: str) -> None:
    """Refuse now, before the run, what ``--branch NAME`` would refuse after it.

    No ``.git`` folder (a ``.git`` file or link is not followed), a bad name,
    a branch that exists, HEAD without a commit: :class:`InputError`.
    """
    with _prepared(repo, name):
        pass


def branch_report(
    report: ReportModel,
    repo: Path,
    name: str,
    *,
    force: bool = False,
    environ: Mapping[str, str] | None = None,
) -> str:
    """``fixbugs run --branch NAME``: the report's fix committed on a new branch (one line).

    Only a ``validated`` fix; one that only ``passes_tests`` with ``force``
    (said in the line and the commit message). A run without such a fix makes
    no branch and says so, as ``--apply`` does: the run itself ended well.
    What stops a branch that should be made (the repository, the name, a
    write) is :class:`InputError` (exit 2); either way the repository is left
    as it was.
    """
    held = held_back(report, force=force, refused="no branch made", verb="commits")
    if held is not None:
        return held
    patch = report.patch or ""  # held_back said so where there is none
    who = identity(os.environ if environ is None else environ)
    with _prepared(repo, name) as prep:
        p = prep.private
        p.out("read-tree", prep.head)
        applied = p.git("apply", "--cached", "-", stdin=patch.encode())
        if not applied.ok:
            raise InputError(
                f"no branch made: the fix does not apply to HEAD of {prep.target.root} "
                f"({_last_line(applied)}). The repository was not changed"
            )
        tree = p.out("write-tree")
        message = commit_message(report).encode()
        commit = p.out(
            "commit-tree", tree, "-p", prep.head, "--no-gpg-sign", stdin=message, env=who.env
        )
        differs = _work_tree_differs(prep, patch)
        _write_into(prep, commit)
    kind = "the validated fix" if report.validated else "a fix that is not validated (--force)"
    line = (
        f"branch {name} made in {prep.target.root}: commit {commit[:12]}, {kind}, on "
        f"{prep.current} ({prep.head[:12]}); author {who.author} ({who.source}); the work "
        "tree, the index and the current branch were not changed"
    )
    if differs:
        line += (
            f". Note: {', '.join(differs)} in the work tree, where the run validated the fix, "
            "differs from HEAD; the branch holds HEAD's version with the fix"
        )
    return line


def _work_tree_differs(prep: _Prepared, patch: str) -> list[str]:
    """The patched files whose work-tree bytes are not HEAD's (what the run validated on)."""
    if not prep.target.rel:
        return []  # a bare repository: the run read HEAD itself
    out = []
    for path in touched_files(patch):
        committed = prep.private.git("cat-file", "blob", f"{prep.head}:{path}")
        try:
            here = read_untrusted_sync(
                prep.target.root / path, max_bytes=_MAX_COMPARED, within=prep.target.root
            )
        except (UntrustedFile, ValueError):
            here = None
        if committed.ok != (here is not None) or (here is not None and here != committed.stdout):
            out.append(path)
    return out


def _write_into(prep: _Prepared, commit: str) -> None:
    """The new objects, then the branch, into the repository's git directory (module doc)."""
    root = prep.target.root
    try:
        gfd = open_folder(root, prep.target.rel)
    except OSError as exc:
        raise InputError(f"no branch made: {root / prep.target.rel}: {exc.strerror}") from None
    try:
        _copy_objects(prep.private.new, gfd, root)
        ref = ["refs", "heads", *prep.name.split("/")]
        fd = _open_path(gfd, ref[:-1], root)
        try:
            if not _create(fd, ref[-1], f"{commit}\n".encode(), 0o644):
                raise InputError(
                    f"no branch made: {'/'.join(ref)} appeared in {root} meanwhile, not "
                    "followed (the new objects stay there, unreferenced)"
                )
        finally:
            os.close(fd)
    except OSError as exc:  # no permission, no hard links on this file system, a full disk
        raise InputError(f"no branch made in {root}: {exc.strerror or exc}") from None
    finally:
        os.close(gfd)


def _copy_objects(new: Path, gfd: int, root: Path) -> None:
    """Each loose object git wrote into ``new`` (our folder) into ``objects/xx/``."""
    for sub in sorted(new.iterdir()):
        if len(sub.name) != 2:
            continue  # info/, pack/: commit-tree and apply write loose objects only
        fd = _open_path(gfd, ["objects", sub.name], root)
        try:
            for obj in sorted(sub.iterdir()):
                try:
                    st = os.stat(obj.name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    _create(fd, obj.name, obj.read_bytes(), 0o444)
                    continue
                if not stat.S_ISREG(st.st_mode):
                    raise InputError(
                        f"no branch made: objects/{sub.name}/{obj.name} in {root} is no "
                        "regular file; FixBugs does not follow it"
                    )
        finally:
            os.close(fd)


def _open_path(gfd: int, parts: list[str], root: Path) -> int:
    """The folder ``parts`` below the git directory; no link followed, a missing one made."""
    fd = os.dup(gfd)
    walked: list[str] = []
    try:
        for part in parts:
            walked.append(part)
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, _DIR, dir_fd=fd)
                _own_like(nxt, gfd)
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        planted = exc.errno in (errno.ELOOP, errno.ENOTDIR)
        why = "a link or a file, which FixBugs does not follow" if planted else exc.strerror
        raise InputError(f"no branch made: {'/'.join(walked)} in {root}: {why}") from None
    return fd


def _create(folder: int, name: str, data: bytes, mode: int) -> bool:
    """Give ``name`` in ``folder`` a new file of ``data``; False if the name exists (any kind)."""
    tmp = ".fixbugs-new-" + secrets.token_hex(8)
    fd = os.open(tmp, _NEW, mode, dir_fd=folder)
    try:
        _own_like(fd, folder)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    try:
        os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp, dir_fd=folder)
    return True


def _own_like(fd: int, model: int) -> None:
    """Give what ``fd`` holds the owner of the folder ``model``, when FixBugs runs as root:
    the user's git then still writes its own repository (``gc``, the next commit there)."""
    if os.geteuid() != 0:
        return
    st = os.fstat(model)
    os.fchown(fd, st.st_uid, st.st_gid)


def _last_line(done: ToolRun) -> str:
    lines = done.said().splitlines()
    return lines[-1][:200] if lines else f"exit {done.returncode}"
