package main

import "io"

func podresourcesCmd(args []string, stdin io.Reader, stdout io.Writer) error {
	return &exitError{2, "error: podresources: not built yet"}
}
