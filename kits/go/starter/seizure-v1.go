// My Seizure bot (seizure-v1). Shed your hand first; points count against you.
// The types come from the game's wire schema (package saloon/games/seizure_v1);
// docs/reference/seizure-v1.md says what each field means. Act returns the index of one
// of the legal actions; the build adds the program's main.
package main

import (
	"saloon"
	game "saloon/games/seizure_v1"
)

// playScore is how much to play a card now: a number card first (the higher the better,
// a 10 last of them: it makes you give cards away), one matching the reference's colours
// far first; a special card only when nothing else goes.
func playScore(card game.Card, ref *game.Card) int {
	if card.Kind != game.CardKindNumber || card.Number == nil {
		return 0
	}
	score := 100 + *card.Number
	if *card.Number == 10 {
		score = 10
	}
	if ref != nil && len(ref.Colours) == 2 && len(card.Colours) == 2 &&
		ref.Colours[0] == card.Colours[0] && ref.Colours[1] == card.Colours[1] {
		score += 1000
	}
	return score
}

// giveScore is how much to be rid of a card: +3 first, then the other special cards, the
// low numbers, and -3 last (it lowers your points).
func giveScore(card game.Card) int {
	switch {
	case card.Kind == game.CardKindPlusThree:
		return 400
	case card.Kind == game.CardKindMinusThree:
		return 0
	case card.Kind != game.CardKindNumber || card.Number == nil:
		return 300
	case *card.Number == 10:
		return 189
	}
	return 200 - *card.Number
}

// most is the index of the largest of n values.
func most(n int, value func(i int) int) int {
	best := 0
	for i := 1; i < n; i++ {
		if value(i) > value(best) {
			best = i
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func Act(raw saloon.Decision) int {
	d := game.View(raw)
	switch d.Kind {
	case game.KindPlayCard:
		legal := d.LegalPlayCard()
		ref := d.Observation.Reference
		return most(len(legal), func(i int) int { return playScore(legal[i].Card, ref) })
	case game.KindGiveCard:
		legal := d.LegalGiveCard()
		return most(len(legal), func(i int) int { return giveScore(legal[i].Card) })
	case game.KindDealSize:
		// Small deals: fewer cards to shed.
		legal := d.LegalDealSize()
		return most(len(legal), func(i int) int { return -abs(legal[i].HandSize - 7) })
	case game.KindGiveTo:
		// The seat holding the fewest cards.
		legal := d.LegalGiveTo()
		return most(len(legal), func(i int) int { return -d.Observation.HandSizes[legal[i].Seat] })
	case game.KindTradePartner:
		legal := d.LegalTradePartner()
		return most(len(legal), func(i int) int { return -d.Observation.HandSizes[legal[i].Seat] })
	}
	return 0
}
