"""The Java views' generated decoders (kits/java/src/saloon/games/*/View.java: each type read
from the JSON text by code of its own) decode every observation and legal action of random
playouts exactly as Gson's reflective decoding of the same classes does, in the runtime's
image: both decoded, each serialized back by Gson, compared. Each observation is decoded as
the engine wrote it and again with every object's "type" key moved last: a union's tag
(Seizure's events) read first takes the decoders' direct path, read last their fallback
(the object read whole, then as its variant)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from saloon.referee.match import play_match
from saloon.referee.seats import DecisionRequest, InProcessSeat
from saloon.sdk.house import make_house_bot
from saloon.sdk.languages import Language
from saloon.worker.sandbox.docker import DockerSandbox

from .docker_fixtures import runtime_image_or_skip, sandbox_fixture

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

GAMES = {"seas-of-strife-v1": 3, "seizure-v1": 3, "western-showdown-v1": 2}

CHECK = """
package saloon;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

public final class ViewCheck {
    public static void main(String[] args) throws Exception {
        Gson gson = new GsonBuilder().serializeNulls().create();
        String game = args[0];
        String view = "saloon.games." + game.replace("-", "_") + ".View";
        Class<?> observationType = Class.forName(view + "$Observation");
        Method of = Class.forName(view).getMethod("of", Decision.class);
        int observations = 0;
        int actions = 0;
        for (String line : Files.readAllLines(Path.of(args[1]))) {
            JsonObject o = JsonParser.parseString(line).getAsJsonObject();
            String kind = o.get("kind").getAsString();
            String legal = o.get("legal").getAsString();
            Decision d = new Decision(kind, o.get("observation").getAsString(), legal,
                    Decision.arrayLength(legal), 1, null, null);
            Object typed = of.invoke(null, d);
            Object generated = typed.getClass().getField("observation").get(typed);
            String mine = gson.toJson(generated);
            String gsons = gson.toJson(d.observation(observationType));
            if (!mine.equals(gsons)) {
                throw new AssertionError("observation: " + mine + " != " + gsons);
            }
            StringBuilder name = new StringBuilder("legal");
            for (String part : kind.split("_")) {
                name.append(part.charAt(0)).append(part.substring(1).toLowerCase());
            }
            List<?> list = (List<?>) typed.getClass().getMethod(name.toString()).invoke(typed);
            Class<?> item = list.get(0).getClass();
            if (!gson.toJson(list).equals(gson.toJson(d.legal(item)))
                    || list.size() != d.count()) {
                throw new AssertionError(kind + ": " + gson.toJson(list));
            }
            observations++;
            actions += list.size();
        }
        System.out.println(observations + " " + actions);
    }
}
"""


class Recorder(InProcessSeat):
    """A house bot's seat that keeps every decision request it is asked."""

    def __init__(self, game: str, kept: list[DecisionRequest]) -> None:
        super().__init__(make_house_bot(game, "random"), "house:random")
        self.kept = kept

    def decide(self, request: DecisionRequest) -> int:
        self.kept.append(request)
        return super().decide(request)


def tag_last(value: object) -> object:
    """``value`` with every object's "type" key (a union's tag) moved after its others."""
    if isinstance(value, dict):
        out = {k: tag_last(v) for k, v in value.items() if k != "type"}
        if "type" in value:
            out["type"] = tag_last(value["type"])
        return out
    if isinstance(value, list):
        return [tag_last(v) for v in value]
    return value


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_generated_java_decoders_decode_as_gson_does(
    sandbox: DockerSandbox, tmp_path: Path, game: str
) -> None:
    tag = runtime_image_or_skip(sandbox, Language.JAVA)
    kept: list[DecisionRequest] = []
    for seed in range(4):
        play_match(game, [Recorder(game, kept) for _ in range(GAMES[game])], seed=seed)
    lines = [
        orjson.dumps(
            {
                "kind": r.kind,
                "observation": orjson.dumps(observation).decode(),
                "legal": orjson.dumps(r.legal).decode(),
            }
        )
        for r in kept
        for observation in (r.observation, tag_last(r.observation))
    ]
    (tmp_path / "requests.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "ViewCheck.java").write_text(CHECK)
    tmp_path.chmod(0o755)
    script = (
        "javac -d /tmp/check -cp /opt/saloon/java/saloon.jar /check/ViewCheck.java && "
        "java -cp /opt/saloon/java/saloon.jar:/tmp/check saloon.ViewCheck "
        f"{game} /check/requests.jsonl"
    )
    out = sandbox.client.containers.run(
        tag,
        ["sh", "-c", script],
        volumes={str(tmp_path): {"bind": "/check", "mode": "ro"}},
        network_mode="none",
        remove=True,
        stderr=True,
    ).decode()
    observations, actions = map(int, out.split()[-2:])
    assert observations == 2 * len(kept) and actions >= 4 * len(kept)
