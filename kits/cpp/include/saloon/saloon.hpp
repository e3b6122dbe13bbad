// Saloon's bot runtime for C++: it serves one bot over the bot protocol exactly as the
// Python runtime (saloon.sdk.run) does. docs/protocol.md is the protocol from the bot's
// side; this library (libsaloon.a, precompiled in the runtime image) is one implementation.
//
// A bot is one function, saloon::act: it is handed each Decision and returns the index of
// one of its legal actions. The library has the program's main: it serves gRPC on the unix
// socket given as --socket PATH (after writing PATH.loading), one Bot.Play stream per match,
// or several on a kept stream. An exception thrown by act is reported as a BotError naming
// its type and message (and the bot's file:line where the program was built with -g), never
// a broken stream; what the bot prints (std::cout or std::cerr) goes to stderr, marked by
// the moment of the match it was printed at.
//
// This header needs only the standard library and nlohmann/json: a bot's build compiles its
// own files and links the precompiled runtime (the image keeps this header precompiled, and
// the build includes it first). The typed views of each game
// (<saloon/games/GAME.hpp>, generated from the game's wire schema) decode a decision.
#ifndef SALOON_SALOON_HPP
#define SALOON_SALOON_HPP

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace saloon {

using json = nlohmann::json;

// The bot protocol's version this runtime speaks.
constexpr int kProtocolVersion = 1;

// What a bot knows of its match from its start.
struct Match {
  std::string id;
  std::string game;
  json options;
  int seat = 0;
  int num_seats = 0;
  // Seed for the bot's own randomness (derived from the match seed and the seat).
  std::uint64_t seed = 0;
  // Time per decision, and the match's time bank drawn on beyond it, in milliseconds.
  int decision_ms = 0;
  int bank_ms = 0;
};

// One decision's time.
struct Clock {
  // This decision's time and what is left of the match's bank, in milliseconds.
  int decision_ms = 0;
  int bank_ms = 0;
  // When the runtime received the request.
  std::chrono::steady_clock::time_point started_at;
  // When the decision's own time runs out (the bank is drawn on after it).
  std::chrono::steady_clock::time_point deadline() const {
    return started_at + std::chrono::milliseconds(decision_ms);
  }
};

// One request to decide: the seat's observation and the legal actions as the engine's
// JSON (a game's typed view decodes them: saloon::games::GAME::view).
struct Decision {
  // The game's decision kind, e.g. "PLAY_CARD".
  std::string kind;
  // The legal actions (a JSON array); act returns the index of one of them.
  json legal;
  // The match log index this decision becomes.
  int index = 0;
  const Match* match = nullptr;
  Clock clock;

  // The seat's observation, a JSON object, decoded on first use (a bot that does not read
  // it does not pay for it); std::invalid_argument when it is not JSON.
  const json& observation() const;
  // The observation's JSON text as the referee sent it.
  std::string observation_json;

  // Writes a line to the bot's stderr (kept with the match, marked by this decision).
  void note(const std::string& text) const;

 private:
  mutable std::optional<json> observation_;
};

// The bot: the index into d.legal of the action to play. Defined by the bot's author.
int act(const Decision& d);

}  // namespace saloon

// A null or absent JSON value is an empty std::optional (the typed views' nullable fields).
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void from_json(const json& j, std::optional<T>& out) {
    if (j.is_null()) {
      out.reset();
    } else {
      out = j.get<T>();
    }
  }
  static void to_json(json& j, const std::optional<T>& value) {
    if (value) {
      j = *value;
    } else {
      j = nullptr;
    }
  }
};
}  // namespace nlohmann

#endif  // SALOON_SALOON_HPP
