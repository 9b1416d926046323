package merge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

func run(t *testing.T, line string) string {
	t.Helper()
	r, err := Decode([]byte(line))
	if err != nil {
		t.Fatalf("Decode(%s): %v", line, err)
	}
	out, err := json.Marshal(Run(logr.Discard(), r, 0))
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return string(out)
}

func TestMerge(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{
			// no common preferred mask: the non-preferred merges aim at the
			// widest of the narrowest widths (1 here), lowest mask first
			"best-effort non-preferred",
			`{"numaNodes":[0,1],"policy":"best-effort","providersHints":[
			  {"cpu":[{"numaNodes":[0],"preferred":true},{"numaNodes":[0,1],"preferred":false}]},
			  {"memory":[{"numaNodes":[1],"preferred":true},{"numaNodes":[0,1],"preferred":false}]}]}`,
			`{"numaNodes":[0],"preferred":false,"admit":true}`,
		},
		{
			"restricted refuses a non-preferred merge",
			`{"numaNodes":[0,1],"policy":"restricted","providersHints":[
			  {"cpu":[{"numaNodes":[0],"preferred":true}]},
			  {"memory":[{"numaNodes":[1],"preferred":true},{"numaNodes":[0,1],"preferred":false}]}]}`,
			`{"numaNodes":[0],"preferred":false,"admit":false}`,
		},
		{
			"common preferred mask",
			`{"numaNodes":[0,1,2,3],"policy":"restricted","providersHints":[
			  {"cpu":[{"numaNodes":[2],"preferred":true},{"numaNodes":[1],"preferred":true}]},
			  {"memory":[{"numaNodes":[1],"preferred":true},{"numaNodes":null,"preferred":true}]}]}`,
			`{"numaNodes":[1],"preferred":true,"admit":true}`,
		},
		{
			// nil map and nil list: no preference; the all-nodes merge
			// becomes a nil affinity under single-numa-node
			"single-numa-node don't care",
			`{"numaNodes":[0,1],"policy":"single-numa-node","providersHints":[null,{"x":null}]}`,
			`{"numaNodes":null,"preferred":true,"admit":true}`,
		},
		{
			// an empty list: no possible placement
			"empty list",
			`{"numaNodes":[0,1],"policy":"restricted","providersHints":[{"x":[]}]}`,
			`{"numaNodes":[0,1],"preferred":false,"admit":false}`,
		},
		{
			// two-node masks of equal width: the closer pair wins
			"prefer-closest",
			`{"numaNodes":[0,1,2,3],"policy":"best-effort","options":{"prefer-closest-numa-nodes":"true"},
			  "distances":[[10,30,30,12],[30,10,12,30],[30,12,10,30],[12,30,30,10]],
			  "providersHints":[{"gpu":[{"numaNodes":[0,1],"preferred":true},{"numaNodes":[0,3],"preferred":true}]}]}`,
			`{"numaNodes":[0,3],"preferred":true,"admit":true}`,
		},
		{
			"narrowest without prefer-closest",
			`{"numaNodes":[0,1,2,3],"policy":"best-effort",
			  "distances":[[10,30,30,12],[30,10,12,30],[30,12,10,30],[12,30,30,10]],
			  "providersHints":[{"gpu":[{"numaNodes":[0,1],"preferred":true},{"numaNodes":[0,3],"preferred":true}]}]}`,
			`{"numaNodes":[0,1],"preferred":true,"admit":true}`,
		},
		{
			"none",
			`{"numaNodes":[0,1],"policy":"none","providersHints":[{"x":[{"numaNodes":[0],"preferred":true}]}]}`,
			`{"numaNodes":null,"preferred":false,"admit":true}`,
		},
		{
			"more NUMA nodes than allowed",
			`{"numaNodes":[0,1,2,3,4,5,6,7,8],"policy":"best-effort","providersHints":[]}`,
			`{"error":"unsupported on machines with more than 8 NUMA Nodes"}`,
		},
		{
			"max-allowable-numa-nodes raised",
			`{"numaNodes":[0,1,2,3,4,5,6,7,8],"policy":"best-effort","options":{"max-allowable-numa-nodes":"9"},"providersHints":[]}`,
			`{"numaNodes":[0,1,2,3,4,5,6,7,8],"preferred":true,"admit":true}`,
		},
		{
			"prefer-closest without distances",
			`{"numaNodes":[0,1],"policy":"best-effort","options":{"prefer-closest-numa-nodes":"true"},"providersHints":[]}`,
			`{"error":"cannot discover NUMA topology: error getting NUMA distances from cadvisor"}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := run(t, c.in); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestRepeatReportsSeconds(t *testing.T) {
	r, err := Decode([]byte(`{"numaNodes":[0],"policy":"best-effort","providersHints":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	res := Run(logr.Discard(), r, 3)
	if res.Seconds == nil || *res.Seconds < 0 {
		t.Fatalf("seconds = %v", res.Seconds)
	}
}

func TestDecodeRejects(t *testing.T) {
	for in, want := range map[string]string{
		`{"numaNodes":[64]}`:                        "out of range",
		`{"numaNodes":[0],"distances":[[10],[10]]}`: "2 rows for 1 NUMA nodes",
		`{"numaNodes":[0],"providersHints":[{"x":[{"numaNodes":[70],"preferred":true}]}]}`: "providersHints: numaNodes",
		`{"numaNodes":`: "unexpected end",
	} {
		_, err := Decode([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s) = %v, want an error containing %q", in, err, want)
		}
	}
}
