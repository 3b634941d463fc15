import gzip
import zlib

import numpy as np
import pytest

import headrace as hr
from headrace.io import decode_base64, decode_compressed, encode_base64


def test_base64_is_web_safe_and_unpadded_by_default():
    assert encode_base64(b"\xfb\xff") == b"-_8" and encode_base64(b"\xfb\xff", pad=True) == b"-_8="
    assert decode_base64(b"-_8") == decode_base64(b"-_8=") == b"\xfb\xff"
    both = encode_base64(np.array([b"a", b"bc"], dtype=object))
    assert both.tolist() == [b"YQ", b"YmM"] and decode_base64(both).tolist() == [b"a", b"bc"]
    with pytest.raises(hr.InvalidArgumentError, match="base64"):
        decode_base64(b"a")


def test_decode_compressed():
    assert decode_compressed(gzip.compress(b"x" * 10), "GZIP") == b"x" * 10
    assert decode_compressed(zlib.compress(b"y"), compression_type="ZLIB") == b"y"
    assert decode_compressed(b"raw") == b"raw"
    with pytest.raises(hr.InvalidArgumentError, match="GZIP"):
        decode_compressed(b"not gzip", "GZIP")
