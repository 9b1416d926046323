package main

import (
	"encoding/json"
	"fmt"
	"io"
)

const nodeStatusUsage = "usage: kubelet-oracle nodestatus SCENARIO"

// nodeStatusCmd prints the node's status.capacity and status.allocatable
// as the kubelet's node-status setter (nodestatus.MachineInfo) computes
// them for the scenario's machine and kubelet configuration: capacity
// minus GetNodeAllocatableReservation, memory also minus every huge page
// pool, floored at zero.
func nodeStatusCmd(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return &exitError{2, "error: give one scenario\n" + nodeStatusUsage}
	}
	node, cleanup, err := startNode(args[0])
	if err != nil {
		return err
	}
	defer cleanup()
	capacity, allocatable := node.NodeStatus()
	out, err := json.MarshalIndent(map[string]any{"capacity": capacity, "allocatable": allocatable}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
