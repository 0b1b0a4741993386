package stats

import (
	"fmt"
	"time"
)

// dailyDays is the number of full UTC days of DailyChanges: 21, as seed 001's
// 17 September to 7 October.
const dailyDays = 21

// DayChanges is one UTC day of DailyChanges.
type DayChanges struct {
	Day     string `json:"day"`     // YYYY-MM-DD
	Reads   int    `json:"reads"`   // successful reads that day
	Changed int    `json:"changed"` // of them, reads whose toolset differs from the previous read's
	// PerThousand is Changed per 1,000 Reads.
	PerThousand float64 `json:"perThousand"`
	// MaxHourChanged is the most changed reads in one UTC hour of the day: a change on
	// Probity's side would show as a burst within one round, not spread over the day.
	MaxHourChanged int `json:"maxHourChanged"`
}

// DailyChanges is seed 001's check against changes made on Probity's side: per UTC
// day, the reads of the toolset tables' servers (neither claimed nor paginated) and
// those that changed the toolset, over the dailyDays full days before the cut-off's day.
type DailyChanges struct {
	From string `json:"from"` // first day, YYYY-MM-DD
	To   string `json:"to"`   // last day, the day before the cut-off's
	// Days are the days with at least one read, oldest first.
	Days []DayChanges `json:"days"`
	// Min and Max are the lowest and highest PerThousand of Days, MinDay and MaxDay the
	// first day each was reached ("" when no day has a read).
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	MinDay string  `json:"minDay"`
	MaxDay string  `json:"maxDay"`
}

// dailyTally accumulates DailyChanges.
type dailyTally struct {
	first   time.Time // start of the first day
	reads   [dailyDays]int
	changed [dailyDays]int
	hours   [dailyDays][24]int
}

func newDailyTally(now time.Time) dailyTally {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return dailyTally{first: today.AddDate(0, 0, -dailyDays)}
}

// add counts an eligible server's reads (none after the cut-off).
func (d *dailyTally) add(reads []Read) {
	first := d.first.Unix() // days by Unix seconds: cheaper than time.Time.Sub per read
	for i := firstAfter(reads, d.first.Add(-time.Nanosecond)); i < len(reads); i++ {
		k := int((reads[i].At.Unix() - first) / 86400)
		if k >= dailyDays {
			break
		}
		d.reads[k]++
		if i > 0 && reads[i].Toolset != reads[i-1].Toolset {
			d.changed[k]++
			d.hours[k][reads[i].At.Hour()]++
		}
	}
}

func (d *dailyTally) report() DailyChanges {
	r := DailyChanges{From: d.first.Format(dateLayout), To: d.first.AddDate(0, 0, dailyDays-1).Format(dateLayout)}
	for k := range dailyDays {
		if d.reads[k] == 0 {
			continue
		}
		dc := DayChanges{Day: d.first.AddDate(0, 0, k).Format(dateLayout), Reads: d.reads[k], Changed: d.changed[k],
			PerThousand: 1000 * float64(d.changed[k]) / float64(d.reads[k])}
		for _, n := range d.hours[k] {
			dc.MaxHourChanged = max(dc.MaxHourChanged, n)
		}
		if r.MinDay == "" || dc.PerThousand < r.Min {
			r.Min, r.MinDay = dc.PerThousand, dc.Day
		}
		if r.MaxDay == "" || dc.PerThousand > r.Max {
			r.Max, r.MaxDay = dc.PerThousand, dc.Day
		}
		r.Days = append(r.Days, dc)
	}
	return r
}

// DuplicateCheck states seed 001's check that no change came from repeated names
// alone, or how many did.
func (t ChangeTypes) DuplicateCheck() string {
	switch n := t.DuplicatesOnly.Count; {
	case t.Changes == 0:
		return "There were no changes to check for repeated names."
	case n == 0:
		return "No change came from a repeated name alone: every change added or removed at least one name."
	default:
		return fmt.Sprintf("%s came only from a repeated name (a name listed once more or once less), with no name added or removed.",
			Plural(n, "change", "changes"))
	}
}

// DailyDefinition says what DailyChanges counts.
func (d DailyChanges) DailyDefinition() string {
	return fmt.Sprintf("Per UTC day from %s to %s, the successful reads of the servers the toolset tables count and those whose toolset differs from the server's previous read. "+
		"A change made on Probity's side would show as a burst within one round rather than spread over the day.", d.From, d.To)
}

// DailyRange is the sentence with the range of changed reads per 1,000.
func (d DailyChanges) DailyRange() string {
	if len(d.Days) == 0 {
		return "No day had a read."
	}
	return fmt.Sprintf("On the %s with reads, %s to %s of every 1,000 successful reads differed from the previous read (lowest %s, highest %s).",
		Plural(len(d.Days), "day", "days"), Decimal(d.Min), Decimal(d.Max), d.MinDay, d.MaxDay)
}

// DayRow formats one day: day, reads, changed, per 1,000, most in one hour.
func (dc DayChanges) DayRow() [5]string {
	return [5]string{dc.Day, Count(dc.Reads), Count(dc.Changed), Decimal(dc.PerThousand), Count(dc.MaxHourChanged)}
}

// markdown writes the DailyChanges section.
func (d DailyChanges) markdown(p func(string, ...any)) {
	p("\n### Changed reads per day\n\n%s\n\n%s\n\n", d.DailyDefinition(), d.DailyRange())
	p("| Day | Reads | Changed | Per 1,000 reads | Most changed in one hour |\n|---|---|---|---|---|\n")
	for _, dc := range d.Days {
		r := dc.DayRow()
		p("| %s | %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3], r[4])
	}
}
