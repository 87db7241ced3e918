"""Features of canonical text: hashed tokens and w-shingles as numpy arrays."""

from neardup.features.shingles import shingle_hashes, shingle_set, token_hashes

__all__ = ["shingle_hashes", "shingle_set", "token_hashes"]
