// A C++ bot for the Brag referee: plays Stop the Bus and Bastard Brag, on the C++ bot kit.
//
// Strategy (the same as the Node.js and Go sample bots): every three-card hand gets a strength, the
// fraction of the 22,100 possible hands it beats. The bot keeps the strongest hand it can reach (the
// mean strength when a card is unknown), and stops or knocks once its hand is unlikely to be the
// single worst at the table. Each decision carries a one-line note of what it chose and why
// (turn.note): the author reads it in the replay.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "referee_kit.h"

namespace v2 = referee::v2;
using referee::kit::Turn;

namespace {

// ----- cards and hands ---------------------------------------------------------------------------
// A card is an id 0..51: (rank - 2) * 4 + suit, suits clubs 0 < diamonds 1 < hearts 2 < spades 3,
// so ids sort by rank, then suit, like the referee's canonical deck.

constexpr int kAce = 14;
constexpr int kA23 = 15;  // the run A-2-3 and the prial 3-3-3 rank above every ordinary rank

int card_id(const v2::Card& card) { return (static_cast<int>(card.rank()) - 2) * 4 + (card.suit() - v2::SUIT_CLUBS); }
int rank_of(int id) { return (id >> 2) + 2; }

// A number that orders three-card Brag hands: category, then the ranks that decide within it, then
// the suit of the highest card (exact ties).
int hand_score(int x, int y, int z) {
  std::array<int, 3> ids{x, y, z};
  std::sort(ids.begin(), ids.end(), std::greater<int>());
  auto [a, b, c] = ids;
  int r1 = rank_of(a), r2 = rank_of(b), r3 = rank_of(c);
  bool flush = a % 4 == b % 4 && b % 4 == c % 4;
  int category;
  std::array<int, 3> values{0, 0, 0};
  if (r1 == r2 && r2 == r3) {
    category = 5;  // prial
    values[0] = r1 == 3 ? kA23 : r1;
  } else if ((r1 == kAce && r2 == 3 && r3 == 2) || (r1 == r2 + 1 && r2 == r3 + 1)) {
    category = flush ? 4 : 3;  // running flush, run
    values[0] = r1 == kAce && r2 == 3 ? kA23 : r1;
  } else if (flush) {
    category = 2;
    values = {r1, r2, r3};
  } else if (r1 == r2 || r2 == r3) {
    category = 1;  // pair, then kicker
    values = r1 == r2 ? std::array<int, 3>{r1, r3, 0} : std::array<int, 3>{r2, r1, 0};
  } else {
    category = 0;  // high card
    values = {r1, r2, r3};
  }
  return (((category * 16 + values[0]) * 16 + values[1]) * 16 + values[2]) * 4 + a % 4;
}

// "KS" for a card id, and "KS KH 4C" for a hand of them, as the notes write cards.
std::string id_text(int id) { return {"23456789TJQKA"[rank_of(id) - 2], "CDHS"[id % 4]}; }

std::string hand_text(const std::vector<int>& ids) {
  std::string text;
  for (int id : ids) text += (text.empty() ? "" : " ") + id_text(id);
  return text;
}

// A strength in a note: "0.83".
std::string fixed(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", s);
  return text;
}

int hand_key(int x, int y, int z) { return x * 2704 + y * 52 + z; }

// kStrength[hand_key(...)] for any order of the three ids: the fraction of all hands this one beats.
const std::vector<double>& strength_table() {
  static const std::vector<double> table = [] {
    std::vector<std::array<int, 4>> hands;
    for (int a = 0; a < 52; a++)
      for (int b = a + 1; b < 52; b++)
        for (int c = b + 1; c < 52; c++) hands.push_back({hand_score(a, b, c), a, b, c});
    std::sort(hands.begin(), hands.end());
    std::vector<double> strengths(52 * 52 * 52, 0.0);
    for (size_t position = 0; position < hands.size(); position++) {
      auto [score, a, b, c] = hands[position];
      double s = static_cast<double>(position) / hands.size();
      for (auto [p, q, r] : {std::array<int, 3>{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}}) {
        strengths[hand_key(p, q, r)] = s;
      }
    }
    return strengths;
  }();
  return table;
}

double strength(int a, int b, int c) { return strength_table()[hand_key(a, b, c)]; }
double strength(const std::vector<int>& ids) { return strength(ids.at(0), ids.at(1), ids.at(2)); }

// The strength of the best three of `hand` plus `extra` (keeping `extra` if `must_keep`).
double best_with(const std::vector<int>& hand, int extra, bool must_keep) {
  int a = hand[0], b = hand[1], c = hand[2];
  double best = std::max({strength(a, b, extra), strength(a, extra, c), strength(extra, b, c)});
  return must_keep ? best : std::max(best, strength(hand));
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / values.size();
}

std::vector<int> ids_of(const google::protobuf::RepeatedPtrField<v2::Card>& cards) {
  std::vector<int> ids;
  for (const v2::Card& card : cards) ids.push_back(card_id(card));
  return ids;
}

std::vector<int> unknown_cards(const std::set<int>& known) {
  std::vector<int> unknown;
  for (int id = 0; id < 52; id++)
    if (!known.count(id)) unknown.push_back(id);
  return unknown;
}

// ----- when to end a hand ------------------------------------------------------------------------

// Chance that every opponent beats strength `s` when each holds about the best of `power` random hands.
double lose_chance(double s, int opponents, double power) { return std::pow(1 - std::pow(s, power), opponents); }

int players_in_hand(const v2::Observation& obs) {
  return static_cast<int>(std::count_if(obs.seats().begin(), obs.seats().end(), [](const v2::SeatState& seat) { return seat.in_hand(); }));
}

// Stop or knock when the chance of holding the single worst hand, after every opponent's final turn,
// is below half the fair share 1 / players. Opponents improve as the hand goes on; and the longer the
// hand, the more risk is accepted, so that hands end.
bool should_end(const v2::Observation& obs, double s) {
  int players = players_in_hand(obs);
  double rounds = static_cast<double>(obs.turns_this_hand()) / players;
  double power = 2 + 2 * std::min(rounds, 3.0);
  double target = (0.5 / players) * (1 + 0.25 * std::max(0.0, rounds - 3));
  return lose_chance(s, players - 1, power) <= target;
}

const v2::Action* find(const std::vector<v2::Action>& legal, v2::ActionKind kind) {
  for (const v2::Action& action : legal)
    if (action.kind() == kind) return &action;
  return nullptr;
}

// ----- Stop the Bus ------------------------------------------------------------------------------

// Cards that cannot be in the stock: the discard pile and cards opponents took from it.
std::set<int> stop_the_bus_seen(const std::vector<const v2::Event*>& events, uint32_t seat) {
  std::vector<int> pile;
  std::set<int> taken_by_others;
  for (const v2::Event* event : events) {
    switch (event->kind()) {
      case v2::EVENT_KIND_DEAL:
        pile = {card_id(event->card())};
        taken_by_others.clear();
        break;
      case v2::EVENT_KIND_DISCARD:
        pile.push_back(card_id(event->card()));
        taken_by_others.erase(card_id(event->card()));
        break;
      case v2::EVENT_KIND_TAKE:
        if (!pile.empty()) pile.pop_back();
        if (event->seat() != seat) taken_by_others.insert(card_id(event->card()));
        break;
      case v2::EVENT_KIND_RECYCLE:
        if (pile.size() > 1) pile.erase(pile.begin(), pile.end() - 1);
        break;
      default:
        break;
    }
  }
  std::set<int> seen(pile.begin(), pile.end());
  seen.insert(taken_by_others.begin(), taken_by_others.end());
  return seen;
}

v2::Action decide_stop_the_bus(const Turn& turn) {
  const v2::Observation& obs = turn.observation;
  const v2::StopTheBusView& view = obs.stop_the_bus();
  std::vector<int> hand = ids_of(obs.hand());
  if (view.has_drawn_card()) {
    // Discard the card whose loss leaves the strongest three (the referee lists only legal discards).
    const v2::Action* best = nullptr;
    double best_score = -1;
    for (const v2::Action& action : turn.legal_actions) {
      int gone = card_id(action.card());
      std::vector<int> kept;
      for (int id : hand)
        if (id != gone) kept.push_back(id);
      double score = strength(kept);
      if (score > best_score) best = &action, best_score = score;
    }
    if (!best) throw std::logic_error("no discard among the legal actions");
    std::vector<int> kept;
    for (int id : hand)
      if (id != card_id(best->card())) kept.push_back(id);
    turn.note("discard " + id_text(card_id(best->card())) + ": keeps " + hand_text(kept) + ", strength " +
              fixed(best_score));
    return *best;
  }
  double now = strength(hand);
  const v2::Action* stop = find(turn.legal_actions, v2::ACTION_KIND_STOP);
  if (stop && should_end(obs, now)) {
    turn.note("stop: " + hand_text(hand) + ", strength " + fixed(now) + ", is unlikely to be the worst at the table");
    return *stop;
  }
  int top = card_id(view.discard_top());
  std::set<int> seen = stop_the_bus_seen(turn.hand_events, obs.seat());
  seen.insert(top);
  seen.insert(hand.begin(), hand.end());
  std::vector<double> draws;
  for (int id : unknown_cards(seen)) draws.push_back(best_with(hand, id, false));
  double take_value = best_with(hand, top, true);
  std::string values = "take " + fixed(take_value) + ", draw " + fixed(mean(draws)) + " (mean), hold " + fixed(now);
  const v2::Action* take = find(turn.legal_actions, v2::ACTION_KIND_TAKE);
  if (take && take_value > now && take_value >= mean(draws)) {
    turn.note("take " + id_text(top) + ": " + values);
    return *take;
  }
  const v2::Action* draw = find(turn.legal_actions, v2::ACTION_KIND_DRAW);  // never worse than passing
  if (!draw) throw std::logic_error("no draw among the legal actions");
  turn.note("draw: " + values);
  return *draw;
}

// ----- Bastard Brag -------------------------------------------------------------------------------

v2::Action decide_bastard_brag(const Turn& turn) {
  const v2::Observation& obs = turn.observation;
  std::vector<int> hand = ids_of(obs.hand());
  std::array<int, 3> centre{-1, -1, -1};
  for (const v2::CentreSlot& slot : obs.bastard_brag().centre()) {
    if (slot.has_card() && slot.slot() < 3) centre[slot.slot()] = card_id(slot.card());
  }
  std::set<int> known(hand.begin(), hand.end());
  for (int id : centre)
    if (id >= 0) known.insert(id);
  std::vector<int> unknown = unknown_cards(known);

  auto slot_value = [&](const std::vector<int>& kept, uint32_t slot) {
    if (centre[slot] >= 0) return strength(kept[0], kept[1], centre[slot]);
    std::vector<double> values;
    for (int id : unknown) values.push_back(strength(kept[0], kept[1], id));
    return mean(values);
  };
  auto whole_centre_value = [&] {
    std::vector<int> visible;
    for (int id : centre)
      if (id >= 0) visible.push_back(id);
    if (visible.size() == 3) return strength(visible);
    std::vector<double> values;
    if (visible.size() == 2) {
      for (int id : unknown) values.push_back(strength(visible[0], visible[1], id));
    } else {
      for (size_t i = 0; i < unknown.size(); i++)
        for (size_t j = i + 1; j < unknown.size(); j++) values.push_back(strength(visible.at(0), unknown[i], unknown[j]));
    }
    return mean(values);
  };

  const v2::Action* best = nullptr;
  const v2::Action* knock = nullptr;
  double best_score = -1;
  double whole_centre = -1;
  for (const v2::Action& action : turn.legal_actions) {
    double score;
    if (action.kind() == v2::ACTION_KIND_EXCHANGE) {
      int given = card_id(action.card());
      std::vector<int> kept;
      for (int id : hand)
        if (id != given) kept.push_back(id);
      score = slot_value(kept, action.slot());
    } else if (action.kind() == v2::ACTION_KIND_EXCHANGE_ALL) {
      if (whole_centre < 0) whole_centre = whole_centre_value();
      score = whole_centre - 0.0001 * action.card().rank();  // lay the lowest card face up
    } else {
      if (action.kind() == v2::ACTION_KIND_KNOCK) knock = &action;
      continue;
    }
    if (score > best_score) best = &action, best_score = score;
  }
  double now = strength(hand);
  int players = players_in_hand(obs);
  // Knock on a strong hand, or when any exchange would only spoil a hand that is not among the worst.
  if (knock && should_end(obs, now)) {
    turn.note("knock: " + hand_text(hand) + ", strength " + fixed(now) + ", is unlikely to be the worst at the table");
    return *knock;
  }
  if (knock && best_score < now && lose_chance(now, players - 1, 4) <= 1.0 / players) {
    turn.note("knock: " + hand_text(hand) + ", strength " + fixed(now) + "; the best exchange would make " +
              fixed(best_score));
    return *knock;
  }
  if (!best) throw std::logic_error("no exchange among the legal actions");
  std::string card = id_text(card_id(best->card()));
  std::string exchange = best->kind() == v2::ACTION_KIND_EXCHANGE_ALL
                             ? "exchange all, " + card + " face up"
                             : "exchange " + card + " for slot " + std::to_string(best->slot());
  turn.note(exchange + ": expects strength " + fixed(best_score) + ", holding " + fixed(now));
  return *best;
}

// The clock, in the log once every kClockLogEvery decisions (the first included): the time left for
// this move and in the bank, and what the referee charged the previous decision.
constexpr int kClockLogEvery = 20;

void log_clock(const v2::DecisionRequest& request) {
  static int decisions_made = 0;
  if (decisions_made++ % kClockLogEvery != 0) return;
  std::cerr << "clock: decision " << request.decision_number() << ": move " << request.move_time_ms()
            << " ms, bank " << request.time_bank_ms() << " ms left; the previous decision was charged "
            << request.last_charged_ms() << " ms\n";
}

v2::Action decide(const Turn& turn) {
  log_clock(turn.request);
  return turn.observation.has_stop_the_bus() ? decide_stop_the_bus(turn) : decide_bastard_brag(turn);
}

}  // namespace

int main() {
  strength_table();  // build the table before listening, not during the first decision
  return referee::kit::run_bot(decide, {.name = "cpp-heuristic", .version = "2.0.0", .author = "sample"});
}
