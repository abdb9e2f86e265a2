"""Chunkers: split code and logs into evidence-sized pieces under a token budget."""

from agentrt.chunking._code import CodeChunk, FilePart, chunk_code, definition_starts, split_file
from agentrt.chunking._logs import LogChunk, chunk_log, chunk_log_file
from agentrt.chunking._packing import pack_greedy

__all__ = [
    "CodeChunk",
    "FilePart",
    "LogChunk",
    "chunk_code",
    "chunk_log",
    "chunk_log_file",
    "definition_starts",
    "pack_greedy",
    "split_file",
]
