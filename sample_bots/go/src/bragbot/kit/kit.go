// Package kit is the Go bot kit for the Brag referee: write one function from a turn to an action,
// and play.
//
//	func decide(turn *kit.Turn) (*pb.Action, error) { return turn.LegalActions[0], nil }
//	func main() { os.Exit(kit.Run(decide, kit.Options{Name: "first-legal"})) }
//
// The kit serves protocol v2 (proto/referee/v2/bot.proto; the build generates the package
// referee/v2 from the copy in this bot's folder) on the address in REFEREE_BOT_ADDRESS: it
// answers the handshake, keeps each game's public history from the stream (checking sequence
// numbers), calls decide for each decision_request and the optional hooks for everything else, one
// message at a time and in order. If decide returns an error or panics, the kit writes it to stderr
// (your log; a panic with its stack) and answers with Decision.error, the one-line summary: the
// referee records a malformed-reply fault quoting it. SIGTERM or SIGINT stops the bot with status 0.
//
// Notes: decide may call turn.Note(text) (or turn.Notef) any number of times; the texts, joined by
// "\n", go with that decision's reply as Decision.note, a private note kept beside the decision in
// your replay (see NoteBytes for the cap).
package kit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	pb "referee/v2"

	"google.golang.org/grpc"
)

// ProtocolVersion is the version of the bot protocol this kit speaks.
const ProtocolVersion = 2

// AddressVariable names the environment variable holding the address to listen on.
const AddressVariable = "REFEREE_BOT_ADDRESS"

// GameHistory is one game's public history as the stream delivered it: every event in order,
// checked for gaps.
type GameHistory struct {
	GameStart *pb.GameStart // seat, players, seed, limits (nil before a game starts)
	Events    []*pb.Event   // every event so far, sequence 1, 2, 3 ...
	Gaps      []string      // one line per gap in the sequence numbers (there should be none)
}

// Add takes the next event; it returns false (and records the gap) unless the event is numbered one
// past the last.
func (h *GameHistory) Add(event *pb.Event) bool {
	last := uint32(0)
	if len(h.Events) > 0 {
		last = h.Events[len(h.Events)-1].GetSequence()
	}
	h.Events = append(h.Events, event)
	if event.GetSequence() == last+1 {
		return true
	}
	h.Gaps = append(h.Gaps, fmt.Sprintf("game %s: event %d arrived where %d was due",
		h.GameStart.GetGameId(), event.GetSequence(), last+1))
	return false
}

// HandEvents returns the events of hand handNumber (the current hand), oldest first.
func (h *GameHistory) HandEvents(handNumber uint32) []*pb.Event {
	first := len(h.Events)
	for first > 0 && h.Events[first-1].GetHandNumber() == handNumber {
		first--
	}
	return h.Events[first:]
}

// Showdowns returns every showdown event so far; each one's Showdown holds the revealed hands.
func (h *GameHistory) Showdowns() []*pb.Event {
	var found []*pb.Event
	for _, event := range h.Events {
		if event.GetKind() == pb.EventKind_EVENT_KIND_SHOWDOWN {
			found = append(found, event)
		}
	}
	return found
}

// Turn is what decide gets for one decision_request.
type Turn struct {
	Request      *pb.DecisionRequest // DecisionNumber, MoveTimeMs, TimeBankMs, LastChargedMs, ...
	Observation  *pb.Observation     // exactly what your seat may know
	LegalActions []*pb.Action        // return one of these
	HandEvents   []*pb.Event         // the current hand's public events, oldest first
	History      *GameHistory        // the whole game's, and its GameStart

	notes string // the note so far: the texts of Note, joined by "\n"
	noted bool   // whether Note was called
}

// NoteBytes is the most of one note the referee keeps, in bytes of UTF-8. A decision's note
// (Decision.note) is for its author's eyes: what the bot believed, why it chose. The referee keeps the
// first NoteBytes bytes of each note (cut at a character, marked " [cut]") and the first 65536 bytes
// of a bot's notes in a game; its caps are the authority. The kit cuts a note the same way before
// sending it, so it never sends more than the referee keeps.
const NoteBytes = 1024

const cutMark = " [cut]"

// Note adds a line to this decision's private note: turn.Note("discard 7H: keeps the pair of kings").
// Any number of calls; the texts, joined by "\n", go with the reply (an error reply too), cut to
// NoteBytes. A decision without a call sends no note.
func (t *Turn) Note(text string) {
	switch {
	case !t.noted:
		t.notes, t.noted = text, true
	case len(t.notes) <= NoteBytes: // past the cap, a note would be cut off anyway
		t.notes += "\n" + text
	}
}

// Notef adds a line to this decision's note, formatted as by fmt.Sprintf.
func (t *Turn) Notef(format string, args ...interface{}) {
	t.Note(fmt.Sprintf(format, args...))
}

