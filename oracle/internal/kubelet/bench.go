package kubelet

import (
	"context"
	"os"
	"sort"
	"time"

	"podnuma.io/oracle/internal/scenario"
)

// BenchResult is what `kubelet-oracle bench` prints.
type BenchResult struct {
	Pods                  int     `json:"pods"`
	Admitted              int     `json:"admitted"`
	Seconds               float64 `json:"seconds"`
	PodsPerSecond         float64 `json:"podsPerSecond"`
	MedianAdmissionMicros float64 `json:"medianAdmissionMicros"`
}

// Bench runs the scenario's steps through the managers and times each
// admission (the addPod steps), as bench/bench_admission.py times
// podnuma's. The state directory is in memory (/dev/shm where it exists):
// the managers write their checkpoints on every change, as in the
// kubelet, but to a tmpfs.
func Bench(ctx context.Context, s *scenario.Scenario) (*BenchResult, error) {
	dir, err := os.MkdirTemp(StateDirBase(), "kubelet-oracle-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	n, err := NewNode(ctx, s, dir)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	n.quiet = true
	res := &BenchResult{}
	var times []time.Duration
	var total time.Duration
	for i, st := range s.Steps {
		start := time.Now()
		sd, err := n.step(i, st)
		elapsed := time.Since(start)
		if err != nil {
			return nil, err
		}
		if st.Op != "addPod" {
			continue
		}
		res.Pods++
		if *sd.Admitted {
			res.Admitted++
		}
		times = append(times, elapsed)
		total += elapsed
	}
	res.Seconds = total.Seconds()
	if total > 0 {
		res.PodsPerSecond = float64(res.Pods) / total.Seconds()
	}
	if len(times) > 0 {
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		mid := len(times) / 2
		median := times[mid]
		if len(times)%2 == 0 {
			median = (times[mid-1] + times[mid]) / 2
		}
		res.MedianAdmissionMicros = float64(median.Nanoseconds()) / 1e3
	}
	return res, nil
}

// StateDirBase is where runs keep their kubelet state directories: $TMPDIR
// when set, otherwise /dev/shm where it exists (the managers fsync every
// checkpoint write; on a tmpfs that costs nothing), otherwise the system's
// temporary directory.
func StateDirBase() string {
	if os.Getenv("TMPDIR") != "" {
		return ""
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", ".kubelet-oracle-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return ""
}
