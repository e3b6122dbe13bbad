"""The house search bot as a bot file: served in its own process like any author's bot."""

from __future__ import annotations

from saloon.sdk.house.search import Search

BOT = Search
