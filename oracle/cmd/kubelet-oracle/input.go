package main

import (
	"io"
	"os"
)

// readInput is the bytes of FILE, or of standard input for "-".
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}
