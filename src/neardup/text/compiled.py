"""Kernels compiled with numba on first use, or run interpreted while a run is still small.

``@njit(cache=True)`` (and ``inline="always"``) from here takes numba's options, but numba is
imported, and the kernel compiled or loaded from numba's cache, only when the kernel is first
called: importing numba and loading five cached kernels costs about 0.9 CPU s and 120 MB, more
than a few documents' whole run. A kernel declared ``interpretable`` (its plain Python function
gives numba's results: a test checks it on real pages) instead runs that same function,
interpreted, while the call is small (:data:`SMALL_CALL` elements in its array arguments, or in
those it names: ``interpretable=(0,)`` leaves lookup tables out) and the process
has spent less than :data:`INTERPRET_SECONDS` interpreting (what compiling costs: the classic
rent-or-buy rule, never worse than twice the better choice) and compiled no kernel yet (a large
call, or a kernel not declared interpretable, loads numba); after that, every kernel compiles.

Interpreted code must compute as numba does: 64-bit unsigned arithmetic wraps in both (numpy
scalars; their overflow warnings are silenced for the call), numba widens narrower integers to
64 bits (a kernel converts a ``uint8`` it shifts with ``int()``), and a scalar result is returned
as a Python number, as numba boxes it. A kernel called inside an interpreted one is interpreted
too, so that its arguments keep numpy's types (it must be declared interpretable as well).
The decorator keeps numba's name so that a kernel module changes only its import line.
"""

from __future__ import annotations

import functools
import threading
import time
import types
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, Final, Literal, TypeVar, overload

import numpy as np

__all__ = ["INTERPRET_SECONDS", "SMALL_CALL", "Kernel", "kernel_mode", "njit",
           "release_compiler_pages"]

INTERPRET_SECONDS: Final = 0.5
"""Interpreted seconds a process spends before it compiles every kernel (about numba's import)."""
SMALL_CALL: Final = 1 << 12
"""The most elements a call's measured array arguments may hold to run interpreted (a few KB
of text: about 0.1 s interpreted for canonical form, shingles and a 128-slot min-hash)."""

Mode = Literal["auto", "interpret", "compile"]
F = TypeVar("F", bound=Callable[..., Any])


class _Account(threading.local):
    depth = 0
    """Interpreted kernels running in this thread (nested calls interpret too)."""


_nesting = _Account()
_spent = [0.0]  # interpreted seconds of this process (a race only miscounts a few calls)
_bought = [False]  # a kernel was compiled in this process: numba is loaded, every kernel compiles
_mode: list[Mode] = ["auto"]


@contextmanager
def kernel_mode(mode: Mode) -> Any:
    """Within the block, interpretable kernels always interpret, or always compile (tests
    compare the two; a run large enough for a worker pool compiles from its start, and the
    workers it forks inherit the kernels); ``auto`` is the rule above."""
    before = _mode[0]
    _mode[0] = mode
    try:
        yield
    finally:
        _mode[0] = before


def _elements(args: tuple[Any, ...], measured: tuple[int, ...] | None) -> int:
    """The elements of the array arguments at positions ``measured`` (None: of all of them)."""
    chosen = args if measured is None else [args[i] for i in measured if i < len(args)]
    return sum(arg.size for arg in chosen if isinstance(arg, np.ndarray))


