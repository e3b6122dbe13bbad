"""The arena service (``saloon serve``): the top layer, over the worker and the ratings.

Only constants here: the ``saloon`` command imports this package to build its parser, and
must not pay for grpc or the store until a command runs.
"""

#: Where ``saloon serve`` listens by default: the gRPC API and the leaderboards over HTTP.
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_HTTP = "127.0.0.1:8080"