// CutNote returns text as it goes out as a note: valid UTF-8 (a malformed byte becomes U+FFFD) of at
// most limit bytes; a longer text is cut at a character and ends " [cut]" (within the limit).
func CutNote(text string, limit int) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) <= limit {
		return text
	}
	end := limit - len(cutMark)
	if end < 0 {
		return ""
	}
	for end > 0 && !utf8.RuneStart(text[end]) { // not inside a character
		end--
	}
	return text[:end] + cutMark
}

// DecideFunc chooses an action for a turn.
type DecideFunc func(turn *Turn) (*pb.Action, error)

// Options name the bot and hold its optional hooks. OnEvent sees every public event once, in order
// (a SHOWDOWN's Showdown holds the revealed hands), before the decide or OnGameEnd of the message
// that carried it.
type Options struct {
	Name        string    // required: shown in logs
	Version     string    // default "1.0"
	Author      string    //
	Games       []pb.Game // default: both games
	Address     string    // default: $REFEREE_BOT_ADDRESS
	OnGameStart func(*pb.GameStart)
	OnEvent     func(*pb.Event)
	OnFault     func(*pb.FaultNotice)
	OnGameEnd   func(*pb.GameEnd)
}

func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// streamHandler serves one referee stream.
type streamHandler struct {
	decide           DecideFunc
	options          *Options
	history          *GameHistory
	expectedSequence uint32
}

// handle returns the reply to one PlayRequest, or nil when it needs none.
func (s *streamHandler) handle(request *pb.PlayRequest) *pb.PlayResponse {
	if request.GetSequence() != s.expectedSequence {
		logf("referee stream: message %d arrived where %d was due", request.GetSequence(), s.expectedSequence)
	}
	s.expectedSequence = request.GetSequence() + 1
	switch message := request.GetMessage().(type) {
	case *pb.PlayRequest_Handshake:
		return &pb.PlayResponse{Message: &pb.PlayResponse_Handshake{Handshake: &pb.HandshakeResponse{
			ProtocolVersions: []uint32{ProtocolVersion},
			Games:            s.options.Games,
			Name:             s.options.Name,
			Version:          s.options.Version,
			Author:           s.options.Author,
		}}}
	case *pb.PlayRequest_GameStart:
		s.history = &GameHistory{GameStart: message.GameStart}
		callHook("OnGameStart", s.options.OnGameStart, message.GameStart)
	case *pb.PlayRequest_DecisionRequest:
		return &pb.PlayResponse{Message: &pb.PlayResponse_Decision{Decision: s.decision(message.DecisionRequest)}}
	case *pb.PlayRequest_FaultNotice:
		callHook("OnFault", s.options.OnFault, message.FaultNotice)
	case *pb.PlayRequest_GameEnd:
		s.takeEvents(message.GameEnd.GetEvents())
		callHook("OnGameEnd", s.options.OnGameEnd, message.GameEnd)
	default:
		logf("referee stream: a message of an unknown kind; ignored")
	}
	return nil
}

func (s *streamHandler) takeEvents(events []*pb.Event) {
	for _, event := range events {
		if !s.history.Add(event) {
			logf("referee stream: %s", s.history.Gaps[len(s.history.Gaps)-1])
		}
		callHook("OnEvent", s.options.OnEvent, event)
	}
}

func (s *streamHandler) decision(request *pb.DecisionRequest) *pb.Decision {
	s.takeEvents(request.GetEvents())
	decision := &pb.Decision{DecisionNumber: request.GetDecisionNumber()}
	turn := &Turn{
		Request:      request,
		Observation:  request.GetObservation(),
		LegalActions: request.GetLegalActions(),
		HandEvents:   s.history.HandEvents(request.GetObservation().GetHandNumber()),
		History:      s.history,
	}
	action, err := s.callDecide(turn)
	if turn.noted { // with an error reply too
		decision.Note = CutNote(turn.notes, NoteBytes)
	}
	if err == nil && action.GetKind() == pb.ActionKind_ACTION_KIND_UNSPECIFIED {
		err = errors.New("decide returned an action without a kind: return one of turn.LegalActions")
	}
	if err != nil {
		summary := strings.SplitN(err.Error(), "\n", 2)[0]
		logf("decision %d of game %s: decide failed: %v", request.GetDecisionNumber(), request.GetGameId(), err)
		decision.Error = summary
		return decision
	}
	decision.Action = action
	return decision
}

// callDecide calls decide, turning a panic into an error (its stack goes to the log).
func (s *streamHandler) callDecide(turn *Turn) (action *pb.Action, err error) {
	defer func() {
		if value := recover(); value != nil {
			err = fmt.Errorf("panic: %v\n%s", value, debug.Stack())
		}
	}()
	return s.decide(turn)
}

