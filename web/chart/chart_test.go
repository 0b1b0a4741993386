package chart

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The known answers below were computed by hand from the geometry: a 720 wide view
// box, the plot from x 64 to 704 (640 wide) and 200 high, its top 8 below the legend
// (at 12 without one), a bar or group of bars at most 64 wide.

func TestBarsKnownAnswer(t *testing.T) {
	c := Lay(Spec{ID: "c", Title: "T", Desc: "D", Kind: Bars, XTitle: "Day (UTC)", YTitle: "Changes", Integer: true,
		Categories: []Category{{Label: "2026-11-30", Tick: "Nov 30"}, {Label: "2026-12-01"}},
		Series:     []Series{{Name: "changes", Values: []float64{3, 1}}},
		Value:      func(ci, _ int, v float64) string { return fmt.Sprintf("%g changes (%d)", v, ci) }})
	// Peak 3: steps of 1 up to 3, each 200/3 high.
	want := Chart{ID: "c", Title: "T", Desc: "D", Width: 720, Height: 268, Left: 64, Top: 20, Right: 704, Bottom: 220,
		XTitle: Text{X: 384, Y: 260, Text: "Day (UTC)"}, YTitle: Text{X: 14, Y: 120, Text: "Changes"},
		YTicks: []Tick{{58, 224, 220, "0"}, {58, 157, 153, "1"}, {58, 91, 87, "2"}, {58, 24, 20, "3"}},
		XTicks: []Tick{{X: 224, Y: 236, Label: "Nov 30"}, {X: 544, Y: 236, Label: "2026-12-01"}},
		Bars: []Bar{
			{Class: "series-0", Fill: Palette[0], X: 192, Y: 20, W: 64, H: 200, Title: "2026-11-30: 3 changes (0)"},
			{Class: "series-0", Fill: Palette[0], X: 512, Y: 153, W: 64, H: 67, Title: "2026-12-01: 1 changes (1)"},
		},
		Table: Table{Head: []string{"Day (UTC)", "Changes"}, Rows: [][]string{{"2026-11-30", "3"}, {"2026-12-01", "1"}}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("bars:\n%+v\nwant\n%+v", c, want)
	}
}

func TestStackedKnownAnswer(t *testing.T) {
	c := Lay(Spec{ID: "s", Kind: Stacked, Integer: true, XTitle: "Day", YTitle: "Servers",
		Categories: []Category{{Label: "d"}},
		Series:     []Series{{Name: "a", Values: []float64{2}}, {Name: "b", Values: []float64{3}}}})
	// A legend row: the plot starts at 48. Peak 5: steps of 1, each 40 high.
	if c.Top != 48 || c.Bottom != 248 || c.Height != 296 {
		t.Errorf("plot %d to %d, height %d", c.Top, c.Bottom, c.Height)
	}
	wantKeys := []Key{{"series-0", Palette[0], 64, 12, 82, "a"}, {"series-1", Palette[1], 105, 12, 123, "b"}}
	wantBars := []Bar{
		{Class: "series-0", Fill: Palette[0], X: 352, Y: 168, W: 64, H: 80, Title: "d, a: 2"},
		{Class: "series-1", Fill: Palette[1], X: 352, Y: 48, W: 64, H: 120, Title: "d, b: 3"},
	}
	if !reflect.DeepEqual(c.Legend, wantKeys) || !reflect.DeepEqual(c.Bars, wantBars) {
		t.Errorf("legend %+v\nbars %+v", c.Legend, c.Bars)
	}
	if len(c.YTicks) != 6 || c.YTicks[5].LineY != 48 {
		t.Errorf("y ticks %+v", c.YTicks)
	}
	if want := (Table{Head: []string{"Day", "a", "b"}, Rows: [][]string{{"d", "2", "3"}}}); !reflect.DeepEqual(c.Table, want) {
		t.Errorf("table %+v", c.Table)
	}
}

func TestLineKnownAnswer(t *testing.T) {
	pct := func(v float64) string { return fmt.Sprintf("%g%%", v) }
	c := Lay(Spec{ID: "l", Kind: Line, MaxY: 100, Format: pct,
		Categories: []Category{{Label: "a"}, {Label: "b"}, {Label: "c"}},
		Series:     []Series{{Name: "share", Values: []float64{0, 50, 100}}}})
	want := []Polyline{{Class: "series-0", Stroke: Palette[0], Points: "171,220 384,120 597,20"}}
	if !reflect.DeepEqual(c.Lines, want) || len(c.Dots) != 3 || c.Dots[1] != (Dot{"series-0", Palette[0], 384, 120, "b: 50%"}) {
		t.Errorf("lines %+v, dots %+v", c.Lines, c.Dots)
	}
	var labels []string
	for _, tk := range c.YTicks {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, " ") != "0% 20% 40% 60% 80% 100%" {
		t.Errorf("y ticks %q", labels)
	}
}

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		peak       float64
		integer    bool
		maxY       float64
		step, top  float64
		desciption string
	}{
		{0, true, 0, 1, 1, "nothing"},
		{3, true, 0, 1, 3, "small counts"},
		{7, true, 0, 2, 8, "rounded up to a whole step"},
		{0.3, true, 0, 1, 1, "integers step by at least 1"},
		{12345, true, 0, 5000, 15000, "large"},
		{95, false, 100, 20, 100, "a percentage"},
		{100.5, false, 100, 50, 100, "capped"},
	} {
		step, top := scale(tc.peak, tc.integer, tc.maxY)
		if step != tc.step || top != tc.top {
			t.Errorf("%s: scale(%v) = %v, %v; want %v, %v", tc.desciption, tc.peak, step, top, tc.step, tc.top)
		}
	}
}

