// A Go bot that reads the file the test planted on the host: it must not be visible.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"saloon"
)

var done bool

func Act(d saloon.Decision) int {
	if !done {
		done = true
		exe, _ := os.Executable()
		data, err := os.ReadFile(filepath.Join(filepath.Dir(exe), "..", "target.json"))
		if err != nil {
			panic(err)
		}
		target := map[string]string{}
		_ = json.Unmarshal(data, &target)
		path := target["path"]
		text, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "CONTAINED: %s: %v\n", path, err)
		} else {
			panic(fmt.Sprintf("ESCAPED: read %s: %q", path, text))
		}
	}
	return 0
}
