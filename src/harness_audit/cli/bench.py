"""`harness-audit bench CORPUS` (filled in with the benchmark)."""

from __future__ import annotations

import argparse


def make_parser() -> argparse.ArgumentParser:
    """Parser of `harness-audit bench`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit bench", description="Score the engine against a corpus with an answer key.")
    p.add_argument("corpus")
    return p


def run(ns: argparse.Namespace) -> int:
    """Not yet."""
    raise NotImplementedError
