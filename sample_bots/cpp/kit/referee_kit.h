// The C++ bot kit for the Brag referee: write one function from a turn to an action, and play.
//
//   #include "referee_kit.h"
//   namespace v2 = referee::v2;
//   v2::Action decide(const referee::kit::Turn& turn) { return turn.legal_actions[0]; }
//   int main() { return referee::kit::run_bot(decide, {.name = "first-legal"}); }
//
// The kit serves protocol v2 (proto/referee/v2/bot.proto; the build generates the message and
// service code from the copy in this bot's folder) on the address in REFEREE_BOT_ADDRESS: it answers
// the handshake, keeps each game's public history from the stream (checking sequence numbers), calls
// `decide` for each decision_request and the optional hooks for everything else, one message at a
// time and in order. If `decide` throws, the kit writes the exception to stderr (your log) and
// answers with Decision.error ("std::out_of_range: vector::at"): the referee records a
// malformed-reply fault quoting it. SIGTERM or SIGINT stops the bot with exit status 0.
//
// Notes: `decide` may call turn.note(text) any number of times; the texts, joined by "\n", go with
// that decision's reply as Decision.note, a private note kept beside the decision in your replay (see
// kNoteBytes for the cap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "referee/v2/bot.pb.h"

namespace referee::kit {

namespace v2 = ::referee::v2;

// One game's public history as the stream delivered it: every event in order, checked for gaps.
class GameHistory {
 public:
  GameHistory() = default;
  explicit GameHistory(const v2::GameStart& start) : game_start_(start) {}

  // Takes the next event; returns false (and records the gap) unless it is numbered one past the last.
  bool add(const v2::Event& event);
  // The events of hand `hand_number` (the current hand), oldest first; valid while the history lives.
  std::vector<const v2::Event*> hand_events(uint32_t hand_number) const;
  // Every showdown event so far; each one's showdown() holds the revealed hands.
  std::vector<const v2::Event*> showdowns() const;

  const v2::GameStart& game_start() const { return game_start_; }  // seat, players, seed, limits
  const std::deque<v2::Event>& events() const { return events_; }   // sequence 1, 2, 3 ...
  const std::vector<std::string>& gaps() const { return gaps_; }    // one line per gap (there should be none)

 private:
  v2::GameStart game_start_;
  std::deque<v2::Event> events_;  // a deque: references to its events stay valid as it grows
  std::vector<std::string> gaps_;
};

// A decision's note (Decision.note) is for its author's eyes: what the bot believed, why it chose.
// The referee keeps the first kNoteBytes bytes of each note (UTF-8, cut at a character, marked
// " [cut]") and the first 65536 bytes of a bot's notes in a game; its caps are the authority. The kit
// cuts a note the same way before sending it, so it never sends more than the referee keeps.
inline constexpr std::size_t kNoteBytes = 1024;

// `text` as it goes out as a note: valid UTF-8 (a malformed byte becomes U+FFFD) of at most `limit`
// bytes; a longer text is cut at a character and ends " [cut]" (within the limit).
std::string cut_note(std::string_view text, std::size_t limit = kNoteBytes);

// What `decide` gets for one decision_request.
struct Turn {
  const v2::DecisionRequest& request;                       // decision_number(), move_time_ms(),
                                                            // time_bank_ms(), last_charged_ms(), ...
  const v2::Observation& observation;                       // exactly what your seat may know
  const std::vector<v2::Action>& legal_actions;             // return one of these
  const std::vector<const v2::Event*>& hand_events;         // the current hand's public events
  const GameHistory& history;                               // the whole game's, and its GameStart

  // Adds a line to this decision's private note: turn.note("discard 7H: keeps the pair of kings").
  // Any number of calls; the texts, joined by "\n", go with the reply (an error reply too), cut to
  // kNoteBytes. A decision without a call sends no note.
  void note(std::string_view text) const;
  // The note so far, as note() writes it (nullopt: none); the kit sends it.
  mutable std::optional<std::string> notes{};
};

using DecideFunction = std::function<v2::Action(const Turn&)>;

struct BotOptions {
  std::string name{};                                       // required: shown in logs
  std::string version = "1.0";
  std::string author{};
  std::vector<v2::Game> games = {v2::GAME_STOP_THE_BUS, v2::GAME_BASTARD_BRAG};
  std::string address{};                                    // default: $REFEREE_BOT_ADDRESS
  // Optional hooks. on_event sees every public event once, in order (a SHOWDOWN's showdown() holds
  // the revealed hands), before the decide or on_game_end of the message that carried it.
  std::function<void(const v2::GameStart&)> on_game_start{};
  std::function<void(const v2::Event&)> on_event{};
  std::function<void(const v2::FaultNotice&)> on_fault{};
  std::function<void(const v2::GameEnd&)> on_game_end{};
};

// Serves `decide` until SIGTERM or SIGINT; returns the process's exit status (0, or 1 if it cannot
// listen, 2 without an address).
int run_bot(DecideFunction decide, BotOptions options);

// The card text form, the same everywhere: rank then suit letter, "QS", "TD", "2C", "AH".
std::string card_text(const v2::Card& card);
// The card for "QS" (any case; "10S" too); throws std::invalid_argument for anything else.
v2::Card parse_card(std::string_view text);
// A short text for an action, for logs: "DISCARD QS", "EXCHANGE 2C slot 1", "KNOCK".
std::string action_text(const v2::Action& action);

}  // namespace referee::kit
