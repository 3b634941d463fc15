import os

import crc32c as crc32c_package
import numpy as np
import pytest

from headrace.io.records import crc_kernels
from headrace.io.records.crc import crc32c, mask, masked_crc32c, unmask


def test_known_vectors():
    # RFC 3720 (iSCSI) test vectors for CRC32C
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E


def test_mask_is_invertible_and_not_identity():
    for value in (0, 1, 0xFFFFFFFF, 0x12345678, crc32c(b"x")):
        assert unmask(mask(value)) == value
    assert mask(0) != 0 and masked_crc32c(b"") == mask(crc32c(b""))


@pytest.mark.parametrize("kernel", [crc_kernels._crc32c_hardware, crc_kernels._crc32c_table])
def test_compiled_crc_matches_the_package_at_every_alignment(kernel):
    if kernel is crc_kernels._crc32c_hardware and not crc_kernels.HARDWARE:
        pytest.skip("CPU without SSE4.2")
    data = np.frombuffer(os.urandom(5000), dtype=np.uint8)
    for start in range(0, 9):
        for length in (0, 1, 3, 7, 8, 9, 15, 16, 17, 100, 4096):
            expected = crc32c_package.crc32c(data[start : start + length].tobytes())
            assert int(kernel(data, start, length)) == expected, (start, length)


def test_compiled_masked_crc_matches():
    data = np.frombuffer(os.urandom(300), dtype=np.uint8)
    for length in (0, 8, 33, 300):
        assert int(crc_kernels.masked_crc32c_span(data, 0, length)) == masked_crc32c(data[:length].tobytes())