func callHook[M any](name string, hook func(M), message M) {
	if hook == nil {
		return
	}
	defer func() {
		if value := recover(); value != nil {
			logf("%s failed: panic: %v\n%s", name, value, debug.Stack())
		}
	}()
	hook(message)
}

type botServer struct {
	pb.UnimplementedBotServiceServer
	decide  DecideFunc
	options Options
	mutex   sync.Mutex // your functions never run at once
}

func (b *botServer) Play(stream pb.BotService_PlayServer) error {
	handler := &streamHandler{decide: b.decide, options: &b.options, history: &GameHistory{}, expectedSequence: 1}
	for {
		request, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		b.mutex.Lock()
		reply := handler.handle(request)
		b.mutex.Unlock()
		if reply != nil {
			if err := stream.Send(reply); err != nil {
				return err
			}
		}
	}
}

// Listen opens a listener for a gRPC address as the referee gives it: "unix:/path/bot.sock" (Go's
// net.Listen wants the path without the "unix:" prefix) or "127.0.0.1:PORT".
func Listen(address string) (net.Listener, error) {
	switch {
	case strings.HasPrefix(address, "unix://"):
		return net.Listen("unix", strings.TrimPrefix(address, "unix://"))
	case strings.HasPrefix(address, "unix:"):
		return net.Listen("unix", strings.TrimPrefix(address, "unix:"))
	}
	return net.Listen("tcp", address)
}

// Run serves decide until SIGTERM or SIGINT and returns the exit status: 0, or 1 if it cannot listen,
// 2 without an address. Call it as os.Exit(kit.Run(decide, options)).
func Run(decide DecideFunc, options Options) int {
	if options.Version == "" {
		options.Version = "1.0"
	}
	if len(options.Games) == 0 {
		options.Games = []pb.Game{pb.Game_GAME_STOP_THE_BUS, pb.Game_GAME_BASTARD_BRAG}
	}
	address := options.Address
	if address == "" {
		address = os.Getenv(AddressVariable)
	}
	if address == "" {
		logf("no address to listen on: set %s (the referee does), e.g. unix:/tmp/bot.sock", AddressVariable)
		return 2
	}
	listener, err := Listen(address)
	if err != nil {
		logf("cannot listen on %s: %v", address, err)
		return 1
	}
	server := grpc.NewServer()
	pb.RegisterBotServiceServer(server, &botServer{decide: decide, options: options})
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		received := <-stop
		logf("%v: shutting down", received)
		time.AfterFunc(500*time.Millisecond, server.Stop) // then close the streams still open
		server.GracefulStop()
	}()
	logf("%s %s listening on %s", options.Name, options.Version, address)
	if err := server.Serve(listener); err != nil {
		logf("serving on %s: %v", address, err)
		return 1
	}
	return 0
}

// The card text form, the same everywhere: rank then suit letter, "QS", "TD", "2C", "AH".
const (
	rankChars = "23456789TJQKA"
	suitChars = "CDHS"
)

// CardText returns "QS" for the queen of spades.
func CardText(card *pb.Card) string {
	rank, suit := int(card.GetRank())-2, int(card.GetSuit())-int(pb.Suit_SUIT_CLUBS)
	if rank < 0 || rank >= len(rankChars) || suit < 0 || suit >= len(suitChars) {
		return "??"
	}
	return string(rankChars[rank]) + string(suitChars[suit])
}

// ParseCard returns the card for "QS" (any case; "10S" too).
func ParseCard(text string) (*pb.Card, error) {
	upper := strings.ToUpper(strings.TrimSpace(text))
	if len(upper) == 3 && strings.HasPrefix(upper, "10") {
		upper = "T" + upper[2:]
	}
	if len(upper) == 2 {
		rank, suit := strings.IndexByte(rankChars, upper[0]), strings.IndexByte(suitChars, upper[1])
		if rank >= 0 && suit >= 0 {
			return &pb.Card{Rank: uint32(rank + 2), Suit: pb.Suit(int(pb.Suit_SUIT_CLUBS) + suit)}, nil
		}
	}
	return nil, fmt.Errorf("%q is not a card: write rank then suit, as in \"QS\", \"TD\", \"2C\"", text)
}

// ActionText returns a short text for an action, for logs: "DISCARD QS", "EXCHANGE 2C slot 1".
func ActionText(action *pb.Action) string {
	text := strings.TrimPrefix(action.GetKind().String(), "ACTION_KIND_")
	if action.Card != nil {
		text += " " + CardText(action.Card)
	}
	if action.Slot != nil {
		text += fmt.Sprintf(" slot %d", action.GetSlot())
	}
	return text
}
