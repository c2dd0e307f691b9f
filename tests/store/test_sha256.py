"""`fingerprint.sha256_hex`, the store's hashes and the hook's digests: CPython's own SHA-256
for a few kilobytes in a process that has not loaded `hashlib` (a hook: loading OpenSSL
would cost it more than its hashing), OpenSSL's for more or once `hashlib` is loaded (the
servers: five times as fast a byte). The same digest either way."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from metis_memory.store.fingerprint import SMALL_BYTES, sha256_hex


@pytest.mark.parametrize("size", [0, 1, 4096, SMALL_BYTES, SMALL_BYTES + 1, 1 << 20])
def test_the_digest_is_sha256(size: int) -> None:
    data = os.urandom(size)
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_hashlib_is_loaded_only_for_more_than_a_few_kilobytes() -> None:
    probe = (
        "import sys\n"
        "from metis_memory.store.fingerprint import SMALL_BYTES, sha256_hex\n"
        "sha256_hex(bytes(SMALL_BYTES))\n"
        "print('hashlib' in sys.modules)\n"
        "sha256_hex(bytes(SMALL_BYTES + 1))\n"
        "print('hashlib' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "True"], done.stderr
