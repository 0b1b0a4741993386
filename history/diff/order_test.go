package diff

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
)

// shuffled writes v with the members of every object in random order, the elements of
// every "type" and "required" array shuffled, and random whitespace.
func shuffled(r *rand.Rand, v *value, key string, out []byte) []byte {
	space := func() {
		if r.IntN(4) == 0 {
			out = append(out, " \n\t"[r.IntN(3)])
		}
	}
	switch v.kind {
	case '{':
		mems := append([]member(nil), v.mems...)
		r.Shuffle(len(mems), func(i, j int) { mems[i], mems[j] = mems[j], mems[i] })
		out = append(out, '{')
		for i, m := range mems {
			if i > 0 {
				out = append(out, ',')
			}
			space()
			out = strconv.AppendQuote(out, m.key)
			space()
			out = append(out, ':')
			out = shuffled(r, m.val, m.key, out)
		}
		return append(out, '}')
	case '[':
		elems := append([]*value(nil), v.elems...)
		if key == "type" || key == "required" {
			r.Shuffle(len(elems), func(i, j int) { elems[i], elems[j] = elems[j], elems[i] })
		}
		out = append(out, '[')
		for i, e := range elems {
			if i > 0 {
				out = append(out, ',')
			}
			space()
			out = shuffled(r, e, "", out)
		}
		return append(out, ']')
	}
	return append(out, v.raw...)
}

func TestCompareOrderIndependent(t *testing.T) {
	before, after := benchSurfaces(t, 120)
	r := rand.New(rand.NewPCG(3, 4))
	for side, s := range []Surface{before, after} {
		for round := range 5 {
			var tools []json.RawMessage
			for _, raw := range s.Tools {
				tools = append(tools, shuffled(r, mustTool(t, raw).v, "", nil))
			}
			r.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
			other := Surface{Tools: tools, Instructions: s.Instructions, Version: s.Version}
			c, err := Compare(s, other, Options{Now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			if !c.Empty() {
				t.Fatalf("round %d: shuffled surface differs: %s", round, dump(c))
			}
			// And the change between the two reads does not depend on order either.
			want, err := Compare(before, after, Options{Now: benchNow})
			if err != nil {
				t.Fatal(err)
			}
			var got *Change
			if side == 0 {
				got, err = Compare(other, after, Options{Now: benchNow})
			} else {
				got, err = Compare(before, other, Options{Now: benchNow})
			}
			if err != nil {
				t.Fatal(err)
			}
			if dump(got) != dump(want) {
				t.Fatalf("round %d: change depends on order:\n%s\nwant\n%s", round, dump(got), dump(want))
			}
		}
	}
}

// TestBenchSurfaces checks that the benchmark's reads differ as intended: dates of the
// read masked, about 5% of the tools changed.
func TestBenchSurfaces(t *testing.T) {
	before, after := benchSurfaces(t, 500)
	c, err := Compare(before, after, Options{Now: benchNow})
	if err != nil {
		t.Fatal(err)
	}
	k := c.Kinds()
	t.Logf("%s; %d breaking, %d badges", c.Summary(), len(c.Breaking), len(c.Badges))
	if n := len(c.Changed) + len(c.Added) + len(c.Removed); n < 20 || n > 40 || !k.ToolsAdded || !k.ToolsRemoved || !k.Breaking {
		t.Errorf("%d tools changed, added or removed; kinds %+v", n, k)
	}
	for _, tc := range c.Changed {
		if tc.DescriptionChanged && tc.DescriptionBefore[:10] != tc.DescriptionAfter[:10] {
			t.Errorf("%s: %q → %q", tc.Name, tc.DescriptionBefore, tc.DescriptionAfter)
		}
	}
}
