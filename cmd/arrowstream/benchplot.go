package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"strings"

	"github.com/arrowstream/arrowstream/bench/harness"
)

var (
	colBG        = color.RGBA{255, 255, 255, 255}
	colText      = color.RGBA{20, 20, 20, 255}
	colOurs      = color.RGBA{31, 119, 180, 255}
	colPeer      = color.RGBA{255, 127, 14, 255}
	colPublished = color.RGBA{160, 160, 160, 255}
	colGrid      = color.RGBA{225, 225, 225, 255}
)

// plotRow is one bar.
type plotRow struct {
	label string
	value float64
	text  string
	col   color.Color
}

func rowColor(f harness.Figure) color.Color {
	switch {
	case f.Published:
		return colPublished
	case f.Peer != "":
		return colPeer
	}
	return colOurs
}

func rowLabel(f harness.Figure, kind string) string {
	who := f.Peer
	if who == "" {
		who = "arrowstream"
	}
	if kind != "" {
		return f.Workload + " " + kind + " " + who
	}
	return f.Workload + " " + who
}

// plotFigures draws two panels of horizontal bars on log scales:
// throughput per core (Arrowstream blue, peers measured in the same run
// orange, published figures grey) and latencies in ms.
func plotFigures(figs []harness.Figure) *image.RGBA {
	var thr, lat []plotRow
	for _, f := range figs {
		if f.Value <= 0 || math.IsNaN(f.Value) || math.IsInf(f.Value, 0) {
			continue
		}
		switch figureKind(f) {
		case "throughput":
			thr = append(thr, plotRow{rowLabel(f, ""), f.Value, humanRate(f.Value) + " " + f.Unit, rowColor(f)})
		case "p50", "p99":
			lat = append(lat, plotRow{rowLabel(f, figureKind(f)), f.Value, fmt.Sprintf("%.2f %s", f.Value, f.Unit), rowColor(f)})
		}
	}
	const (
		width, scale, rowH, margin = 1200, 2, 26, 16
		labelW                     = 560
		barMax                     = width - labelW - 2*margin - 260
	)
	height := margin*2 + (len(thr)+len(lat))*rowH + 4*rowH
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), &image.Uniform{colBG}, image.Point{}, draw.Src)
	y := margin
	panel := func(title string, rows []plotRow, logScale bool) {
		drawText(img, margin, y, title, colText, scale)
		y += rowH + 4
		maxV, minV := 0.0, math.Inf(1)
		for _, r := range rows {
			maxV, minV = max(maxV, r.value), min(minV, r.value)
		}
		lo := 0.0
		if logScale && minV > 0 {
			lo = math.Floor(math.Log10(minV)) - 0.3
		}
		length := func(v float64) int {
			if logScale {
				hi := math.Log10(maxV) + 0.05
				return int(float64(barMax) * (math.Log10(v) - lo) / (hi - lo))
			}
			return int(float64(barMax) * v / maxV)
		}
		x0 := margin + labelW
		for _, r := range rows {
			drawText(img, x0-textWidth(r.label, scale)-8, y+3, r.label, colText, scale)
			n := max(length(r.value), 2)
			draw.Draw(img, image.Rect(x0, y+1, x0+n, y+rowH-5), &image.Uniform{r.col}, image.Point{}, draw.Src)
			drawText(img, x0+n+8, y+3, r.text, colText, scale)
			y += rowH
		}
		draw.Draw(img, image.Rect(x0-1, y-len(rows)*rowH, x0, y), &image.Uniform{colGrid}, image.Point{}, draw.Src)
		y += rowH
	}
	panel("throughput per core, log scale (blue: arrowstream, orange: same-run peers, grey: published)", thr, true)
	panel("latency in ms, log scale (ysb, nexmark: input accepted to rows visible; flight: small doget)", lat, true)
	return img
}

// humanRate prints 1234567 as 1.23M.
func humanRate(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fK", v/1e3)
	}
	return fmt.Sprintf("%.2f", v)
}

// writePlot draws figs into a PNG file at path.
func writePlot(path string, figs []harness.Figure) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, plotFigures(figs)); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// readFigures reads JSON lines of figures (the output of --json), naming
// the line that does not parse.
func readFigures(r io.Reader, name string) ([]harness.Figure, error) {
	var out []harness.Figure
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var f harness.Figure
		if err := json.Unmarshal([]byte(text), &f); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		if f.Workload == "" || f.Figure == "" || math.IsNaN(f.Value) || math.IsInf(f.Value, 0) {
			return nil, fmt.Errorf("%s line %d: a figure needs a workload, a figure name and a finite value", name, line)
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
