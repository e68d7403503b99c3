"""Debugging aids: `torch_codegen` turns a program into runnable PyTorch code (docs/debugging.md)."""

from .torch_codegen import torch_codegen

__all__ = ["torch_codegen"]
