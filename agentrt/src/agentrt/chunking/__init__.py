"""Chunkers: split code, logs and traces into evidence-sized pieces under a token budget."""

from agentrt.chunking.code import CodeChunk, FilePart, chunk_code, definition_starts, split_file
from agentrt.chunking.logs import LogChunk, chunk_log, chunk_log_file
from agentrt.chunking.packing import pack_greedy
from agentrt.chunking.traces import Span, TraceChunk, chunk_traces

__all__ = [
    "CodeChunk",
    "FilePart",
    "LogChunk",
    "Span",
    "TraceChunk",
    "chunk_code",
    "chunk_log",
    "chunk_log_file",
    "chunk_traces",
    "definition_starts",
    "pack_greedy",
    "split_file",
]
