"""The dedup methods, one unit per module, and :mod:`.registry`, the only list of them.

Import the submodules (``neardup.methods.registry``); this package imports nothing on its own,
so that ``import neardup.methods.prints`` stays light.
"""
