"""The SDK's exceptions: one base class, specific subclasses."""

from __future__ import annotations


class SdkError(Exception):
    """Base class of every error the SDK raises on purpose."""


class NotALegalAction(SdkError):
    """A bot returned something that is not one of the decision's legal actions."""


class UnknownHouseBot(SdkError):
    """A ``house:NAME`` that no house bot answers to for the game."""


class MalformedBotRef(SdkError):
    """A string that should name a stored bot version and does not (``bot:NAME@VERSION``)."""


class BotLoadError(SdkError):
    """A bot file or folder that cannot be loaded as a bot."""


class SearchError(SdkError):
    """A search that cannot run: the game builds no state from an observation, or the
    determinized state disagrees with the decision."""
