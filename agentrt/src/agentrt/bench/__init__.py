"""Benchmarks run by `agentrt bench NAME`."""

from agentrt.bench.harness import BENCHMARKS, Benchmark, BenchResult, benchmark, get_benchmark

__all__ = ["BENCHMARKS", "BenchResult", "Benchmark", "benchmark", "get_benchmark"]
