// Command benchchart draws the chart of BENCHMARKS.md from bench/results.json: throughput by
// case for our relay, the artemis transfer variants and the brokers' raw limit, and the
// relay's peak memory by queue size. It lives in a module of its own so that the provider's
// go.mod never gains plotting dependencies; scripts/bench.sh runs it after the benchmark.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// results holds the fields of bench/results.json that the chart needs. The benchmark
// (tools/bench) owns the format; unknown fields are ignored.
type results struct {
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
	Machine struct {
		Date   string `json:"date"`
		Commit string `json:"commit"`
	} `json:"machine"`
	Contenders []struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"contenders"`
	Cases []struct {
		Name     string  `json:"name"`
		Count    int     `json:"count"`
		Size     int     `json:"size"`
		Limit    float64 `json:"limit_msgs_per_s"`
		LimitVia string  `json:"limit_protocol"`
		Summary  []struct {
			Contender  string  `json:"contender"`
			OKRuns     int     `json:"ok_runs"`
			MsgsPerSec float64 `json:"msgs_per_s"`
			PeakRSSMiB float64 `json:"peak_rss_mib"`
			MaxRSSMiB  float64 `json:"max_peak_rss_mib"`
		} `json:"summary"`
	} `json:"cases"`
}

// shortNames label the bars; the legend under the chart is BENCHMARKS.md's tables.
var shortNames = map[string]string{
	"ours":                  "ours",
	"ours-apply":            "ours (apply)",
	"ours-copy":             "ours (copy)",
	"transfer-core-default": "core dflt",
	"transfer-core-tuned":   "core tuned",
	"transfer-amqp-default": "amqp dflt",
	"transfer-amqp-tuned":   "amqp tuned",
}

var (
	colorOurs     = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	colorTransfer = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	colorLimit    = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	colorTarget   = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// rssGoalMiB is the memory target of issue #6 for 1 KiB messages.
const rssGoalMiB = 64

func main() {
	in := flag.String("in", "bench/results.json", "the benchmark results")
	out := flag.String("out", "bench/throughput.png", "the PNG to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("reading the results: %w", err)
	}
	var res results
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("reading the results %s: %w", in, err)
	}
	if len(res.Cases) == 0 {
		return errors.New("the results hold no case")
	}
	const dpi = 96
	cols := len(res.Cases)
	widthPx := math.Max(1000, float64(cols)*280)
	heightPx := 900.0
	w, h := vg.Length(widthPx)*vg.Inch/dpi, vg.Length(heightPx)*vg.Inch/dpi
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	// Top 60%: throughput panels, one per case, each on its own scale (1 KiB and 10 MiB
	// messages differ by four orders of magnitude in msg/s).
	top := draw.Crop(dc, 0, 0, h*0.4, 0)
	panels := make([]*plot.Plot, cols)
	for i := range res.Cases {
		if panels[i], err = throughputPanel(res, i); err != nil {
			return err
		}
	}
	tiles := draw.Tiles{Rows: 1, Cols: cols, PadX: vg.Millimeter * 3, PadY: vg.Millimeter * 3,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, top)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}

	// Bottom 40%: peak memory by case.
	bottom := draw.Crop(dc, vg.Millimeter*2, -vg.Millimeter*2, vg.Millimeter*2, -(h*0.6 + vg.Millimeter*2))
	rss, err := rssPanel(res)
	if err != nil {
		return err
	}
	rss.Draw(bottom)

	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the chart %s: %w", out, err)
	}
	return f.Close()
}

// throughputPanel draws one case: a bar per contender and one for the raw limit, in msg/s.
func throughputPanel(res results, i int) (*plot.Plot, error) {
	c := res.Cases[i]
	p := plot.New()
	p.Title.Text = c.Name
	if i == 0 {
		p.Y.Label.Text = fmt.Sprintf("msg/s (median; profile %s)", res.Profile.Name)
	}
	var names []string
	add := func(name string, v float64, col color.Color) error {
		bar, err := plotter.NewBarChart(plotter.Values{v}, vg.Points(16))
		if err != nil {
			return fmt.Errorf("case %s: %w", c.Name, err)
		}
		bar.XMin = float64(len(names))
		bar.Color = col
		bar.LineStyle.Width = 0
		p.Add(bar)
		names = append(names, name)
		return nil
	}
	for _, s := range c.Summary {
		name := shortNames[s.Contender]
		if name == "" {
			name = s.Contender
		}
		col := color.Color(colorTransfer)
		if strings.HasPrefix(s.Contender, "ours") { // ours, ours-apply, ours-copy: our engine, however it runs
			col = colorOurs
		}
		v := s.MsgsPerSec
		if s.OKRuns == 0 {
			name, v = name+" FAILED", 0
		}
		if err := add(name, v, col); err != nil {
			return nil, err
		}
	}
	if c.Limit > 0 {
		if err := add("limit "+c.LimitVia, c.Limit, colorLimit); err != nil {
			return nil, err
		}
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	p.Y.Min = 0
	p.Y.Max *= 1.1 // room above the highest bar
	return p, nil
}

// rssPanel draws our relay's highest peak RSS per case beside the artemis transfer JVM's
// (core, default commit), with the 64 MiB goal of the 1 KiB cases.
func rssPanel(res results) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Peak RSS by case (ours: relay process VmHWM, highest run; artemis transfer: JVM, sampled)"
	p.Y.Label.Text = "MiB"
	var ours, jvm plotter.Values
	var names []string
	for _, c := range res.Cases {
		names = append(names, c.Name)
		var o, j float64
		for _, s := range c.Summary {
			switch {
			case s.OKRuns == 0:
			case s.Contender == "ours":
				o = s.MaxRSSMiB
			case s.Contender == "transfer-core-default":
				j = s.PeakRSSMiB
			}
		}
		ours, jvm = append(ours, o), append(jvm, j)
	}
	width := vg.Points(22)
	barOurs, err := plotter.NewBarChart(ours, width)
	if err != nil {
		return nil, fmt.Errorf("memory chart: %w", err)
	}
	barOurs.Color, barOurs.Offset, barOurs.LineStyle.Width = colorOurs, -width/2, 0
	barJVM, err := plotter.NewBarChart(jvm, width)
	if err != nil {
		return nil, fmt.Errorf("memory chart: %w", err)
	}
	barJVM.Color, barJVM.Offset, barJVM.LineStyle.Width = colorTransfer, width/2, 0
	goal, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: rssGoalMiB}, {X: float64(len(names)) - 0.5, Y: rssGoalMiB}})
	if err != nil {
		return nil, fmt.Errorf("memory chart: %w", err)
	}
	goal.Color, goal.Dashes = colorTarget, []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(barOurs, barJVM, goal)
	p.Legend.Add("ours (relay)", barOurs)
	p.Legend.Add("artemis transfer core, default commit (JVM)", barJVM)
	p.Legend.Add(fmt.Sprintf("%d MiB goal (1 KiB messages)", rssGoalMiB), goal)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Millimeter * 4
	p.NominalX(names...)
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max, rssGoalMiB) * 1.4 // room for the legend above the bars
	return p, nil
}
