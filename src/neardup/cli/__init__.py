"""The ``neardup`` command line (thin: parse, build a config, call the library, render)."""
