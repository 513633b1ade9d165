"""The embedding model: WordLlama, a small static embedding model whose 256-dimension weights and
tokenizer ship inside its wheel. It is loaded once per process from the package's own folder with
downloads disabled, so it never touches the network (the default path looks for the tokenizer in
a folder the wheel does not have and would try to download it). A vector is the model's
unit-length embedding quantised to int8 (256 bytes): the dot product of two is their cosine
similarity times ``SCALE**2``.
"""

import threading
from pathlib import Path
from typing import Any

import numpy as np

DIMENSIONS = 256
SCALE = 127

_model: Any = None
_model_lock = threading.Lock()


def model() -> Any:
    """The WordLlama model, loaded once per process from the files its wheel ships."""
    global _model
    with _model_lock:
        if _model is None:
            import wordllama
            from wordllama import WordLlama

            _model = WordLlama.load(
                cache_dir=Path(wordllama.__file__).parent, dim=DIMENSIONS, disable_download=True
            )
        return _model


def quantised(texts: list[str]) -> np.ndarray:
    """The int8 vectors of ``texts``, one row each (unit length times :data:`SCALE`)."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.int8)
    floats = np.asarray(model().embed(texts, norm=True), dtype=np.float32)
    return np.clip(np.rint(floats * SCALE), -SCALE, SCALE).astype(np.int8)


def vector_bytes(texts: list[str]) -> list[bytes]:
    """Each text's vector as the bytes ``engine_vectors.vec`` keeps."""
    return [row.tobytes() for row in quantised(texts)]
