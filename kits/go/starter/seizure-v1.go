// My Seizure bot (seizure-v1). Shed your hand first; points count against you.
// The types come from the game's wire schema (package saloon/games/seizure_v1);
// docs/reference/seizure-v1.md says what each field means. Act returns the index of one
// of the legal actions; the build adds the program's main.
package main

import (
	"saloon"
	game "saloon/games/seizure_v1"
)

// cost is what a card costs in hand: a number card its number, a special card the most.
func cost(card game.Card) int {
	if card.Number == nil {
		return 11
	}
	return *card.Number
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

func Act(raw saloon.Decision) int {
	d := game.View(raw)
	switch d.Kind {
	case game.KindPlayCard:
		legal := d.LegalPlayCard()
		return most(len(legal), func(i int) int { return cost(legal[i].Card) })
	case game.KindGiveCard:
		legal := d.LegalGiveCard()
		return most(len(legal), func(i int) int { return cost(legal[i].Card) })
	case game.KindDealSize:
		legal := d.LegalDealSize()
		return most(len(legal), func(i int) int { return -legal[i].HandSize })
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
