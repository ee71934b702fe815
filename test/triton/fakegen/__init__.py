"""Shared code of the fake TensorRT-LLM models served by the real Triton (see packages/testing/GENERATOR.md).

Pure parts (vocab, generator, word lists, script, guided) import nothing from Triton so they can be checked with plain
Python; the model classes import `triton_python_backend_utils`, which only exists inside the Python
backend's stub process.
"""
