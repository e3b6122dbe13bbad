// A Go bot that connects to the listener the test opened on the host's 127.0.0.1: must fail.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"saloon"
)

var done bool

func target() map[string]interface{} {
	exe, _ := os.Executable()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(exe), "..", "target.json"))
	if err != nil {
		panic(err)
	}
	out := map[string]interface{}{}
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func Act(d saloon.Decision) int {
	if !done {
		done = true
		address := fmt.Sprintf("127.0.0.1:%v", target()["port"])
		conn, err := net.DialTimeout("tcp", address, 2*time.Second)
		if err != nil {
			fmt.Fprintf(os.Stderr, "CONTAINED: connect to %s: %v\n", address, err)
		} else {
			_, _ = conn.Write([]byte("ESCAPED"))
			conn.Close()
			panic("ESCAPED: talked to " + address)
		}
	}
	return 0
}
