// Plays the last legal action; prints its first three decisions of each match.
package main

import (
	"fmt"

	"saloon"
)

var match string
var seen int

func Act(d saloon.Decision) int {
	if d.Match.ID != match {
		match, seen = d.Match.ID, 0
	}
	if seen < 3 {
		fmt.Println("deciding", d.Kind, len(d.Legal))
	}
	seen++
	return len(d.Legal) - 1
}