def _boxed(value: Any) -> Any:
    """A result as numba returns it: numpy scalars as Python numbers."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(_boxed(item) for item in value)
    return value


class Kernel:
    """A plain Python function (``py_func``) and its numba dispatcher, made on first need."""

    def __init__(self, py_func: Callable[..., Any], options: dict[str, Any],
                 interpretable: bool | tuple[int, ...]) -> None:
        self.py_func = py_func
        self.interpretable = interpretable is not False
        self._measured = interpretable if isinstance(interpretable, tuple) else None
        self._options = options
        self._compiled: Any = None
        self._overloads = 0
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by name, as a function is."""
        return _kernel_named, (self.__module__, self.__qualname__)

    def __call__(self, *args: Any) -> Any:
        if _nesting.depth:
            if not self.interpretable:
                raise TypeError(f"{self!r} is called by an interpreted kernel but is not "
                                "declared interpretable")
            return self.py_func(*args)
        compiled = self._compiled
        if compiled is not None and (not self.interpretable or (_bought[0] and _mode[0] == "auto")):
            result = compiled(*args)                    # the hot path: no further Python call
            if len(compiled.overloads) != self._overloads:
                self._loaded(compiled)
            return result
        if self._interprets(args):
            return self._interpret(args)
        return self._run(self.compiled, args)

    def _run(self, dispatcher: Any, args: tuple[Any, ...]) -> Any:
        """``dispatcher(*args)``, then :meth:`_loaded` if the call made a specialisation."""
        result = dispatcher(*args)
        if len(dispatcher.overloads) != self._overloads:
            self._loaded(dispatcher)
        return result

    def _loaded(self, dispatcher: Any) -> None:
        """A call compiled (or loaded from numba's cache) a new specialisation: the compiler's
        pages are released."""
        self._overloads = len(dispatcher.overloads)
        release_compiler_pages()

    def _interprets(self, args: tuple[Any, ...]) -> bool:
        if not self.interpretable or _mode[0] == "compile":
            return False
        return _mode[0] == "interpret" or (not _bought[0] and _spent[0] < INTERPRET_SECONDS
                                           and _elements(args, self._measured) <= SMALL_CALL)

    def _interpret(self, args: tuple[Any, ...]) -> Any:
        started = time.perf_counter()
        _nesting.depth += 1
        try:
            with np.errstate(over="ignore"):
                return _boxed(self.py_func(*args))
        finally:
            _nesting.depth -= 1
            _spent[0] += time.perf_counter() - started

    @property
    def compiled(self) -> Any:
        """The numba dispatcher (numba imported, and the kernel loaded, on first use)."""
        if self._compiled is None:
            from numba import njit as numba_njit

            self._compiled = numba_njit(**self._options)(self._with_dispatchers())
            _bought[0] = True
        return self._compiled

    def _with_dispatchers(self) -> Callable[..., Any]:
        """``py_func`` seeing the dispatchers of the kernels it calls (numba reads globals once,
        at compile time; inlining needs the dispatcher itself)."""
        scope = dict(self.py_func.__globals__)
        for name in self.py_func.__code__.co_names:
            value = scope.get(name)
            if isinstance(value, Kernel) and value is not self:
                scope[name] = value.compiled
        function = types.FunctionType(self.py_func.__code__, scope, self.py_func.__name__,
                                      self.py_func.__defaults__, self.py_func.__closure__)
        function.__qualname__ = self.py_func.__qualname__
        function.__doc__ = self.py_func.__doc__
        return function

    @property
    def _numba_type_(self) -> Any:
        """The type numba gives this kernel met as a value (e.g. ``module.kernel``)."""
        return self.compiled._numba_type_


def _clean_mappings(library: str) -> list[tuple[int, int]]:
    """(start, end) of the mappings of ``library`` that hold only the file's own bytes: not
    writable, and no page of them copied on write (the relocated read-only data is)."""
    found: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if fields[0].endswith(":"):
                if fields[0] == "Anonymous:" and current is not None and fields[1] == "0":
                    found.append(current)
                continue
            low, high = (int(bound, 16) for bound in fields[0].split("-"))
            mine = len(fields) > 5 and fields[5].endswith(library) and "w" not in fields[1]
            current = (low, high) if mine else None
    return found


def release_compiler_pages() -> None:
    """Take the pages of LLVM (``libllvmlite.so``) out of this process's resident memory.

    Compiling a kernel, or loading it from numba's cache, runs LLVM's code and reads its
    tables: about 70 MB of the library's pages stay resident after it, a third of a
    single-worker run's peak, for code that runs again only to compile another kernel. The
    pages are the library file's own (read-only, never copied on write), so the kernel drops
    them from this process (``madvise(MADV_DONTNEED)``; they stay in the page cache) and
    reads them back if LLVM runs again. Best effort: Linux only, nothing elsewhere."""
    try:
        if not _llvm_ranges:  # found once (reading smaps costs ~50 ms): a read-only mapping
            _llvm_ranges.extend(_clean_mappings("/libllvmlite.so"))  # never gets dirty
        libc = _libc()
    except (OSError, ValueError, AttributeError):
        return
    for low, high in _llvm_ranges:
        libc.madvise(low, high - low, _MADV_DONTNEED)


_MADV_DONTNEED: Final = 4
_llvm_ranges: list[tuple[int, int]] = []


@functools.cache
def _libc() -> Any:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


def _kernel_named(module: str, qualname: str) -> Kernel:
    import importlib

    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not isinstance(found, Kernel):
        raise TypeError(f"{module}.{qualname} is not a kernel")
    return found


@overload
def njit(function: F, /) -> F: ...
@overload
def njit(*, interpretable: bool | tuple[int, ...] = False, **options: Any) -> Callable[[F], F]: ...


def njit(function: Any = None, /, *, interpretable: bool | tuple[int, ...] = False,
         **options: Any) -> Any:
    """``numba.njit`` on first use (``options`` are numba's); see the module's docstring."""

    def wrap(py_func: F) -> F:
        return Kernel(py_func, options, interpretable)  # type: ignore[return-value]

    return wrap(function) if function is not None else wrap
