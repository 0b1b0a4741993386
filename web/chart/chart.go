// Package chart lays out small charts for inline SVG: bars (grouped or stacked) or
// lines over a row of categories, with a linear y axis from zero, tick labels, axis
// titles, a legend, and the numbers as a table (the chart's text alternative). It
// only computes: the site's templates write the SVG, so every text goes through
// html/template's escaping, and nothing here is markup.
//
// Every coordinate is an integer in SVG user units of a Width × Height view box. A
// chart has at most MaxCategories categories (the last ones: a time axis keeps its
// newest days) and MaxSeries series, and a label or series name (data) at most
// MaxLabel characters, however much the caller gives it.
//
// # Classes
//
// The SVG elements carry these classes for the stylesheet (and presentation
// attributes as a fallback, never style attributes: the site's CSP forbids them):
// "chart-grid" on the horizontal grid lines, "chart-axis" on the axis lines,
// "chart-tick" on tick labels, "chart-axis-title" on axis titles, "chart-legend" on
// legend labels, and "series-N" (N from 0) on the bars, lines, dots and legend
// swatches of series N, whose fallback colours are Palette[N].
package chart

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds of a chart.
const (
	MaxCategories = 60
	MaxSeries     = 6
	MaxLabel      = 40 // characters of a category label or a series name
)

// Palette are the series' fallback colours, distinguishable for common colour vision
// deficiencies (after Okabe and Ito, darkened) and at least 3.5:1 against white and
// against a dark background (#0d1117); the last is the grey of "other".
var Palette = [MaxSeries]string{"#0072b2", "#d55e00", "#007a5a", "#b4479a", "#8a6d00", "#6e6e6e"}

// Kind is how a chart draws its series.
type Kind int

const (
	// Bars draws a bar per series in each category, side by side.
	Bars Kind = iota
	// Stacked draws one bar per category, the series stacked from the first up.
	Stacked
	// Line draws a line per series through a dot per category.
	Line
)

// Spec is what to draw.
type Spec struct {
	// ID is the figure's id and the prefix of its title's and description's ids: the
	// caller's own ASCII name, never data.
	ID          string
	Title, Desc string
	Kind        Kind
	// XTitle and YTitle name the axes with their units, e.g. "Day (UTC)", "Changes".
	XTitle, YTitle string
	Categories     []Category
	// Series are the values, one per category each (missing values are 0; negative
	// ones are drawn as 0).
	Series []Series
	// MaxY, when positive, caps the y axis (100 for percentages).
	MaxY float64
	// Integer values: no tick between whole numbers.
	Integer bool
	// Format writes a value for tick labels and the table; nil: strconv's shortest.
	Format func(float64) string
	// Value writes the value of series si at category ci (an index into Categories)
	// for its bar's or dot's title (e.g. "3 changes"); nil: Format.
	Value func(ci, si int, v float64) string
}

// Category is one place on the x axis.
type Category struct {
	Label string // in titles and the table, e.g. "2026-11-30"
	Tick  string // under the axis, e.g. "Nov 30"; "" means Label
}

// Series is one named row of values.
type Series struct {
	Name   string
	Values []float64
}

// Chart is a laid-out chart.
type Chart struct {
	ID, Title, Desc string
	Width, Height   int
	// Left, Top, Right and Bottom bound the plot: the x axis runs along Bottom, the y
	// axis along Left.
	Left, Top, Right, Bottom int
	XTitle, YTitle           Text // YTitle is drawn rotated by −90° around its point
	YTicks                   []Tick
	XTicks                   []Tick
	Bars                     []Bar
	Lines                    []Polyline
	Dots                     []Dot
	Legend                   []Key
	Table                    Table
}

// Text is a label at a point (text-anchor middle).
type Text struct {
	X, Y int
	Text string
}

// Tick is a tick label at X, Y; a y tick's grid line runs from Left to Right at LineY.
type Tick struct {
	X, Y, LineY int
	Label       string
}

