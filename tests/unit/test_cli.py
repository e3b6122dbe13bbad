"""The ``saloon`` command as a user runs it: a real subprocess of the console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from saloon.games import competition_ranks

SALOON = [sys.executable, "-m", "saloon.arena.cli"]
SOS = "seas-of-strife-v1"
SEATS = ["--seat", "house:greedy", "--seat", "house:random", "--seat", "house:random"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SALOON, *args], capture_output=True, text=True, timeout=120)


def test_games_lists_every_game() -> None:
    from saloon.games import game_ids

    out = run("games", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["id"] for r in rows] == game_ids()
    sos = next(r for r in rows if r["id"] == SOS)
    assert (sos["min_players"], sos["max_players"]) == (3, 6)
    assert "house:greedy" in sos["house_bots"]
    text = run("games")
    assert SOS in text.stdout


def test_play_json_is_byte_identical_for_the_same_seed() -> None:
    first = run("play", SOS, *SEATS, "--seed", "11", "--json")
    second = run("play", SOS, *SEATS, "--seed", "11", "--json")
    assert first.returncode == 0, first.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert "timing" in a
    del a["timing"], b["timing"]
    assert a == b
    strip = [line for line in first.stdout.splitlines() if not line.startswith(' "timing"')]
    strip2 = [line for line in second.stdout.splitlines() if not line.startswith(' "timing"')]
    assert strip == strip2, "everything but the timing line is byte-identical"
    assert a["game"] == SOS and a["seed"] == 11
    assert [s["bot"] for s in a["seats"]] == ["house:greedy", "house:random", "house:random"]
    assert all(s["version"].startswith("saloon-") for s in a["seats"])
    assert a["log"][0]["chance"] == "DEAL"
    # Seas of Strife: fewest points best, ties shared (no seat was played out).
    assert len(a["scores"]) == 3 and a["played_out"] == []
    assert a["ranks"] == competition_ranks(a["scores"], lower_is_better=True)


def test_play_text_log_and_replay_verify(tmp_path: Path) -> None:
    record = tmp_path / "m.json"
    out = run("play", SOS, *SEATS, "--seed", "5", "--out", str(record))
    assert out.returncode == 0, out.stderr
    assert "chance  DEAL" in out.stdout and "result:" in out.stdout
    rep = run("replay", str(record), "--verify")
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout.splitlines()[-1].startswith("verified")
    # The replay shows the same log as the play did.
    assert rep.stdout.splitlines()[: len(out.stdout.splitlines())] == out.stdout.splitlines()


def test_replay_as_seat_shows_only_that_seats_cards(tmp_path: Path) -> None:
    record_path = tmp_path / "m.json"
    assert run("play", SOS, *SEATS, "--seed", "5", "--out", str(record_path)).returncode == 0
    record = json.loads(record_path.read_text())
    deal = record["log"][0]["outcome"]
    seat1_hand = set(deal[15:30])
    rep = run("replay", str(record_path), "--as-seat", "1", "--json")
    assert rep.returncode == 0, rep.stderr
    seen = [
        json.loads(line.split("you see: ", 1)[1])
        for line in rep.stdout.splitlines()
        if "you see: " in line
    ]
    # Seat 1's hands of the first deal only hold cards of its block of the deal.
    seen_hands = [obs["hand"] for obs in seen if obs["hand_number"] == 1]
    assert seen_hands and all(set(h) <= seat1_hand for h in seen_hands)
    assert "DEAL" not in rep.stdout.split("result:")[0].split("as seen by seat 1", 1)[1]
    # Without --json: one line per observation field, and the legal actions, readable.
    readable = run("replay", str(record_path), "--as-seat", "1").stdout
    hand_line = next(line for line in readable.splitlines() if line.startswith("       hand: ["))
    from saloon.sdk.games.seas_of_strife import card

    assert hand_line == f"       hand: [{', '.join(str(card(c)) for c in seen_hands[0])}]"
    assert "       legal: " in readable and '{"' not in readable


def test_play_log_shows_trick_winners_and_one_based_ranks_in_a_table_that_fits(
    tmp_path: Path,
) -> None:
    bot = tmp_path / "a_bot_with_a_rather_long_file_name_indeed.py"
    bot.write_text("def act(decision):\n    return decision.legal[0]\n")
    out = run(
        "play",
        SOS,
        "--seat",
        str(bot),
        *SEATS[2:],
        "--seed",
        "5",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert out.returncode == 0, out.stderr
    assert "=> trick: winner " in out.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    table = out.stdout.split("result:\n", 1)[1].splitlines()
    assert table[0].split() == ["seat", "bot", "score", "rank"]
    for seat, line in enumerate(table[1:]):
        cells = line.split()
        assert cells[1] == record["seats"][seat]["bot"]
        assert int(cells[3]) == record["ranks"][seat] + 1
    assert len({len(line) for line in table}) == 1, "columns aligned under the long name"
    events = [e for entry in record["log"] for e in entry.get("events", [])]
    assert sum(e["event"] == "trick" for e in events) >= 15


def test_replay_verify_catches_a_tampered_result(tmp_path: Path) -> None:
    record_path = tmp_path / "m.json"
    assert run("play", SOS, *SEATS, "--seed", "5", "--out", str(record_path)).returncode == 0
    record = json.loads(record_path.read_text())
    record["scores"][0] += 1
    record_path.write_text(json.dumps(record))
    rep = run("replay", str(record_path), "--verify")
    assert rep.returncode == 1
    assert "recorded scores" in rep.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "no-such-game-v1", "--seat", "house:random"], "unknown game"),
        (["play", SOS, "--seat", "house:random"], "3 to 6 seats"),
        (["play", SOS, *SEATS, "--seed", "x"], "seed"),
        (["play", SOS, *SEATS, "--seed", "-1"], "seed"),
        (["play", SOS, *SEATS, "--option", "foo=bar"], "no option 'foo'"),
        (
            [
                "play",
                SOS,
                "--seat",
                "house:nobody",
                "--seat",
                "house:random",
                "--seat",
                "house:random",
            ],
            "no house bot",
        ),
        (["replay", "/nonexistent/record.json"], "cannot read"),
        (["play", SOS, *SEATS, "--decision-ms", "0"], "out of range"),
        (["frobnicate"], "invalid choice"),
        (["play", SOS, "--seat", "nobot.py", *SEATS[2:]], "no bot file or folder at nobot.py"),
        (
            ["play", SOS, "--seat", "grpc:unix:/nonexistent/bot.sock", *SEATS[2:]],
            "nothing is listening at /nonexistent/bot.sock",
        ),
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], message: str) -> None:
    out = run(*args)
    assert out.returncode != 0
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("saloon: error: ") and message in lines[0]
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        '{"format": "saloon.match/1"}',
        '{"format": "saloon.match/1", "match_id": "x", "game": "seas-of-strife-v1", "options": {},'
        ' "seed": 1, "seats": [{"seat": 0, "bot": "a"}, {"seat": 1, "bot": "b"},'
        ' {"seat": 2, "bot": "c"}], "log": [{"seat": 0, "kind": "PLAY_CARD", "action": 3}]}',
    ],
)
def test_malformed_replay_file_is_one_clear_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    out = run("replay", str(path), "--verify")
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("saloon: error: "), out.stderr


def test_a_crashing_path_bot_shows_its_traceback(tmp_path: Path) -> None:
    bot = tmp_path / "crashy.py"
    bot.write_text(
        "from saloon.sdk import Bot\n"
        "class Crashy(Bot):\n"
        "    def act(self, decision):\n"
        "        raise ValueError('my bug')\n"
    )
    out = run("play", SOS, "--seat", str(bot), "--seat", "house:random", "--seat", "house:random")
    assert out.returncode == 3, out.stderr  # a seat crashed (docs: exit statuses)
    first = out.stderr.splitlines()[0]
    assert first.startswith(f"saloon: {bot}:4: seat 0 ({bot}) CRASH at decision "), first
    assert "[CRASH: act raised ValueError: my bug" in out.stdout
    assert "played out after faults" in out.stdout
    assert f"--- seat 0 ({bot}) stderr" in out.stderr
    assert "raise ValueError('my bug')" in out.stderr and "Traceback" in out.stderr
    # Under root the runtime loads a copy of the bot: every path shown is the author's.
    assert "saloon-bot-" not in out.stderr + out.stdout


def test_a_bot_that_does_not_load_is_reported_first_with_its_file_and_line(
    tmp_path: Path,
) -> None:
    bot = tmp_path / "syntax.py"
    bot.write_text("from saloon.sdk import Bot\n\nclass MyBot(Bot)\n    pass\n")
    out = run("play", "seizure-v1", "--seat", str(bot), "--seat", "house:greedy", "--json")
    assert out.returncode == 3
    first = out.stderr.splitlines()[0]
    assert first.startswith(
        f"saloon: seat 0 ({bot}) did not load: {bot}:3: SyntaxError: expected ':'"
    ), first
    assert "saloon-bot-" not in out.stderr + out.stdout
    record = json.loads(out.stdout)
    assert record["faults"][0]["detail"].startswith(f"the bot did not load: {bot}:3:")


def test_stderr_is_recorded_by_decision_and_shown_in_the_seat_view(tmp_path: Path) -> None:
    bot = tmp_path / "talk.py"
    bot.write_text(
        "from saloon.sdk import Bot\n"
        "class Talk(Bot):\n"
        "    def act(self, decision):\n"
        "        print('deciding', decision.index, end='')  # no newline: still its own\n"
        "        return decision.legal[0]\n"
    )
    path = tmp_path / "rec.json"
    game = "western-showdown-v1"
    out = run("play", game, "--seat", str(bot), "--seat", "house:greedy", "--out", str(path))
    assert out.returncode == 0, out.stderr
    record = json.loads(path.read_text())
    blocks = record["stderr"]
    asked = {i for i, e in enumerate(record["log"]) if e.get("seat") == 0 and not e.get("auto")}
    assert {b["decision"] for b in blocks} == asked
    assert all(b["lines"] == [f"deciding {b['decision']}"] for b in blocks)
    view = run("replay", str(path), "--as-seat", "0").stdout
    first = min(asked)
    assert f"you printed:\n         | deciding {first}\n" in view
    assert "you printed" not in run("replay", str(path), "--as-seat", "1").stdout
    again = run("replay", str(path), "--json")
    assert json.loads(again.stdout) == record


def test_play_limits_are_recorded() -> None:
    out = run("play", SOS, *SEATS, "--decision-ms", "250", "--bank-ms", "900", "--json")
    assert out.returncode == 0, out.stderr
    limits = json.loads(out.stdout)["limits"]
    assert (limits["decision_ms"], limits["bank_ms"]) == (250, 900)


def test_new_writes_a_starter_kit_whose_test_passes(tmp_path: Path) -> None:
    import importlib.util

    kit = tmp_path / "kit"
    out = run("new", "western-showdown-v1", str(kit))
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in kit.iterdir()) == ["bot.py", "test_bot.py"]
    assert (
        "from saloon.sdk.games.western_showdown import Observation" in (kit / "bot.py").read_text()
    )
    spec = importlib.util.spec_from_file_location("starter_test", kit / "test_bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.OPPONENTS == ["house:greedy"]
    module.test_my_bot_plays_a_whole_match_without_a_fault(1)  # over gRPC, as the arena
    again = run("new", "western-showdown-v1", str(kit))
    assert again.returncode == 1 and "not an empty folder" in again.stderr


BOTS = Path(__file__).resolve().parents[1] / "integration" / "bots"


def test_a_path_bot_s_traceback_comes_after_the_log() -> None:
    out = subprocess.run(
        [*SALOON, "play", SOS, "--seat", str(BOTS / "raises.py"), *SEATS[2:], "--seed", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert out.returncode == 3  # the seat crashed
    after = out.stdout.split("result:", 1)[1]
    assert "stderr, last" in after and "ValueError: the bot's own bug" in after


def test_debug_plays_a_path_bot_in_process_and_lets_its_exception_through() -> None:
    out = run("play", SOS, "--seat", str(BOTS / "raises.py"), *SEATS[2:], "--debug")
    assert out.returncode != 0
    assert "Traceback" in out.stderr and "raises.py" in out.stderr
    assert out.stderr.rstrip().endswith("ValueError: the bot's own bug")


def test_a_match_of_house_bots_does_not_import_grpc() -> None:
    code = (
        "import sys, io; from saloon.arena.cli import main; "
        "sys.stdout = io.StringIO(); rc = main(['play', 'seizure-v1', '--seat', "
        "'house:greedy', '--seat', 'house:random']); sys.stdout = sys.__stdout__; "
        "print(rc, 'grpc' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["0", "False"], out.stderr


def test_play_stderr_header_is_not_on_the_result_tables_last_line(tmp_path: Path) -> None:
    """Issue 30: ``... 8     2--- seat 0 (v1/bot.py) stderr, last 8 lines``. The stderr
    section starts on a line of its own however stdout and stderr are joined: merged by
    the shell, or stdout's last newline stripped before stderr is appended."""
    bot = tmp_path / "talk.py"
    bot.write_text(
        "import sys\ndef act(decision):\n    print('hm', file=sys.stderr)\n"
        "    return decision.legal[0]\n"
    )
    seats = ["--seat", str(bot), "--seat", "house:greedy"]
    apart = run("play", "western-showdown-v1", *seats, "--seed", "3")
    assert apart.returncode == 0, apart.stderr
    header = f"--- seat 0 ({bot}) stderr, last "
    for joined in (apart.stdout + apart.stderr, apart.stdout.rstrip("\n") + apart.stderr):
        lines = joined.splitlines()
        at = next(i for i, line in enumerate(lines) if header in line)
        assert lines[at].startswith(header), lines[at]
        above = [line for line in lines[:at] if line.strip()][-1]
        assert above.split()[:2] == ["1", "house:greedy"]  # the table's last row, whole
    merged = subprocess.run(
        [*SALOON, "play", "western-showdown-v1", *seats, "--seed", "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert any(line.startswith(header) for line in merged.stdout.splitlines())


def test_replay_as_seat_tags_forced_moves_only_move(tmp_path: Path) -> None:
    """Issue 30: the seat's view showed a forced move (played without asking the bot) as
    the bot's own choice; it is tagged "(only move)" as in the full log."""
    path = tmp_path / "m.json"
    seats = ["--seat", "house:greedy", "--seat", "house:random"]
    assert run("play", "seizure-v1", *seats, "--seed", "4", "--out", str(path)).returncode == 0
    record = json.loads(path.read_text())
    forced = [i for i, e in enumerate(record["log"]) if e.get("seat") == 0 and e.get("auto")]
    asked = [i for i, e in enumerate(record["log"]) if e.get("seat") == 0 and not e.get("auto")]
    assert forced and asked
    view = run("replay", str(path), "--as-seat", "0").stdout.splitlines()
    chose = {
        int(view[i].split()[0]): view[j]
        for i in range(len(view))
        if view[i].endswith("you see:")
        for j in [next(k for k in range(i + 1, len(view)) if view[k].startswith("       you "))]
    }
    assert all(chose[i].endswith(" (only move)") for i in forced)
    assert not any(chose[i].endswith(" (only move)") for i in asked)


def test_eval_help_prints_95_percent_not_95_percent_percent() -> None:
    """Issue 30: ``saloon eval --help`` printed "95%%" (argparse does not format an
    epilog without %(prog)s)."""
    out = run("eval", "--help")
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert "with a 95% interval" in text and "%%" not in text
