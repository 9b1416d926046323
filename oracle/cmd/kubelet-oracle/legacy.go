package main

import (
	"fmt"
	"io"
	"strconv"

	"podnuma.io/oracle/internal/legacy"
)

const legacyUsage = "usage: kubelet-oracle legacy-checkpoint cpu|memory VERSION < CURRENT > OLDER"

// legacyCheckpoint writes the checkpoint on stdin (the current format) in
// an older format version, as the kubelet versions of that format wrote it.
func legacyCheckpoint(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 2 {
		return &exitError{2, legacyUsage}
	}
	version, err := strconv.Atoi(args[1])
	if err != nil {
		return &exitError{2, legacyUsage}
	}
	blob, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	out, err := legacy.Convert(args[0], version, blob)
	if err != nil {
		return &exitError{2, fmt.Sprintf("error: %v", err)}
	}
	_, err = stdout.Write(out)
	return err
}
