// My Seas of Strife bot (seas-of-strife-v1). Points are bad: avoid winning tricks.
// The types come from the game's wire schema (package saloon/games/seas_of_strife_v1);
// docs/reference/seas-of-strife-v1.md says what each field means. Act returns the index
// of one of the legal actions; the build adds the program's main.
package main

import (
	"saloon"
	game "saloon/games/seas_of_strife_v1"
)

// colour of a card number: black 0-10, red 11-20, then one colour per ten (21-29, ...).
func colour(card int) int {
	switch {
	case card <= 10:
		return 0
	case card <= 20:
		return 1
	}
	return card / 10
}

// winner is the card that takes a trick: the highest card of the colours with the most
// cards in it (docs/rules/seas-of-strife.md).
func winner(trick []int) int {
	counts := map[int]int{}
	most := 0
	for _, c := range trick {
		counts[colour(c)]++
		if counts[colour(c)] > most {
			most = counts[colour(c)]
		}
	}
	best := -1
	for _, c := range trick {
		if counts[colour(c)] == most && c > best {
			best = c
		}
	}
	return best
}

func Act(raw saloon.Decision) int {
	d := game.View(raw)
	switch d.Kind {
	case game.KindPlayCard:
		legal := d.LegalPlayCard()
		trick := []int{}
		for _, p := range d.Observation.Trick {
			trick = append(trick, p.Card)
		}
		// Following: the highest card that does not take the trick as it stands (shed a
		// dangerous card safely); leading, or when every card takes it: the lowest.
		best, safe := 0, false
		for i, a := range legal {
			loses := len(trick) > 0 && winner(append(append([]int{}, trick...), a.Card)) != a.Card
			switch {
			case loses && (!safe || a.Card > legal[best].Card):
				best, safe = i, true
			case !safe && a.Card < legal[best].Card:
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
