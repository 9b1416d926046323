// Package merge runs the topology manager's hint merge — the policy's Merge
// of the kubelet v1.37.2 topologymanager package — on hint sets given as
// JSON, for checking podnuma's merge (which does not walk the permutations)
// against the kubelet's literal permutation walk.
//
// The policy comes from topologymanager.NewManager, as the kubelet builds
// it: the policy options are parsed by the kubelet's option parser, the
// NUMA information (and distances, for prefer-closest-numa-nodes) comes
// from the cadvisor NUMA nodes, and the max-allowable-numa-nodes limit is
// the kubelet's own check. Merge is then called on the manager's policy.
package merge

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	cadvisorapi "github.com/google/cadvisor/lib/model"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager/bitmask"
)

// Hint is one topology hint. NUMANodes nil (JSON null or absent) is a nil
// affinity ("any NUMA node"); an empty list is an empty, non-nil mask.
type Hint struct {
	NUMANodes []int `json:"numaNodes"`
	Preferred bool  `json:"preferred"`
}

// Request is one merge: the machine's NUMA node ids (machine order), their
// distance rows (optional; row i is node numaNodes[i]'s cadvisor
// Distances, indexed by NUMA id), the policy and its options (the
// KubeletConfiguration's topologyManagerPolicyOptions), and one hint map per
// provider. A null provider map is a nil map; a null resource list is a nil
// slice ("no preference"), an empty list an empty slice ("no placement").
type Request struct {
	NUMANodes      []int               `json:"numaNodes"`
	Distances      [][]uint64          `json:"distances"`
	Policy         string              `json:"policy"`
	Options        map[string]string   `json:"options"`
	ProvidersHints []map[string][]Hint `json:"providersHints"`

	// the hints as the kubelet's types (set by Decode)
	hints []map[string][]topologymanager.TopologyHint
}

// Result is the merged hint and the admit decision, or the error the
// kubelet would not start with (NewManager's error).
type Result struct {
	NUMANodes *[]int   `json:"numaNodes,omitempty"`
	Preferred bool     `json:"preferred"`
	Admit     bool     `json:"admit"`
	Seconds   *float64 `json:"seconds,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// MarshalJSON writes {"numaNodes": [...]|null, "preferred", "admit"
// [, "seconds"]} or {"error": ...}.
func (r Result) MarshalJSON() ([]byte, error) {
	if r.Error != "" {
		return json.Marshal(struct {
			Error string `json:"error"`
		}{r.Error})
	}
	var nodes []int
	if r.NUMANodes != nil {
		nodes = *r.NUMANodes
		if nodes == nil {
			nodes = []int{}
		}
	}
	return json.Marshal(struct {
		NUMANodes []int    `json:"numaNodes"`
		Preferred bool     `json:"preferred"`
		Admit     bool     `json:"admit"`
		Seconds   *float64 `json:"seconds,omitempty"`
	}{nodes, r.Preferred, r.Admit, r.Seconds})
}

// InputError is a request the kubelet could not have been given (bad JSON,
// NUMA ids out of range, distance rows not matching the nodes).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Decode reads one request line.
func Decode(line []byte) (*Request, error) {
	var r Request
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, &InputError{err.Error()}
	}
	if r.Distances != nil && len(r.Distances) != len(r.NUMANodes) {
		return nil, &InputError{fmt.Sprintf("distances: %d rows for %d NUMA nodes", len(r.Distances), len(r.NUMANodes))}
	}
	for _, id := range r.NUMANodes {
		if id < 0 || id > 63 {
			return nil, &InputError{fmt.Sprintf("numaNodes: id %d out of range 0..63", id)}
		}
	}
	hints, err := r.providersHints()
	if err != nil {
		return nil, err
	}
	r.hints = hints
	return &r, nil
}

// machine is the cadvisor NUMA topology the kubelet hands NewManager.
func (r *Request) machine() []cadvisorapi.Node {
	nodes := make([]cadvisorapi.Node, len(r.NUMANodes))
	for i, id := range r.NUMANodes {
		nodes[i].Id = id
		if r.Distances != nil {
			nodes[i].Distances = r.Distances[i]
		}
	}
	return nodes
}

func toKubelet(in []Hint) ([]topologymanager.TopologyHint, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]topologymanager.TopologyHint, 0, len(in))
	for _, h := range in {
		var mask bitmask.BitMask
		if h.NUMANodes != nil {
			m, err := bitmask.NewBitMask(h.NUMANodes...)
			if err != nil {
				return nil, &InputError{"providersHints: numaNodes: " + err.Error()}
			}
			mask = m
		}
		out = append(out, topologymanager.TopologyHint{NUMANodeAffinity: mask, Preferred: h.Preferred})
	}
	return out, nil
}

// providersHints converts the request's hints to the kubelet's types,
// keeping nil maps and nil lists nil.
func (r *Request) providersHints() ([]map[string][]topologymanager.TopologyHint, error) {
	out := make([]map[string][]topologymanager.TopologyHint, len(r.ProvidersHints))
	for i, provider := range r.ProvidersHints {
		if provider == nil {
			continue
		}
		out[i] = make(map[string][]topologymanager.TopologyHint, len(provider))
		for resource, hints := range provider {
			kh, err := toKubelet(hints)
			if err != nil {
				return nil, err
			}
			out[i][resource] = kh
		}
	}
	return out, nil
}

// Run builds the policy with NewManager and merges the hints (a request
// from Decode). repeat > 0 merges that many times and reports the median
// wall time of one Merge.
func Run(logger klog.Logger, r *Request, repeat int) Result {
	hints := r.hints
	// The scope does not take part in the merge; "container" is the default.
	manager, err := topologymanager.NewManager(logger, r.machine(), r.Policy, topologymanager.ContainerTopologyScope, r.Options)
	if err != nil {
		return Result{Error: err.Error()}
	}
	policy := manager.GetPolicy()
	if repeat < 1 {
		best, admit := policy.Merge(logger, hints)
		return result(best, admit, nil)
	}
	var best topologymanager.TopologyHint
	var admit bool
	times := make([]float64, repeat)
	for i := range times {
		start := time.Now()
		best, admit = policy.Merge(logger, hints)
		times[i] = time.Since(start).Seconds()
	}
	sort.Float64s(times)
	median := times[repeat/2]
	if repeat%2 == 0 {
		median = (times[repeat/2-1] + times[repeat/2]) / 2
	}
	return result(best, admit, &median)
}

func result(best topologymanager.TopologyHint, admit bool, seconds *float64) Result {
	res := Result{Preferred: best.Preferred, Admit: admit, Seconds: seconds}
	if best.NUMANodeAffinity != nil {
		bits := best.NUMANodeAffinity.GetBits()
		res.NUMANodes = &bits
	}
	return res
}
