// A Go bot for the Brag referee: plays Stop the Bus and Bastard Brag, on the Go bot kit.
//
// Strategy (the same as the Node.js and C++ sample bots): every three-card hand gets a strength, the
// fraction of the 22,100 possible hands it beats. The bot keeps the strongest hand it can reach (the
// mean strength when a card is unknown), and stops or knocks once its hand is unlikely to be the
// single worst at the table. Each decision carries a one-line note of what it chose and why
// (turn.Note): the author reads it in the replay.
package main

import (
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"sort"
	"strings"

	"bragbot/kit"
	pb "referee/v2"
)

// ----- cards and hands -------------------------------------------------------------------------
// A card is an id 0..51: (rank - 2) * 4 + suit, suits clubs 0 < diamonds 1 < hearts 2 < spades 3,
// so ids sort by rank, then suit, like the referee's canonical deck.

const (
	ace = 14
	a23 = 15 // the run A-2-3 and the prial 3-3-3 rank above every ordinary rank
)

func cardID(card *pb.Card) int {
	return (int(card.GetRank())-2)*4 + int(card.GetSuit()-pb.Suit_SUIT_CLUBS)
}

func rankOf(id int) int { return id>>2 + 2 }

// handScore is a number that orders three-card Brag hands: category, then the ranks that decide
// within it, then the suit of the highest card (exact ties).
func handScore(x, y, z int) int {
	ids := []int{x, y, z}
	sort.Sort(sort.Reverse(sort.IntSlice(ids)))
	a, b, c := ids[0], ids[1], ids[2]
	r1, r2, r3 := rankOf(a), rankOf(b), rankOf(c)
	flush := a%4 == b%4 && b%4 == c%4
	var category int
	values := [3]int{}
	switch {
	case r1 == r2 && r2 == r3:
		category = 5 // prial
		values[0] = r1
		if r1 == 3 {
			values[0] = a23
		}
	case (r1 == ace && r2 == 3 && r3 == 2) || (r1 == r2+1 && r2 == r3+1):
		category = 3 // run
		if flush {
			category = 4 // running flush
		}
		values[0] = r1
		if r1 == ace && r2 == 3 {
			values[0] = a23
		}
	case flush:
		category = 2
		values = [3]int{r1, r2, r3}
	case r1 == r2:
		category = 1 // pair, then kicker
		values = [3]int{r1, r3, 0}
	case r2 == r3:
		category = 1
		values = [3]int{r2, r1, 0}
	default:
		category = 0 // high card
		values = [3]int{r1, r2, r3}
	}
	return (((category*16+values[0])*16+values[1])*16+values[2])*4 + a%4
}

// idText is "KS" for a card id, and handText "KS KH 4C" for a hand of them, as the notes write cards.
func idText(id int) string {
	return string("23456789TJQKA"[rankOf(id)-2]) + string("CDHS"[id%4])
}

func handText(ids []int) string {
	texts := make([]string, len(ids))
	for i, id := range ids {
		texts[i] = idText(id)
	}
	return strings.Join(texts, " ")
}

func handKey(x, y, z int) int { return x*2704 + y*52 + z }

// strengths[handKey(...)] for any order of the three ids: the fraction of all hands this one beats.
var strengths = func() []float64 {
	type hand struct{ score, a, b, c int }
	var hands []hand
	for a := 0; a < 52; a++ {
		for b := a + 1; b < 52; b++ {
			for c := b + 1; c < 52; c++ {
				hands = append(hands, hand{handScore(a, b, c), a, b, c})
			}
		}
	}
	sort.Slice(hands, func(i, j int) bool { return hands[i].score < hands[j].score })
	table := make([]float64, 52*52*52)
	for position, h := range hands {
		s := float64(position) / float64(len(hands))
		for _, order := range [][3]int{{h.a, h.b, h.c}, {h.a, h.c, h.b}, {h.b, h.a, h.c}, {h.b, h.c, h.a}, {h.c, h.a, h.b}, {h.c, h.b, h.a}} {
			table[handKey(order[0], order[1], order[2])] = s
		}
	}
	return table
}()

func strength(a, b, c int) float64 { return strengths[handKey(a, b, c)] }

// bestWith is the strength of the best three of hand plus extra (keeping extra if mustKeep).
func bestWith(hand []int, extra int, mustKeep bool) float64 {
	a, b, c := hand[0], hand[1], hand[2]
	best := math.Max(strength(a, b, extra), math.Max(strength(a, extra, c), strength(extra, b, c)))
	if mustKeep {
		return best
	}
	return math.Max(best, strength(a, b, c))
}