// TestBounds: however much the caller gives, a chart has at most MaxCategories
// categories (the last ones), MaxSeries series and MaxLabel characters per label, and
// every mark lies inside the plot.
func TestBounds(t *testing.T) {
	long := strings.Repeat("<script>x</script>", 20)
	var cats []Category
	for i := range 1000 {
		cats = append(cats, Category{Label: fmt.Sprintf("c%03d %s", i, long)})
	}
	var series []Series
	for i := range 20 {
		vs := make([]float64, 1000)
		for j := range vs {
			vs[j] = float64(j % 17)
		}
		series = append(series, Series{Name: fmt.Sprintf("s%d %s", i, long), Values: vs})
	}
	for _, kind := range []Kind{Bars, Stacked, Line} {
		c := Lay(Spec{ID: "b", Kind: kind, Categories: cats, Series: series, Integer: true})
		if len(c.Table.Rows) != MaxCategories || !strings.HasPrefix(c.Table.Rows[0][0], "c940 ") || len(c.Legend) != MaxSeries || len(c.Table.Head) != MaxSeries+1 {
			t.Fatalf("kind %d: %d rows from %q, %d keys", kind, len(c.Table.Rows), c.Table.Rows[0][0], len(c.Legend))
		}
		if n := len(c.Bars) + len(c.Dots); n > MaxCategories*MaxSeries {
			t.Errorf("kind %d: %d marks", kind, n)
		}
		if len(c.XTicks) > 10 {
			t.Errorf("kind %d: %d x ticks", kind, len(c.XTicks))
		}
		texts := []string{c.Table.Rows[0][0]}
		for _, k := range c.Legend {
			texts = append(texts, k.Text)
		}
		for _, tk := range c.XTicks {
			texts = append(texts, tk.Label)
		}
		for _, s := range texts {
			if utf8.RuneCountInString(s) > MaxLabel {
				t.Errorf("kind %d: label of %d characters", kind, utf8.RuneCountInString(s))
			}
		}
		for _, b := range c.Bars {
			if b.X < c.Left || b.X+b.W > c.Right || b.Y < c.Top || b.Y+b.H > c.Bottom || b.H < 0 {
				t.Errorf("kind %d: bar %+v outside the plot %d,%d–%d,%d", kind, b, c.Left, c.Top, c.Right, c.Bottom)
			}
		}
		for _, d := range c.Dots {
			if d.CX < c.Left || d.CX > c.Right || d.CY < c.Top || d.CY > c.Bottom {
				t.Errorf("kind %d: dot %+v outside the plot", kind, d)
			}
		}
		for _, k := range c.Legend {
			if k.Y+12 > c.Top {
				t.Errorf("kind %d: legend key %+v overlaps the plot at %d", kind, k, c.Top)
			}
		}
	}
}

func TestEmptyAndBadValues(t *testing.T) {
	c := Lay(Spec{ID: "e", Kind: Bars})
	if len(c.Bars) != 0 || len(c.XTicks) != 0 || len(c.YTicks) != 2 || len(c.Table.Rows) != 0 {
		t.Errorf("empty: %+v", c)
	}
	nan := 0.0
	c = Lay(Spec{ID: "n", Kind: Stacked, Categories: []Category{{Label: "a"}, {Label: "b"}},
		Series: []Series{{Name: "x", Values: []float64{-5, nan / nan}}}})
	for _, b := range c.Bars {
		if b.H != 0 {
			t.Errorf("a negative or NaN value drew %+v", b)
		}
	}
}
