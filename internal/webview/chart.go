package webview

import (
	"fmt"
	"html/template"
	"strconv"
	"time"
)

// Charts are drawn on the server as inline SVG: bars are rectangles whose
// geometry is computed here and written by templates/chart.html; no
// script, no library, nothing fetched.

// chart is a bar chart in a viewBox of W×H user units.
type chart struct {
	W, H    float64
	Label   string // for screen readers (aria-label)
	Bars    []bar
	XLabels []axisLabel
	YMax    string // the value at the top of the plot
	YTop    float64
	Base    float64 // y of the x axis
	Left    float64 // x of the y axis
	Right   float64
	HasK    bool
	KX      float64 // x of the threshold line
	KLabel  string
	Empty   bool
}

type bar struct {
	X, Y, W, H float64
	Tip        string // shown on hover (<title>)
	Over       bool   // drawn in the second colour (above k)
}

type axisLabel struct {
	X    float64
	Text string
}

// Plot geometry shared by all charts.
const (
	chartW      = 640.0
	chartH      = 200.0
	chartLeft   = 44.0
	chartRight  = 8.0
	chartTop    = 12.0
	chartBottom = 22.0
)

func newChart(label string) chart {
	return chart{W: chartW, H: chartH, Label: label, Left: chartLeft, Right: chartW - chartRight,
		YTop: chartTop, Base: chartH - chartBottom}
}

// rateChart draws pages per second in each bin of the timeline.
func rateChart(bins []rateBin, width time.Duration) chart {
	c := newChart("pages per second over the crawl")
	if len(bins) == 0 || width <= 0 {
		c.Empty = true
		return c
	}
	top := 0.0
	rates := make([]float64, len(bins))
	for i, b := range bins {
		rates[i] = float64(b.Pages) / width.Seconds()
		top = max(top, rates[i])
	}
	bw := (c.Right - c.Left) / float64(len(bins))
	for i, r := range rates {
		h := 0.0
		if top > 0 {
			h = (c.Base - c.YTop) * r / top
		}
		c.Bars = append(c.Bars, bar{X: c.Left + float64(i)*bw + bw*0.1, Y: c.Base - h, W: bw * 0.8, H: h,
			Tip: fmt.Sprintf("%s: %d pages, %.2f pages/s", bins[i].Start.UTC().Format(time.TimeOnly), bins[i].Pages, r)})
	}
	c.YMax = fmt.Sprintf("%.3g/s", top)
	end := bins[len(bins)-1].Start.Add(width)
	c.XLabels = []axisLabel{
		{X: c.Left, Text: bins[0].Start.UTC().Format(time.TimeOnly)},
		{X: c.Right, Text: end.UTC().Format(time.TimeOnly)},
	}
	return c
}

// histChart draws counts[0..hi] with the threshold k marked between k and
// k+1; bars above k take the second colour.
func histChart(counts []int, hi, k int, what string) chart {
	c := newChart(what + " by distance in bits")
	top := 0
	for _, n := range counts[:hi+1] {
		top = max(top, n)
	}
	if top == 0 {
		c.Empty = true
	}
	bw := (c.Right - c.Left) / float64(hi+1)
	for d := 0; d <= hi; d++ {
		h := 0.0
		if top > 0 {
			h = (c.Base - c.YTop) * float64(counts[d]) / float64(top)
		}
		c.Bars = append(c.Bars, bar{X: c.Left + float64(d)*bw + bw*0.1, Y: c.Base - h, W: bw * 0.8, H: h,
			Tip: fmt.Sprintf("%d bits: %d %s", d, counts[d], what), Over: d > k})
	}
	step := max(1, (hi+1)/16)
	for d := 0; d <= hi; d += step {
		c.XLabels = append(c.XLabels, axisLabel{X: c.Left + (float64(d)+0.5)*bw, Text: strconv.Itoa(d)})
	}
	c.YMax = strconv.Itoa(top)
	if k >= 0 && k <= hi {
		c.HasK, c.KX, c.KLabel = true, c.Left+float64(k+1)*bw, fmt.Sprintf("k = %d", k)
	}
	return c
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"num":  func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"fp":   func(x uint64) string { return fmt.Sprintf("%016x", x) },
	"time": func(t time.Time) string { return t.UTC().Format(time.DateTime) },
	"add":  func(a, b int) int { return a + b },
}
