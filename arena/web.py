"""The leaderboards over HTTP, read-only: the same self-contained HTML page as
``saloon leaderboard --format html``, one per ladder, for people with a browser.

    GET /                          an index: every game's ladders that have results
    GET /leaderboard/GAME?opt=v    the all-time board of GAME's ladder with those options
    GET /season/SEASON_ID          one season's board
    GET /healthz                   "ok" (for a load balancer)

Nothing here writes; every other method is refused (405). Pages are rendered per request
from the store (one fold of the ladder's results).
"""

from __future__ import annotations

import io
import logging
import threading
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from saloon.arena.boards import BoardCache
from saloon.arena.registry import Registry
from saloon.games import game_ids
from saloon.games.errors import GameError
from saloon.ratings.boards import game_leaderboard, season_leaderboard
from saloon.ratings.errors import RatingsError
from saloon.ratings.htmlpage import render_html
from saloon.ratings.source import load
from saloon.referee.errors import RefereeError
from saloon.worker.errors import StoreUnavailable
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

_INDEX_CSS = "body{font-family:system-ui,sans-serif;margin:2rem;max-width:50rem}li{margin:.3rem 0}"


def index_page(store: Store) -> str:
    """The index: each game's ladders (with results, or its default one) and recent seasons."""
    items = []
    for game in game_ids():
        ladders = load(store, game=game).ladders
        if not ladders:
            href = f"/leaderboard/{quote(game)}"
            items.append(f'<li><a href="{href}">{escape(game)}</a> (no results yet)</li>')
            continue
        for ladder in ladders:
            query = "&".join(f"{quote(k)}={quote(v)}" for k, v in ladder.options)
            href = f"/leaderboard/{quote(game)}" + (f"?{query}" if query else "")
            items.append(f'<li><a href="{escape(href)}">{escape(ladder.label)}</a></li>')
    recent = [
        f'<li><a href="/season/{quote(s.season_id)}">{escape(s.season_id)}</a> '
        f"({escape(s.game)}, {escape(s.status.value)})</li>"
        for s in store.seasons()[-20:][::-1]
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Saloon leaderboards</title><style>{_INDEX_CSS}</style></head><body>"
        f"<h1>Saloon leaderboards</h1><h2>Ladders</h2><ul>{''.join(items)}</ul>"
        f"<h2>Recent seasons</h2><ul>{''.join(recent) or '<li>none yet</li>'}</ul>"
        "</body></html>\n"
    )


class _Handler(BaseHTTPRequestHandler):
    server: BoardServer
    server_version = "saloon-boards"

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def _refuse(self) -> None:
        self._send(405, "text/plain", "read-only: GET or HEAD\n", True, {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    def _serve(self, body: bool) -> None:
        url = urlsplit(self.path)
        store = self.server.store
        try:
            if url.path == "/healthz":
                self._send(200, "text/plain", "ok\n", body)
            elif url.path == "/":
                page = self.server.boards.get(("html-index",), lambda: index_page(store))
                self._send(200, "text/html", page, body)
            elif url.path.startswith("/leaderboard/"):
                game = url.path[len("/leaderboard/") :]
                options = dict(parse_qsl(url.query))
                key = ("html", game, tuple(sorted(options.items())))
                page = self.server.boards.get(
                    key, lambda: _html(game_leaderboard(store, game, options)[0])
                )
                self._send(200, "text/html", page, body)
            elif url.path.startswith("/season/"):
                season = url.path[len("/season/") :]
                page = self.server.boards.get(
                    ("html-season", season), lambda: _html(season_leaderboard(store, season))
                )
                self._send(200, "text/html", page, body)
            else:
                self._send(404, "text/plain", "not found\n", body)
        except (RatingsError, GameError, RefereeError) as exc:
            self._send(404, "text/plain", f"{exc}\n", body)
        except StoreUnavailable as exc:
            self._send(503, "text/plain", f"{exc}\n", body)
        except Exception:
            log.exception("GET %s failed", url.path)
            self._send(500, "text/plain", "internal error\n", body)

    def _send(
        self,
        status: int,
        kind: str,
        text: str,
        body: bool,
        headers: dict[str, str] | None = None,
    ) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        # The pages are self-contained: no scripts, styles inline, SVG charts inline.
        policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
        self.send_header("Content-Security-Policy", policy)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


def _html(board: Any) -> str:
    out = io.StringIO()
    render_html(board, out)
    return out.getvalue()


class BoardServer(ThreadingHTTPServer):
    """The read-only leaderboard web server of one store."""

    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], store: Store, boards: BoardCache | None = None
    ) -> None:
        self.store = store
        self.boards = boards or BoardCache(Registry(store))
        super().__init__(address, _Handler)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on (useful after binding port 0)."""
        return int(self.server_address[1])

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="boards", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(5)
