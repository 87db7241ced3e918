"""The service's limits: body size, documents per request, group commit, queue depth."""

from __future__ import annotations

from dataclasses import dataclass

from neardup.errors import ConfigError

__all__ = ["ServiceConfig"]


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """How ``neardup serve`` runs: ``token`` guards the write endpoints; a request body above
    ``max_body_bytes`` gets 413; an add takes at most ``max_documents``; the writer commits up
    to ``group_max`` documents of queued adds in one transaction (group commit); with
    ``queue_limit`` adds waiting, further adds get 503 with Retry-After. ``token`` also
    guards every read route and the metrics unless ``public_reads``. A query arriving less
    than ``query_window`` seconds after the last batch of queries was answered waits until
    that much time has passed, with the queries arriving meanwhile (one read of the store
    for all of them: under load, fewer and larger batches); at other times it is answered
    at once. Likewise an add arriving less than ``add_window`` seconds after the writer's last
    commit is committed when that window ends, with the adds arriving meanwhile."""

    token: str
    public_reads: bool = False
    max_body_bytes: int = 8 << 20
    max_documents: int = 1000
    group_max: int = 2000
    queue_limit: int = 512
    add_timeout: float = 120.0
    query_window: float = 0.005
    add_window: float = 0.01

    def __post_init__(self) -> None:
        if len(self.token) < 16:
            raise ConfigError(f"token: {len(self.token)} characters; at least 16 needed")
        for name, low in (("max_body_bytes", 1024), ("max_documents", 1), ("group_max", 1),
                          ("queue_limit", 1)):
            value = getattr(self, name)
            if value < low:
                raise ConfigError(f"{name}={value}: must be at least {low}")
        if self.group_max > 5000:
            raise ConfigError(f"group_max={self.group_max}: at most 5000 (one store batch, "
                              "so that a group commits in one transaction)")
        if self.add_timeout <= 0:
            raise ConfigError(f"add_timeout={self.add_timeout}: must be positive")
        for name in ("query_window", "add_window"):
            if not 0 <= getattr(self, name) <= 1:
                raise ConfigError(f"{name}={getattr(self, name)}: must be 0 to 1 second")
