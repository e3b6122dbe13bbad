// My Seas of Strife bot (seas-of-strife-v1). Points are bad: avoid winning tricks.
// The types come from the game's wire schema (package saloon/games/seas_of_strife_v1);
// docs/reference/seas-of-strife-v1.md says what each field means. Act returns the index
// of one of the legal actions; the build adds the program's main.
package main

import (
	"saloon"
	game "saloon/games/seas_of_strife_v1"
)

func Act(raw saloon.Decision) int {
	d := game.View(raw)
	switch d.Kind {
	case game.KindPlayCard:
		// Shed the lowest card this trick allows: low cards rarely win a trick.
		legal := d.LegalPlayCard()
		best := 0
		for i, a := range legal {
			if a.Card < legal[best].Card {
				best = i
			}
		}
		return best
	case game.KindChooseLeader:
		// Let the next seat lead.
		next := (d.Observation.Seat + 1) % d.Observation.NumPlayers
		for i, a := range d.LegalChooseLeader() {
			if a.Seat == next {
				return i
			}
		}
	}
	return 0
}
