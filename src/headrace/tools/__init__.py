"""Command-line tools and batch conversions built on the library (``headrace convert``, ``headrace index``)."""
