# FixBugs: one image for the API and every kind of worker (deploy/compose.yaml runs it).
#
# Not built or run in this repository's CI (no Docker daemon there): the same topology
# runs as processes in tests/deploy/, which is what is tested. See docs/deploy.md.
#
#   docker build -t fixbugs:local .
#   docker compose -f deploy/compose.yaml up
#
# Privileges (docs/deploy.md says what each gives and what FixBugs does without it):
# - the API and the model-stage workers run no repository code and need none;
# - the sandbox-stage workers run the bugs' tests in FixBugs' sandbox, which needs root
#   in the container and, for its full containment, CAP_SYS_ADMIN and CAP_NET_ADMIN
#   (bubblewrap's mount, pid, ipc, uts and net namespaces with the command's own
#   loopback; the copy's size-limited tmpfs), a seccomp and
#   AppArmor profile that let it create namespaces and mount, a /proc it may mount again
#   (Docker masks parts of /proc), and a writable cgroup v1 memory and pids hierarchy for
#   per-command limits. Without them FixBugs does not refuse: it runs with what it has,
#   and each sandboxed command's result names every missing mechanism (docs/deploy.md
#   shows how to check a container). compose.yaml grants them with `privileged: true` on
#   the sandbox workers only.
FROM python:3.11-slim-bookworm

# The sandbox's tools (scripts/system-deps): bubblewrap for its namespaces and private
# root; setpriv, unshare and prlimit (util-linux) for its own uid, user namespace and
# rlimits; mount and umount for the copy's tmpfs; git and patch for the repository and
# its diffs. tesseract-ocr reads screenshots' text (optional: without it a run says so).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      bubblewrap util-linux mount git patch ca-certificates tesseract-ocr tesseract-ocr-eng \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/fixbugs
COPY agentrt ./agentrt
COPY pyproject.toml README.md ./
COPY src ./src
# agentrt from this checkout, then FixBugs (no dev extras, no embedded model: a run takes
# no step on it by default; add ".[local-model]" to compile llama-cpp-python).
RUN pip install --no-cache-dir ./agentrt . \
 # coverage.py wheels for SBFL under the bugs' own Pythons (needs the network at build time;
 # without them SBFL says so in one line)
 && (python -m fixbugs.pyenv.coveragewheels || true)

# The shared workspace (a volume in compose.yaml): every bug's saved inputs and index,
# whose paths the queue carries from the API to the workers.
VOLUME ["/srv/fixbugs"]
EXPOSE 8000
# Root in the container: the sandbox drops to a uid of its own for every command; the API
# and the model workers need no capability (compose.yaml drops them all).
# Alone (no compose), the image is the embedded service: API, dashboard and workers in one
# container, a SQLite queue in the workspace; off loopback it needs FIXBUGS_API_KEYS=t:k
# (and the sandbox's privileges above for its workers).
CMD ["fixbugs", "serve", "--host", "0.0.0.0", "--port", "8000", "--workspace", "/srv/fixbugs"]