func mean(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

func idsOf(cards []*pb.Card) []int {
	ids := make([]int, len(cards))
	for i, card := range cards {
		ids[i] = cardID(card)
	}
	return ids
}

func without(ids []int, gone int) []int {
	var kept []int
	for _, id := range ids {
		if id != gone {
			kept = append(kept, id)
		}
	}
	return kept
}

func unknownCards(known map[int]bool) []int {
	var unknown []int
	for id := 0; id < 52; id++ {
		if !known[id] {
			unknown = append(unknown, id)
		}
	}
	return unknown
}

// ----- when to end a hand ----------------------------------------------------------------------

// loseChance is the chance that every opponent beats strength s when each holds about the best of
// power random hands.
func loseChance(s float64, opponents int, power float64) float64 {
	return math.Pow(1-math.Pow(s, power), float64(opponents))
}

func playersInHand(obs *pb.Observation) int {
	players := 0
	for _, seat := range obs.GetSeats() {
		if seat.GetInHand() {
			players++
		}
	}
	return players
}

// shouldEnd: stop or knock when the chance of holding the single worst hand, after every opponent's
// final turn, is below half the fair share 1 / players. Opponents improve as the hand goes on; and
// the longer the hand, the more risk is accepted, so that hands end.
func shouldEnd(obs *pb.Observation, s float64) bool {
	players := playersInHand(obs)
	rounds := float64(obs.GetTurnsThisHand()) / float64(players)
	power := 2 + 2*math.Min(rounds, 3)
	target := (0.5 / float64(players)) * (1 + 0.25*math.Max(0, rounds-3))
	return loseChance(s, players-1, power) <= target
}

func find(legal []*pb.Action, kind pb.ActionKind) *pb.Action {
	for _, action := range legal {
		if action.GetKind() == kind {
			return action
		}
	}
	return nil
}

// ----- Stop the Bus ------------------------------------------------------------------------------

// stopTheBusSeen returns the cards that cannot be in the stock: the discard pile and cards
// opponents took from it.
func stopTheBusSeen(events []*pb.Event, seat uint32) map[int]bool {
	var pile []int
	takenByOthers := map[int]bool{}
	for _, event := range events {
		switch event.GetKind() {
		case pb.EventKind_EVENT_KIND_DEAL:
			pile = []int{cardID(event.GetCard())}
			takenByOthers = map[int]bool{}
		case pb.EventKind_EVENT_KIND_DISCARD:
			pile = append(pile, cardID(event.GetCard()))
			delete(takenByOthers, cardID(event.GetCard()))
		case pb.EventKind_EVENT_KIND_TAKE:
			if len(pile) > 0 {
				pile = pile[:len(pile)-1]
			}
			if event.GetSeat() != seat {
				takenByOthers[cardID(event.GetCard())] = true
			}
		case pb.EventKind_EVENT_KIND_RECYCLE:
			if len(pile) > 1 {
				pile = pile[len(pile)-1:]
			}
		}
	}
	seen := takenByOthers
	for _, id := range pile {
		seen[id] = true
	}
	return seen
}

func decideStopTheBus(turn *kit.Turn) (*pb.Action, error) {
	obs := turn.Observation
	view := obs.GetStopTheBus()
	hand := idsOf(obs.GetHand())
	if view.GetDrawnCard() != nil {
		// Discard the card whose loss leaves the strongest three (the referee lists only legal discards).
		var best *pb.Action
		bestScore := -1.0
		for _, action := range turn.LegalActions {
			kept := without(hand, cardID(action.GetCard()))
			if score := strength(kept[0], kept[1], kept[2]); score > bestScore {
				best, bestScore = action, score
			}
		}
		if best == nil {
			return nil, errors.New("no discard among the legal actions")
		}
		gone := cardID(best.GetCard())
		turn.Notef("discard %s: keeps %s, strength %.2f", idText(gone), handText(without(hand, gone)), bestScore)
		return best, nil
	}
	now := strength(hand[0], hand[1], hand[2])
	if stop := find(turn.LegalActions, pb.ActionKind_ACTION_KIND_STOP); stop != nil && shouldEnd(obs, now) {
		turn.Notef("stop: %s, strength %.2f, is unlikely to be the worst at the table", handText(hand), now)
		return stop, nil
	}
	top := cardID(view.GetDiscardTop())
	seen := stopTheBusSeen(turn.HandEvents, obs.GetSeat())
	seen[top] = true
	for _, id := range hand {
		seen[id] = true
	}
	var draws []float64
	for _, id := range unknownCards(seen) {
		draws = append(draws, bestWith(hand, id, false))
	}
	takeValue := bestWith(hand, top, true)
	values := fmt.Sprintf("take %.2f, draw %.2f (mean), hold %.2f", takeValue, mean(draws), now)
	if take := find(turn.LegalActions, pb.ActionKind_ACTION_KIND_TAKE); take != nil && takeValue > now && takeValue >= mean(draws) {
		turn.Notef("take %s: %s", idText(top), values)
		return take, nil
	}
	if draw := find(turn.LegalActions, pb.ActionKind_ACTION_KIND_DRAW); draw != nil {
		turn.Notef("draw: %s", values)
		return draw, nil // never worse than passing: the drawn card may be discarded
	}
	return nil, errors.New("no draw among the legal actions")
}

// ----- Bastard Brag -------------------------------------------------------------------------------

func decideBastardBrag(turn *kit.Turn) (*pb.Action, error) {
	obs := turn.Observation
	hand := idsOf(obs.GetHand())
	centre := [3]int{-1, -1, -1}
	for _, slot := range obs.GetBastardBrag().GetCentre() {
		if slot.GetCard() != nil && slot.GetSlot() < 3 {
			centre[slot.GetSlot()] = cardID(slot.GetCard())
		}
	}
	known := map[int]bool{}
	for _, id := range hand {
		known[id] = true
	}
	for _, id := range centre {
		if id >= 0 {
			known[id] = true
		}
	}
	unknown := unknownCards(known)

	slotValue := func(kept []int, slot uint32) float64 {
		if centre[slot] >= 0 {
			return strength(kept[0], kept[1], centre[slot])
		}
		var values []float64
		for _, id := range unknown {
			values = append(values, strength(kept[0], kept[1], id))
		}
		return mean(values)
	}
	wholeCentreValue := func() float64 {
		var visible []int
		for _, id := range centre {
			if id >= 0 {
				visible = append(visible, id)
			}
		}
		var values []float64
		switch len(visible) {
		case 3:
			return strength(visible[0], visible[1], visible[2])
		case 2:
			for _, id := range unknown {
				values = append(values, strength(visible[0], visible[1], id))
			}
		default:
			for i := range unknown {
				for j := i + 1; j < len(unknown); j++ {
					values = append(values, strength(visible[0], unknown[i], unknown[j]))
				}
			}
		}
		return mean(values)
	}

	var best, knock *pb.Action
	bestScore, wholeCentre := -1.0, -1.0
	for _, action := range turn.LegalActions {
		var score float64
		switch action.GetKind() {
		case pb.ActionKind_ACTION_KIND_EXCHANGE:
			score = slotValue(without(hand, cardID(action.GetCard())), action.GetSlot())
		case pb.ActionKind_ACTION_KIND_EXCHANGE_ALL:
			if wholeCentre < 0 {
				wholeCentre = wholeCentreValue()
			}
			score = wholeCentre - 0.0001*float64(action.GetCard().GetRank()) // lay the lowest card face up
		case pb.ActionKind_ACTION_KIND_KNOCK:
			knock = action
			continue
		default:
			continue
		}
		if score > bestScore {
			best, bestScore = action, score
		}
	}
	now := strength(hand[0], hand[1], hand[2])
	players := playersInHand(obs)
	// Knock on a strong hand, or when any exchange would only spoil a hand that is not among the worst.
	if knock != nil && shouldEnd(obs, now) {
		turn.Notef("knock: %s, strength %.2f, is unlikely to be the worst at the table", handText(hand), now)
		return knock, nil
	}
	if knock != nil && bestScore < now && loseChance(now, players-1, 4) <= 1/float64(players) {
		turn.Notef("knock: %s, strength %.2f; the best exchange would make %.2f", handText(hand), now, bestScore)
		return knock, nil
	}
	if best == nil {
		return nil, errors.New("no exchange among the legal actions")
	}
	card := idText(cardID(best.GetCard()))
	exchange := fmt.Sprintf("exchange %s for slot %d", card, best.GetSlot())
	if best.GetKind() == pb.ActionKind_ACTION_KIND_EXCHANGE_ALL {
		exchange = fmt.Sprintf("exchange all, %s face up", card)
	}
	turn.Notef("%s: expects strength %.2f, holding %.2f", exchange, bestScore, now)
	return best, nil
}

// clockLogEvery: the clock is in the log once every clockLogEvery decisions (the first included).
const clockLogEvery = 20

var decisionsMade = 0

// logClock logs the time left for this move and in the bank, and what the referee charged the previous
// decision.
func logClock(request *pb.DecisionRequest) {
	decisionsMade++
	if decisionsMade%clockLogEvery != 1 {
		return
	}
	log.Printf("clock: decision %d: move %d ms, bank %d ms left; the previous decision was charged %d ms",
		request.GetDecisionNumber(), request.GetMoveTimeMs(), request.GetTimeBankMs(), request.GetLastChargedMs())
}

func decide(turn *kit.Turn) (*pb.Action, error) {
	logClock(turn.Request)
	if turn.Observation.GetStopTheBus() != nil {
		return decideStopTheBus(turn)
	}
	return decideBastardBrag(turn)
}

func main() {
	os.Exit(kit.Run(decide, kit.Options{Name: "go-heuristic", Version: "2.0.0", Author: "sample"}))
}