// Bar is one bar (or stacked segment) with its title.
type Bar struct {
	Class, Fill string
	X, Y, W, H  int
	Title       string
}

// Polyline is one series' line: Points is "x,y x,y …".
type Polyline struct {
	Class, Stroke string
	Points        string
}

// Dot is a point of a line, with its title.
type Dot struct {
	Class, Fill string
	CX, CY      int
	Title       string
}

// Key is a legend entry: a swatch at X, Y and its text after it.
type Key struct {
	Class, Fill string
	X, Y, TX    int
	Text        string
}

// Table is the chart's numbers: the first column the categories, one column per
// series.
type Table struct {
	Head []string
	Rows [][]string
}

// Geometry, in SVG user units.
const (
	width      = 720
	plotHeight = 200
	marginL    = 64 // room for y tick labels and the y title
	marginR    = 16
	marginT    = 12
	marginB    = 48 // x tick labels and the x title
	legendRow  = 20
	charW      = 7 // an estimate of a 12 px character's width, for the legend's rows
	minTickGap = 64
	maxBarW    = 64 // a bar or group of bars, however few the categories
)

// Lay lays out s. It never fails: an empty spec gives axes without marks.
func Lay(s Spec) Chart {
	format := s.Format
	if format == nil {
		format = func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	}
	value := s.Value
	if value == nil {
		value = func(_, _ int, v float64) string { return format(v) }
	}
	cats := s.Categories
	if len(cats) > MaxCategories {
		cats = cats[len(cats)-MaxCategories:]
	}
	offset := len(s.Categories) - len(cats) // values before it are dropped with their categories
	series := s.Series
	if len(series) > MaxSeries {
		series = series[:MaxSeries]
	}
	val := func(si, ci int) float64 {
		vs := series[si].Values
		if i := ci + offset; i < len(vs) && vs[i] > 0 && !math.IsInf(vs[i], 0) {
			return vs[i]
		}
		return 0
	}
	names := make([]string, len(series))
	for i, sr := range series {
		names[i] = clip(sr.Name)
	}

	c := Chart{ID: s.ID, Title: s.Title, Desc: s.Desc, Width: width, Left: marginL, Right: width - marginR}

	// The legend, in rows above the plot, for more than one series or stacked ones
	// (parts of a whole, named even alone).
	named := len(series) > 1 || s.Kind == Stacked
	y := marginT
	if named {
		x := marginL
		for i, n := range names {
			w := 18 + charW*utf8.RuneCountInString(n) + 16
			if x+w > c.Right && x > marginL {
				x, y = marginL, y+legendRow
			}
			c.Legend = append(c.Legend, Key{Class: seriesClass(i), Fill: Palette[i], X: x, Y: y, TX: x + 18, Text: n})
			x += w
		}
		y += legendRow + 8
	}
	c.Top = y + 8 // room for the top tick label
	c.Bottom = c.Top + plotHeight
	c.Height = c.Bottom + marginB

	// The y scale: from 0 to a round number at or above the largest value (or sum).
	peak := 0.0
	for ci := range cats {
		sum := 0.0
		for si := range series {
			if s.Kind == Stacked {
				sum += val(si, ci)
			} else {
				sum = max(sum, val(si, ci))
			}
		}
		peak = max(peak, sum)
	}
	step, top := scale(peak, s.Integer, s.MaxY)
	yOf := func(v float64) int {
		return c.Bottom - int(math.Round(v*plotHeight/top))
	}
	for i := 0; float64(i)*step <= top+step/2; i++ {
		v := float64(i) * step
		ty := yOf(v)
		c.YTicks = append(c.YTicks, Tick{X: c.Left - 6, Y: ty + 4, LineY: ty, Label: format(v)})
	}
	c.YTitle = Text{X: 14, Y: (c.Top + c.Bottom) / 2, Text: s.YTitle}
	c.XTitle = Text{X: (c.Left + c.Right) / 2, Y: c.Height - 8, Text: s.XTitle}

	// The categories: equal bands, a tick label every k-th, counted from the last.
	n := len(cats)
	if n == 0 {
		return c
	}
	plotW := float64(c.Right - c.Left)
	band := plotW / float64(n)
	center := func(ci int) int { return c.Left + int(math.Round(band*(float64(ci)+0.5))) }
	every := int(math.Ceil(float64(n) / math.Max(1, math.Floor(plotW/minTickGap))))
	for ci := n - 1; ci >= 0; ci -= every {
		t := cats[ci].Tick
		if t == "" {
			t = cats[ci].Label
		}
		c.XTicks = append(c.XTicks, Tick{X: center(ci), Y: c.Bottom + 16, Label: clip(t)})
	}
	for i, j := 0, len(c.XTicks)-1; i < j; i, j = i+1, j-1 {
		c.XTicks[i], c.XTicks[j] = c.XTicks[j], c.XTicks[i]
	}

	title := func(ci, si int, v float64) string {
		t := clip(cats[ci].Label)
		if named {
			t += ", " + names[si]
		}
		return t + ": " + value(ci+offset, si, v)
	}
	switch s.Kind {
	case Bars:
		if len(series) == 0 {
			break
		}
		bw := max(1, min(maxBarW, int(band*0.8))/len(series))
		for ci := range cats {
			x0 := center(ci) - bw*len(series)/2
			for si := range series {
				v := val(si, ci)
				top := yOf(v)
				c.Bars = append(c.Bars, Bar{Class: seriesClass(si), Fill: Palette[si], X: x0 + si*bw, Y: top, W: bw, H: c.Bottom - top, Title: title(ci, si, v)})
			}
		}
	case Stacked:
		bw := max(1, min(maxBarW, int(band*0.7)))
		for ci := range cats {
			sum := 0.0
			for si := range series {
				v := val(si, ci)
				if v == 0 {
					continue
				}
				lo, hi := yOf(sum), yOf(sum+v)
				sum += v
				c.Bars = append(c.Bars, Bar{Class: seriesClass(si), Fill: Palette[si], X: center(ci) - bw/2, Y: hi, W: bw, H: lo - hi, Title: title(ci, si, v)})
			}
		}
	case Line:
		for si := range series {
			var pts []string
			for ci := range cats {
				v := val(si, ci)
				x, y := center(ci), yOf(v)
				pts = append(pts, strconv.Itoa(x)+","+strconv.Itoa(y))
				c.Dots = append(c.Dots, Dot{Class: seriesClass(si), Fill: Palette[si], CX: x, CY: y, Title: title(ci, si, v)})
			}
			c.Lines = append(c.Lines, Polyline{Class: seriesClass(si), Stroke: Palette[si], Points: strings.Join(pts, " ")})
		}
	}

	// The table: a column per series (a single series not named is named by the y
	// title).
	c.Table.Head = append([]string{s.XTitle}, names...)
	if !named && len(series) == 1 {
		c.Table.Head[1] = s.YTitle
	}
	for ci := range cats {
		row := []string{clip(cats[ci].Label)}
		for si := range series {
			row = append(row, format(val(si, ci)))
		}
		c.Table.Rows = append(c.Table.Rows, row)
	}
	return c
}

// scale returns the y axis' tick step and top: the smallest 1, 2 or 5 × 10^k step
// giving at most five intervals up to a top at or above peak (whole steps for
// integers), the top capped by maxY when positive.
func scale(peak float64, integer bool, maxY float64) (step, top float64) {
	if peak <= 0 || math.IsNaN(peak) {
		return 1, 1
	}
	raw := peak / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if integer {
		step = max(1, math.Ceil(step))
	}
	top = step * math.Ceil(peak/step)
	if maxY > 0 && top > maxY {
		top = maxY
	}
	return step, top
}

func seriesClass(i int) string { return "series-" + strconv.Itoa(i) }

// clip shortens s to MaxLabel characters, the last an ellipsis.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= MaxLabel {
		return s
	}
	r := []rune(s)
	return string(r[:MaxLabel-1]) + "…"
}
