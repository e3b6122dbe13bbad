// My Western Legends: Showdown bot (western-showdown-v1).
// The types come from the game's wire schema (package saloon/games/western_showdown_v1);
// docs/reference/western-showdown-v1.md says what each field means. Act returns the index
// of one of the legal actions; the build adds the program's main.
package main

import (
	"saloon"
	game "saloon/games/western_showdown_v1"
)

// topValue is the value of the card on top of a location's stack (0 when it is empty).
func topValue(obs game.Observation, location int) int {
	for _, l := range obs.Locations {
		if l.Id == location && len(l.Stack) > 0 {
			return l.Stack[len(l.Stack)-1].Value
		}
	}
	return 0
}

// place scores placing card at location: a card that tops the stack (its ability fires)
// first, the cheapest such card; else the cheapest card (keep the strong ones). Passing
// scores lowest.
func place(obs game.Observation, card, location *int) int {
	if card == nil || location == nil {
		return -100
	}
	value := 0
	for _, c := range obs.Hand {
		if c.Id == *card {
			value = c.Value
		}
	}
	if value > topValue(obs, *location) {
		return 50 - value
	}
	return 10 - value
}

func best(n int, score func(i int) int) int {
	top := 0
	for i := 1; i < n; i++ {
		if score(i) > score(top) {
			top = i
		}
	}
	return top
}

func Act(raw saloon.Decision) int {
	d := game.View(raw)
	obs := d.Observation
	switch d.Kind {
	case game.KindTurn:
		legal := d.LegalTurn()
		return best(len(legal), func(i int) int { return place(obs, legal[i].Card, legal[i].Location) })
	case game.KindDeterminationExtra:
		legal := d.LegalDeterminationExtra()
		return best(len(legal), func(i int) int { return place(obs, legal[i].Card, legal[i].Location) })
	case game.KindMulligan:
		for i, a := range d.LegalMulligan() {
			if a.Done != nil && *a.Done {
				return i
			}
		}
	case game.KindActivate:
		for i, a := range d.LegalActivate() {
			if a.Yes {
				return i
			}
		}
	case game.KindWallopSecond:
		for i, a := range d.LegalWallopSecond() {
			if a.Yes {
				return i
			}
		}
	}
	return 0
}
