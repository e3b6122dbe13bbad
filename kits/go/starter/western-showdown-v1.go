// My Western Legends: Showdown bot (western-showdown-v1).
// The types come from the game's wire schema (package saloon/games/western_showdown_v1);
// docs/reference/western-showdown-v1.md says what each field means. Act returns the index
// of one of the legal actions; the build adds the program's main.
package main

import (
	"saloon"
	game "saloon/games/western_showdown_v1"
)

// card is what a condition reads of a card: its colour and value.
type card struct {
	colour game.Colour
	value  int
}

// met says whether a stack (bottom first) meets location's condition: then the player
// who placed the last card wins the whole stack (docs/rules/western-showdown.md).
func met(location int, stack []card) bool {
	count := func(keep func(c card) bool) int {
		n := 0
		for _, c := range stack {
			if keep(c) {
				n++
			}
		}
		return n
	}
	sum := 0
	for _, c := range stack {
		sum += c.value
	}
	has := func(v int) bool { return count(func(c card) bool { return c.value == v }) > 0 }
	switch location {
	case 0: // Saloon: three 1s
		return count(func(c card) bool { return c.value == 1 }) >= 3
	case 1: // Sheriff's Office: two red and two black
		return count(func(c card) bool { return c.colour == game.ColourRed }) >= 2 &&
			count(func(c card) bool { return c.colour == game.ColourBlack }) >= 2
	case 2: // Doctor's Office: four different values
		values := map[int]bool{}
		for _, c := range stack {
			values[c.value] = true
		}
		return len(values) >= 4
	case 3: // Mine: three of one colour next to each other
		for i := 2; i < len(stack); i++ {
			if stack[i].colour == stack[i-1].colour && stack[i].colour == stack[i-2].colour {
				return true
			}
		}
		return false
	case 4: // Ranch: a sum of 12 or more
		return sum >= 12
	case 5: // Cabaret: a 1, a 5 and a 6
		return has(1) && has(5) && has(6)
	case 6: // Bandit Hideout: four cards or more summing to 10 or less
		return len(stack) >= 4 && sum <= 10
	}
	return false
}

// place scores placing a card from hand at a location: a placement that wins the stack
// first (the bigger the better); else the cheapest card, one that tops the stack (its
// ability fires) before one that does not. Passing scores lowest.
func place(obs game.Observation, id, location *int) int {
	if id == nil || location == nil {
		return -100
	}
	var played card
	for _, c := range obs.Hand {
		if c.Id == *id {
			played = card{c.Colour, c.Value}
		}
	}
	for _, l := range obs.Locations {
		if l.Id != *location {
			continue
		}
		stack := make([]card, 0, len(l.Stack)+1)
		for _, c := range l.Stack {
			stack = append(stack, card{c.Colour, c.Value})
		}
		top := 0
		if len(stack) > 0 {
			top = stack[len(stack)-1].value
		}
		if met(l.Id, append(stack, played)) {
			return 100 + len(stack)
		}
		if played.value > top {
			return 50 - played.value
		}
	}
	return 10 - played.value
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
