// The C++ bot kit: the v2 stream, the handshake, the history, decide and the hooks (see referee_kit.h).
#include "referee_kit.h"

#include <cxxabi.h>
#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <typeinfo>

#include "referee/v2/bot.grpc.pb.h"

namespace referee::kit {
namespace {

constexpr uint32_t kProtocolVersion = 2;
constexpr const char* kAddressVariable = "REFEREE_BOT_ADDRESS";
constexpr std::string_view kRanks = "23456789TJQKA";
constexpr std::string_view kSuits = "CDHS";
constexpr std::string_view kCutMark = " [cut]";
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD, for a malformed byte

// The length of the well-formed UTF-8 character at the start of `text`, or 0 if there is none.
std::size_t utf8_length(std::string_view text) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  auto continuation = [&](std::size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  unsigned char first = byte(0);
  if (first < 0x80) return 1;
  if (first >= 0xC2 && first <= 0xDF) return continuation(1) ? 2 : 0;
  if (first >= 0xE0 && first <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (first == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (first == 0xED && byte(1) >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (first >= 0xF0 && first <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (first == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (first == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void log_line(const std::string& text) { std::cerr << text << std::endl; }

// "std::out_of_range: vector::at" for the exception being handled.
std::string current_exception_summary() {
  std::string type = "unknown exception";
  if (const std::type_info* info = abi::__cxa_current_exception_type()) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(info->name(), nullptr, nullptr, &status);
    type = status == 0 && demangled ? demangled : info->name();
    std::free(demangled);
  }
  try {
    throw;
  } catch (const std::exception& error) {
    std::string what = error.what();
    return type + ": " + what.substr(0, what.find('\n'));
  } catch (...) {
    return type;
  }
}

// One referee stream: answers the handshake, keeps the history, calls decide and the hooks in order.
class StreamHandler {
 public:
  StreamHandler(const DecideFunction& decide, const BotOptions& options) : decide_(decide), options_(options) {}

  // The reply to one PlayRequest, if it needs one.
  bool handle(const v2::PlayRequest& request, v2::PlayResponse* reply) {
    if (request.sequence() != expected_sequence_) {
      log_line("referee stream: message " + std::to_string(request.sequence()) + " arrived where " +
               std::to_string(expected_sequence_) + " was due");
    }
    expected_sequence_ = request.sequence() + 1;
    switch (request.message_case()) {
      case v2::PlayRequest::kHandshake:
        answer_handshake(reply->mutable_handshake());
        return true;
      case v2::PlayRequest::kGameStart:
        history_ = GameHistory(request.game_start());
        hook("on_game_start", options_.on_game_start, request.game_start());
        return false;
      case v2::PlayRequest::kDecisionRequest:
        decide(request.decision_request(), reply->mutable_decision());
        return true;
      case v2::PlayRequest::kFaultNotice:
        hook("on_fault", options_.on_fault, request.fault_notice());
        return false;
      case v2::PlayRequest::kGameEnd:
        take_events(request.game_end().events());
        hook("on_game_end", options_.on_game_end, request.game_end());
        return false;
      default:
        log_line("referee stream: a message of an unknown kind; ignored");
        return false;
    }
  }

 private:
  void answer_handshake(v2::HandshakeResponse* response) const {
    response->add_protocol_versions(kProtocolVersion);
    for (v2::Game game : options_.games) response->add_games(game);
    response->set_name(options_.name);
    response->set_version(options_.version);
    response->set_author(options_.author);
  }

  void take_events(const google::protobuf::RepeatedPtrField<v2::Event>& events) {
    for (const v2::Event& event : events) {
      if (!history_.add(event)) log_line("referee stream: " + history_.gaps().back());
      hook("on_event", options_.on_event, event);
    }
  }

  void decide(const v2::DecisionRequest& request, v2::Decision* decision) {
    take_events(request.events());
    decision->set_decision_number(request.decision_number());
    std::vector<v2::Action> legal(request.legal_actions().begin(), request.legal_actions().end());
    std::vector<const v2::Event*> hand_events = history_.hand_events(request.observation().hand_number());
    Turn turn{request, request.observation(), legal, hand_events, history_};
    try {
      v2::Action chosen = decide_(turn);
      if (chosen.kind() == v2::ACTION_KIND_UNSPECIFIED) {
        throw std::invalid_argument("decide returned an action without a kind: return one of turn.legal_actions");
      }
      *decision->mutable_action() = std::move(chosen);
    } catch (...) {
      std::string summary = current_exception_summary();
      log_line("decision " + std::to_string(request.decision_number()) + " of game " + request.game_id() +
               ": decide failed: " + summary);
      decision->set_error(summary);
    }
    if (turn.notes) decision->set_note(cut_note(*turn.notes));  // with an error reply too
  }

  template <typename Message>
  void hook(const char* name, const std::function<void(const Message&)>& function, const Message& message) {
    if (!function) return;
    try {
      function(message);
    } catch (...) {
      log_line(std::string(name) + " failed: " + current_exception_summary());
    }
  }

  const DecideFunction& decide_;
  const BotOptions& options_;
  GameHistory history_;
  uint32_t expected_sequence_ = 1;
};

class BotService final : public v2::BotService::Service {
 public:
  BotService(DecideFunction decide, BotOptions options) : decide_(std::move(decide)), options_(std::move(options)) {}

  grpc::Status Play(grpc::ServerContext*, grpc::ServerReaderWriter<v2::PlayResponse, v2::PlayRequest>* stream) override {
    StreamHandler handler(decide_, options_);
    v2::PlayRequest request;
    while (stream->Read(&request)) {
      v2::PlayResponse reply;
      bool answer;
      {
        std::lock_guard<std::mutex> one_at_a_time(mutex_);  // your functions never run at once
        answer = handler.handle(request, &reply);
      }
      if (answer && !stream->Write(reply)) break;
    }
    return grpc::Status::OK;
  }

 private:
  DecideFunction decide_;
  BotOptions options_;
  std::mutex mutex_;
};

}  // namespace

bool GameHistory::add(const v2::Event& event) {
  uint32_t last = events_.empty() ? 0 : events_.back().sequence();
  events_.push_back(event);
  if (event.sequence() == last + 1) return true;
  gaps_.push_back("game " + game_start_.game_id() + ": event " + std::to_string(event.sequence()) +
                  " arrived where " + std::to_string(last + 1) + " was due");
  return false;
}

std::vector<const v2::Event*> GameHistory::hand_events(uint32_t hand_number) const {
  auto first = events_.end();
  while (first != events_.begin() && std::prev(first)->hand_number() == hand_number) --first;
  std::vector<const v2::Event*> hand;
  for (auto event = first; event != events_.end(); ++event) hand.push_back(&*event);
  return hand;
}

std::vector<const v2::Event*> GameHistory::showdowns() const {
  std::vector<const v2::Event*> found;
  for (const v2::Event& event : events_) {
    if (event.kind() == v2::EVENT_KIND_SHOWDOWN) found.push_back(&event);
  }
  return found;
}

void Turn::note(std::string_view text) const {
  if (!notes) {
    notes.emplace(text);
  } else if (notes->size() <= kNoteBytes) {  // past the cap, a note would be cut off anyway
    *notes += '\n';
    notes->append(text);
  }
}

std::string cut_note(std::string_view text, std::size_t limit) {
  std::string note;
  std::size_t end = 0;  // the length of `note` up to the last character that leaves room for the mark
  bool cut = false;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t length = utf8_length(text.substr(at));
    std::string_view character = length ? text.substr(at, length) : kReplacement;
    at += length ? length : 1;
    if (note.size() + character.size() > limit) {
      cut = true;
      break;
    }
    note += character;
    if (note.size() + kCutMark.size() <= limit) end = note.size();
  }
  if (!cut) return note;
  note.resize(end);
  return note + std::string(limit >= kCutMark.size() ? kCutMark : "");
}

std::string card_text(const v2::Card& card) {
  if (card.rank() < 2 || card.rank() > 14 || card.suit() < v2::SUIT_CLUBS || card.suit() > v2::SUIT_SPADES) return "??";
  return {kRanks[card.rank() - 2], kSuits[card.suit() - v2::SUIT_CLUBS]};
}

v2::Card parse_card(std::string_view text) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper.size() == 3 && upper.compare(0, 2, "10") == 0) upper = "T" + upper.substr(2);
  size_t rank = upper.size() == 2 ? kRanks.find(upper[0]) : std::string_view::npos;
  size_t suit = upper.size() == 2 ? kSuits.find(upper[1]) : std::string_view::npos;
  if (rank == std::string_view::npos || suit == std::string_view::npos) {
    throw std::invalid_argument("\"" + std::string(text) + "\" is not a card: write rank then suit, as in \"QS\", \"TD\", \"2C\"");
  }
  v2::Card card;
  card.set_rank(static_cast<uint32_t>(rank) + 2);
  card.set_suit(static_cast<v2::Suit>(v2::SUIT_CLUBS + suit));
  return card;
}

std::string action_text(const v2::Action& action) {
  std::string text = v2::ActionKind_Name(action.kind()).substr(std::string_view("ACTION_KIND_").size());
  if (action.has_card()) text += " " + card_text(action.card());
  if (action.has_slot()) text += " slot " + std::to_string(action.slot());
  return text;
}

int run_bot(DecideFunction decide, BotOptions options) {
  std::string address = options.address;
  if (address.empty()) {
    const char* variable = std::getenv(kAddressVariable);
    if (variable == nullptr || *variable == '\0') {
      log_line(std::string("no address to listen on: set ") + kAddressVariable +
               " (the referee does), e.g. unix:/tmp/bot.sock");
      return 2;
    }
    address = variable;
  }
  // Block SIGTERM and SIGINT in every thread (gRPC's too, which inherit the mask); this one waits for them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::string name = options.name, version = options.version;
  BotService service(std::move(decide), std::move(options));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());  // "unix:/path" or "127.0.0.1:PORT"
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    log_line("cannot listen on " + address);
    return 1;
  }
  log_line(name + " " + version + " listening on " + address);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  log_line(std::string(signal_number == SIGTERM ? "SIGTERM" : "SIGINT") + ": shutting down");
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));  // then cancels open streams
  server->Wait();
  return 0;
}

}  // namespace referee::kit
