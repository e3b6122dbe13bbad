// A Go bot that starts up to 300 sleeping child processes at its first decision: the pids
// limit must stop it first. It then ends every child it started (only its own).
package main

import (
	"fmt"
	"os"
	"os/exec"

	"saloon"
)

const bound = 300

var done bool

func bomb() {
	var children []*exec.Cmd
	var failure error
	for len(children) < bound {
		child := exec.Command("sleep", "60")
		if err := child.Start(); err != nil {
			failure = err
			break
		}
		children = append(children, child)
	}
	for _, child := range children {
		_ = child.Process.Kill()
		_ = child.Wait()
	}
	if failure == nil {
		panic(fmt.Sprintf("ESCAPED: started %d children", bound))
	}
	fmt.Fprintf(os.Stderr, "CONTAINED: fork failed after %d children: %v\n", len(children), failure)
}

func Act(d saloon.Decision) int {
	if !done {
		done = true
		bomb()
	}
	return 0
}
