"""The arena: the platform on top of every layer.

The gRPC service and its server (``saloon serve``), the web pages and the board cache, the
registry of users, tokens and accepted bot versions, submissions with their qualification,
ladder seasons and their repeats; and :mod:`saloon.arena.cli`, the one ``saloon`` command,
which registers every layer's commands. Nothing of the project imports this package.

Only constants here: the ``saloon`` command imports this package to build its parser, and
must not pay for grpc or the store until a command runs.
"""

#: Where ``saloon serve`` listens by default: the gRPC API and the leaderboards over HTTP.
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_HTTP = "127.0.0.1:8080"
